// rae_watchdog: a deadline watchdog for guarded calls with ONE long-lived thread per isolate.
// Consumes: guardedCall(fn, a0, a1, a2, a3, a4, a5, timeoutMs) from JS. Produces: fn's return
// value, fn's own exception rethrown (a wasm trap stays a WebAssembly.RuntimeError), or an Error
// with code ERR_WATCHDOG_TIMEOUT when the deadline passed and the call was terminated.
//
// Node's vm timeout starts and joins a thread per call (node_watchdog.cc: a uv loop + timer on a
// fresh thread, TerminateExecution on expiry). Here the thread lives as long as the environment:
// arming stores a deadline and a new generation under a mutex (waking the thread only when it
// sleeps past the new deadline); the thread terminates the isolate only while that same
// generation is still armed, under the mutex. After disarming, a fired generation is always
// cancelled (CancelTerminateExecution), also when fn had already returned, so a late
// termination never reaches later JS.
#include <node.h>
#include <v8.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

/** One watchdog per environment (main thread or worker): its thread and its armed call. */
class Watchdog {
 public:
  explicit Watchdog(v8::Isolate* isolate) : isolate_(isolate), thread_([this] { Run(); }) {}

  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

  /** Arms for one call; returns its generation. */
  uint64_t Arm(double timeout_ms) {
    const auto deadline = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(timeout_ms * 1000.0));
    bool wake;
    uint64_t gen;
    {
      std::lock_guard<std::mutex> lock(mu_);
      gen = ++generation_;
      armed_ = true;
      fired_ = false;
      deadline_ = deadline;
      last_timeout_ = deadline - Clock::now();
      // The thread re-reads the deadline whenever it wakes: only a sleep past it needs a wake-up.
      wake = sleeping_forever_ || deadline < sleep_until_;
    }
    if (wake) cv_.notify_one();
    return gen;
  }

  /** Disarms; true when the watchdog terminated this generation (a cancel is then due). */
  bool Disarm(uint64_t gen) {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
    const bool fired = fired_ && fired_gen_ == gen;
    fired_ = false;
    return fired;
  }

  /** True while a guarded call is in progress on this isolate (no nesting). */
  bool busy = false;

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    int idle_wakes = 0;
    while (!stopping_) {
      const auto now = Clock::now();
      if (armed_ && !fired_ && now >= deadline_) {
        fired_ = true;
        fired_gen_ = generation_;
        isolate_->TerminateExecution();
        continue;
      }
      if (armed_ && !fired_) {
        idle_wakes = 0;
        Sleep(lock, deadline_);
      } else if (idle_wakes < 3) {
        // Not armed: doze one timeout ahead, so the next arm (same timeout) needs no wake-up.
        idle_wakes++;
        Sleep(lock, now + last_timeout_);
      } else {
        sleeping_forever_ = true;
        cv_.wait(lock);
        sleeping_forever_ = false;
        idle_wakes = 0;
      }
    }
  }

  void Sleep(std::unique_lock<std::mutex>& lock, Clock::time_point until) {
    sleep_until_ = until;
    cv_.wait_until(lock, until);
    sleep_until_ = Clock::time_point::min();
  }

  v8::Isolate* const isolate_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool armed_ = false;
  bool fired_ = false;
  bool sleeping_forever_ = false;
  uint64_t generation_ = 0;
  uint64_t fired_gen_ = 0;
  Clock::time_point deadline_{};
  Clock::time_point sleep_until_ = Clock::time_point::min();
  Clock::duration last_timeout_ = std::chrono::milliseconds(1);
  std::thread thread_;  // last: started once every field above is initialised
};

void Throw(v8::Isolate* isolate, const char* code, const char* message) {
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::Local<v8::Value> err = v8::Exception::Error(v8::String::NewFromUtf8(isolate, message).ToLocalChecked());
  err.As<v8::Object>()->Set(ctx, v8::String::NewFromUtf8Literal(isolate, "code"), v8::String::NewFromUtf8(isolate, code).ToLocalChecked()).Check();
  isolate->ThrowException(err);
}

/** guardedCall(fn, a0..a5, timeoutMs): fn(a0..a5) under the watchdog. */
void GuardedCall(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  auto* dog = static_cast<Watchdog*>(info.Data().As<v8::External>()->Value());
  if (info.Length() != 8 || !info[0]->IsFunction() || !info[7]->IsNumber()) {
    return Throw(isolate, "ERR_INVALID_ARG_TYPE", "guardedCall(fn, a0, a1, a2, a3, a4, a5, timeoutMs)");
  }
  const double timeout_ms = info[7].As<v8::Number>()->Value();
  if (!(timeout_ms > 0) || timeout_ms > 3.6e6) {
    return Throw(isolate, "ERR_OUT_OF_RANGE", "guardedCall: timeoutMs must be in (0, 3600000]");
  }
  if (dog->busy) return Throw(isolate, "ERR_WATCHDOG_NESTED", "guardedCall: nested guarded calls are not supported");
  v8::Local<v8::Value> argv[6] = {info[1], info[2], info[3], info[4], info[5], info[6]};
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::MaybeLocal<v8::Value> result;
  v8::Local<v8::Value> thrown;  // fn's own exception, thrown on once the TryCatch is gone
  bool timed_out = false;
  {
    v8::TryCatch tc(isolate);
    dog->busy = true;
    const uint64_t gen = dog->Arm(timeout_ms);
    result = info[0].As<v8::Function>()->Call(ctx, v8::Undefined(isolate), 6, argv);
    const bool fired = dog->Disarm(gen);
    dog->busy = false;
    if (fired) {
      // Ours: cancel it whether or not it landed inside fn (a late one is still pending), and
      // forget the termination so the TryCatch does not pass it on.
      const bool terminated = tc.HasTerminated();
      if (tc.HasCaught() && !terminated) thrown = tc.Exception();  // a trap just at the deadline
      isolate->CancelTerminateExecution();
      tc.Reset();
      timed_out = terminated || (result.IsEmpty() && thrown.IsEmpty());
    } else if (result.IsEmpty()) {
      // fn's exception (a trap), or a termination that is not ours (worker.terminate()): both go on.
      if (tc.HasCaught() || tc.HasTerminated()) tc.ReThrow();
      return;
    }
  }
  if (timed_out) return Throw(isolate, "ERR_WATCHDOG_TIMEOUT", "guarded call stopped by the watchdog");
  if (!thrown.IsEmpty()) {
    isolate->ThrowException(thrown);
    return;
  }
  info.GetReturnValue().Set(result.ToLocalChecked());
}

void Cleanup(void* arg) { delete static_cast<Watchdog*>(arg); }

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  auto* dog = new Watchdog(isolate);
  node::AddEnvironmentCleanupHook(isolate, Cleanup, dog);
  v8::Local<v8::FunctionTemplate> tpl = v8::FunctionTemplate::New(isolate, GuardedCall, v8::External::New(isolate, dog));
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "guardedCall"), tpl->GetFunction(context).ToLocalChecked()).Check();
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "kind"), v8::String::NewFromUtf8Literal(isolate, "native")).Check();
}
