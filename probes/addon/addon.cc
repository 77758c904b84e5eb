// SPDX-License-Identifier: Apache-2.0
/*
 * node-addon-api binding of the capture core (capture.c): notify-then-pull delivery.
 *
 * A background thread waits on the ring buffer (edge-triggered epoll, ending on a kernel
 * watermark wakeup or on a timeout) and, when records are queued and JS is not already told,
 * wakes JS once through a ThreadSafeFunction. JS then drains with poll(view), which copies whole
 * records into the caller's buffer; a poll that finds the ring empty re-arms the notification.
 *
 * Exports: abiVersion, maxRecord, layout(), checkKernel(), clocks(), open(options) -> Capture
 * with watch(fn), poll(view[, meta]), setInterestingSyscalls(ids), stats(), ref(), unref(), close();
 * ingest(...) and ingestAbi: the native kernel-record translator (ingest.c), no probe needed;
 * releaseFreeMemory(): the C library's free heap pages back to the kernel, no probe needed.
 */
#include <napi.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>
#include <ctime>
#include <malloc.h>
#include <memory>
#include <thread>
#include <unistd.h>
#include <vector>

extern "C" {
#include "capture.h"
#include "ingest.h"
#include "../src/events.h"
#include "../src/syscalls.h"
}

namespace {

Napi::Error MakeError(Napi::Env env, const rae_capture_error &e)
{
	Napi::Error err = Napi::Error::New(env, e.message);
	err.Set("code", Napi::String::New(env, e.code));
	err.Set("errno", Napi::Number::New(env, e.err));
	return err;
}

class Capture : public Napi::ObjectWrap<Capture> {
public:
	static Napi::Function Init(Napi::Env env)
	{
		return DefineClass(env, "Capture",
				   { InstanceMethod("watch", &Capture::Watch), InstanceMethod("poll", &Capture::Poll),
				     InstanceMethod("setInterestingSyscalls", &Capture::SetSyscalls),
				     InstanceMethod("setProcessNames", &Capture::SetProcNames),
				     InstanceMethod("stats", &Capture::Stats), InstanceMethod("ref", &Capture::Ref),
				     InstanceMethod("unref", &Capture::Unref), InstanceMethod("close", &Capture::Close) });
	}

	Capture(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Capture>(info)
	{
		Napi::Env env = info.Env();
		Napi::Object o = info.Length() > 0 && info[0].IsObject() ? info[0].As<Napi::Object>() : Napi::Object::New(env);
		rae_capture_opts opts{};
		opts.self_tgid = NumberOr(o, "ignorePid", 0);
		opts.ring_bytes = NumberOr(o, "ringBufferBytes", 32u << 20);
		opts.wake_bytes = NumberOr(o, "wakeupBytes", 256u << 10);
		opts.no_env = o.Has("env") && o.Get("env").IsBoolean() && !o.Get("env").As<Napi::Boolean>().Value() ? 1 : 0;
		opts.snaplen = static_cast<uint32_t>(NumberOr(o, "snaplen", 80));
		maxLatencyMs_ = static_cast<int>(NumberOr(o, "maxLatencyMs", 10));
		uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
		if (opts.ring_bytes < page || (opts.ring_bytes & (opts.ring_bytes - 1)) || opts.ring_bytes > (1ull << 31))
			throw Napi::RangeError::New(env, "ringBufferBytes must be a power of two between the page size and 2 GiB");
		if (opts.wake_bytes == 0 || opts.wake_bytes >= opts.ring_bytes)
			throw Napi::RangeError::New(env, "wakeupBytes must be positive and smaller than ringBufferBytes");
		if (opts.snaplen > RAE_MAX_DATA)
			throw Napi::RangeError::New(env, "snaplen must be between 0 and " + std::to_string(RAE_MAX_DATA));
		if (maxLatencyMs_ < 1 || maxLatencyMs_ > 1000)
			throw Napi::RangeError::New(env, "maxLatencyMs must be between 1 and 1000");
		rae_capture_error e;
		cap_ = rae_capture_open(&opts, &e);
		if (!cap_)
			throw MakeError(env, e);
	}

	~Capture() override { Shutdown(); }

private:
	static uint64_t NumberOr(Napi::Object o, const char *key, uint64_t dflt)
	{
		Napi::Value v = o.Get(key);
		if (v.IsUndefined())
			return dflt;
		if (!v.IsNumber())
			throw Napi::TypeError::New(o.Env(), std::string(key) + " must be a number");
		double d = v.As<Napi::Number>().DoubleValue();
		if (d < 0 || d != static_cast<double>(static_cast<uint64_t>(d)))
			throw Napi::RangeError::New(o.Env(), std::string(key) + " must be a non-negative integer");
		return static_cast<uint64_t>(d);
	}

	void Open(Napi::Env env) const
	{
		if (!cap_)
			throw Napi::Error::New(env, "capture is closed");
	}

	// watch(fn): fn() is called on the JS thread when records are queued; once per empty poll().
	Napi::Value Watch(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		Open(env);
		if (!info[0].IsFunction())
			throw Napi::TypeError::New(env, "watch(fn) needs a function");
		if (watching_)
			throw Napi::Error::New(env, "watch() was already called");
		tsfn_ = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "rae-capture", 1, 1);
		watching_ = true;
		armed_.store(true);
		thread_ = std::thread([this] { Loop(); });
		return env.Undefined();
	}

	void Loop()
	{
		for (;;) {
			if (rae_capture_wait(cap_, maxLatencyMs_) < 0)
				return;
			// Consume on every wakeup and on every timeout: watermark wakeups can be missed.
			if (armed_.load() && rae_capture_pending(cap_)) {
				armed_.store(false);
				std::shared_ptr<std::atomic<bool>> open = open_;
				tsfn_.NonBlockingCall([open](Napi::Env, Napi::Function fn) {
					if (open->load()) // a call queued just before close() is dropped
						fn.Call({});
				});
			}
		}
	}

	// poll(view[, meta]): bytes of whole records copied into view; meta[0] = record count.
	Napi::Value Poll(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		Open(env);
		if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
			throw Napi::TypeError::New(env, "poll(view) needs a Uint8Array");
		Napi::Uint8Array view = info[0].As<Napi::Uint8Array>();
		if (view.ByteLength() < RAE_MAX_RECORD)
			throw Napi::RangeError::New(env, "poll(view): view must hold at least maxRecord bytes");
		uint32_t records = 0;
		size_t bytes = rae_capture_poll(cap_, view.Data(), view.ByteLength(), &records);
		if (info.Length() > 1 && info[1].IsTypedArray()) {
			Napi::TypedArray meta = info[1].As<Napi::TypedArray>();
			if (meta.TypedArrayType() == napi_uint32_array && meta.ElementLength() > 0)
				meta.As<Napi::Uint32Array>()[0] = records;
		}
		if (bytes == 0)
			armed_.store(true);
		return Napi::Number::New(env, static_cast<double>(bytes));
	}

	/* An array argument of syscall ids (undefined = none). */
	static std::vector<uint32_t> SyscallIds(Napi::Env env, Napi::Value arg)
	{
		std::vector<uint32_t> ids;
		if (arg.IsUndefined())
			return ids;
		if (!arg.IsArray())
			throw Napi::TypeError::New(env, "setInterestingSyscalls(ids, dataIds) needs arrays of numbers");
		Napi::Array a = arg.As<Napi::Array>();
		for (uint32_t i = 0; i < a.Length(); i++) {
			Napi::Value v = a.Get(i);
			if (!v.IsNumber())
				throw Napi::TypeError::New(env, "setInterestingSyscalls(ids, dataIds): every id must be a number");
			int64_t id = v.As<Napi::Number>().Int64Value();
			if (id < 0 || id >= RAE_NR_SYSCALLS)
				throw Napi::RangeError::New(env, "setInterestingSyscalls(ids, dataIds): id " + std::to_string(id) +
									 " is outside 0.." + std::to_string(RAE_NR_SYSCALLS - 1));
			ids.push_back(static_cast<uint32_t>(id));
		}
		return ids;
	}

	// setInterestingSyscalls(ids, dataIds?): the syscalls recorded, and those of them whose I/O buffer is.
	Napi::Value SetSyscalls(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		Open(env);
		if (!info[0].IsArray())
			throw Napi::TypeError::New(env, "setInterestingSyscalls(ids, dataIds) needs arrays of numbers");
		std::vector<uint32_t> ids = SyscallIds(env, info[0]), data = SyscallIds(env, info[1]);
		// every open recorded first, so that no open is filtered against a trie being rewritten
		size_t n = rae_capture_set_syscalls(cap_, ids.data(), ids.size(), data.data(), data.size(), nullptr, 0);
		if (info.Length() < 3 || info[2].IsUndefined())
			return Napi::Number::New(env, static_cast<double>(n));
		if (!info[2].IsObject())
			throw Napi::TypeError::New(env, "setInterestingSyscalls(ids, dataIds, openPaths): openPaths needs {syscalls, exact, prefixes}");
		Napi::Object o = info[2].As<Napi::Object>();
		std::vector<uint32_t> opens = SyscallIds(env, o.Get("syscalls"));
		std::vector<std::string> texts;
		std::vector<uint8_t> exact;
		for (const char *kind : { "exact", "prefixes" }) {
			Napi::Value v = o.Get(kind);
			if (!v.IsArray())
				throw Napi::TypeError::New(env, "setInterestingSyscalls(ids, dataIds, openPaths): openPaths.exact and .prefixes need arrays of strings");
			Napi::Array a = v.As<Napi::Array>();
			for (uint32_t i = 0; i < a.Length(); i++) {
				if (!a.Get(i).IsString())
					throw Napi::TypeError::New(env, "setInterestingSyscalls(ids, dataIds, openPaths): every path must be a string");
				texts.push_back(a.Get(i).As<Napi::String>().Utf8Value());
				exact.push_back(kind[0] == 'e');
			}
		}
		// the process names whose opens are kept whatever their path (none when absent)
		std::vector<std::string> names = Strings(env, o.Get("names"), "setInterestingSyscalls(ids, dataIds, openPaths): openPaths.names needs an array of strings");
		Views paths(texts), name_views(names);
		int err = rae_capture_set_open_paths(cap_, paths.ptrs.data(), paths.lens.data(), exact.data(), texts.size(), name_views.ptrs.data(),
						     name_views.lens.data(), names.size());
		if (err != 0)
			throw Napi::Error::New(env, std::string("setInterestingSyscalls: the open paths were not set (every open stays recorded): ") + strerror(-err));
		return Napi::Number::New(env, static_cast<double>(rae_capture_set_syscalls(cap_, ids.data(), ids.size(), data.data(), data.size(), opens.data(), opens.size())));
	}

	// The bytes and lengths of `strings` as capture.c's setters take them (valid while `strings` is).
	struct Views {
		std::vector<const char *> ptrs;
		std::vector<uint32_t> lens;
		explicit Views(const std::vector<std::string> &strings)
		{
			for (const std::string &t : strings) {
				ptrs.push_back(t.data());
				lens.push_back(static_cast<uint32_t>(t.size()));
			}
		}
	};

	// The strings of array `v` (none when undefined); throws `what` otherwise.
	static std::vector<std::string> Strings(Napi::Env env, Napi::Value v, const char *what)
	{
		std::vector<std::string> out;
		if (v.IsUndefined())
			return out;
		if (!v.IsArray())
			throw Napi::TypeError::New(env, what);
		Napi::Array a = v.As<Napi::Array>();
		for (uint32_t i = 0; i < a.Length(); i++) {
			if (!a.Get(i).IsString())
				throw Napi::TypeError::New(env, what);
			out.push_back(a.Get(i).As<Napi::String>().Utf8Value());
		}
		return out;
	}

	// setProcessNames(pids, names): the /proc scan's comm of each process, for the probe's per-process names.
	Napi::Value SetProcNames(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		Open(env);
		const char *what = "setProcessNames(pids, names) needs an array of numbers and one of Buffers as long";
		if (!info[0].IsArray() || !info[1].IsArray())
			throw Napi::TypeError::New(env, what);
		Napi::Array a = info[0].As<Napi::Array>(), b = info[1].As<Napi::Array>();
		if (a.Length() != b.Length())
			throw Napi::TypeError::New(env, what);
		std::vector<uint32_t> pids;
		std::vector<std::string> names; // the comm's bytes as read, not text
		for (uint32_t i = 0; i < a.Length(); i++) {
			if (!a.Get(i).IsNumber() || !b.Get(i).IsBuffer())
				throw Napi::TypeError::New(env, what);
			pids.push_back(a.Get(i).As<Napi::Number>().Uint32Value());
			Napi::Buffer<char> buf = b.Get(i).As<Napi::Buffer<char>>();
			names.emplace_back(buf.Data(), buf.Length());
		}
		Views views(names);
		int err = rae_capture_set_proc_names(cap_, pids.data(), views.ptrs.data(), views.lens.data(), pids.size());
		if (err != 0)
			throw Napi::Error::New(env, std::string("setProcessNames: ") + strerror(-err));
		return env.Undefined();
	}

	Napi::Value Stats(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		Open(env);
		rae_counters c;
		uint64_t queued, size;
		rae_capture_counters(cap_, &c);
		rae_capture_ring(cap_, &queued, &size);
		Napi::Object o = Napi::Object::New(env);
		o.Set("emitted", static_cast<double>(c.emitted));
		o.Set("lost", static_cast<double>(c.lost));
		o.Set("seen", static_cast<double>(c.seen));
		o.Set("truncated", static_cast<double>(c.truncated));
		o.Set("queuedBytes", static_cast<double>(queued));
		o.Set("ringBytes", static_cast<double>(size));
		return o;
	}

	Napi::Value Ref(const Napi::CallbackInfo &info)
	{
		if (watching_)
			tsfn_.Ref(info.Env());
		return info.Env().Undefined();
	}

	Napi::Value Unref(const Napi::CallbackInfo &info)
	{
		if (watching_)
			tsfn_.Unref(info.Env());
		return info.Env().Undefined();
	}

	Napi::Value Close(const Napi::CallbackInfo &info)
	{
		Shutdown();
		return info.Env().Undefined();
	}

	void Shutdown()
	{
		if (!cap_)
			return;
		open_->store(false);
		if (watching_) {
			rae_capture_interrupt(cap_);
			thread_.join();
			tsfn_.Release();
			watching_ = false;
		}
		rae_capture_close(cap_);
		cap_ = nullptr;
	}

	rae_capture *cap_ = nullptr;
	int maxLatencyMs_ = 10;
	bool watching_ = false;
	std::atomic<bool> armed_{ false };
	std::shared_ptr<std::atomic<bool>> open_ = std::make_shared<std::atomic<bool>>(true);
	std::thread thread_;
	Napi::ThreadSafeFunction tsfn_;
};

#define FIELD(obj, type, field) obj.Set(#field, static_cast<double>(offsetof(type, field)))

// layout(): offsets and sizes as the C compiler lays out events.h, for the layout test.
Napi::Value Layout(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	Napi::Object o = Napi::Object::New(env);
	Napi::Object hdr = Napi::Object::New(env), sys = Napi::Object::New(env), proc = Napi::Object::New(env),
		     ex = Napi::Object::New(env), sa = Napi::Object::New(env), sizes = Napi::Object::New(env);
	FIELD(hdr, rae_hdr, ts_ns); FIELD(hdr, rae_hdr, len); FIELD(hdr, rae_hdr, kind); FIELD(hdr, rae_hdr, nr);
	FIELD(hdr, rae_hdr, pid); FIELD(hdr, rae_hdr, tid); FIELD(hdr, rae_hdr, uid); FIELD(hdr, rae_hdr, gid);
	FIELD(hdr, rae_hdr, cgroup_id); FIELD(hdr, rae_hdr, ret);
	FIELD(sys, rae_syscall, args); FIELD(sys, rae_syscall, aux); FIELD(sys, rae_syscall, sflags); FIELD(sys, rae_syscall, sock_type);
	FIELD(sys, rae_syscall, path); FIELD(sys, rae_syscall, path2); FIELD(sys, rae_syscall, dir);
	FIELD(sys, rae_syscall, dir2); FIELD(sys, rae_syscall, peer); FIELD(sys, rae_syscall, local);
	FIELD(sys, rae_syscall, data);
	FIELD(proc, rae_proc, ppid); FIELD(proc, rae_proc, vpid); FIELD(proc, rae_proc, vtid); FIELD(proc, rae_proc, sid);
	FIELD(proc, rae_proc, pgid); FIELD(proc, rae_proc, ruid); FIELD(proc, rae_proc, rgid);
	FIELD(proc, rae_proc, loginuid); FIELD(proc, rae_proc, tty); FIELD(proc, rae_proc, pflags);
	FIELD(proc, rae_proc, start_ns); FIELD(proc, rae_proc, pidns); FIELD(proc, rae_proc, mntns);
	FIELD(proc, rae_proc, comm); FIELD(proc, rae_proc, exe); FIELD(proc, rae_proc, exepath);
	FIELD(proc, rae_proc, args); FIELD(proc, rae_proc, cwd); FIELD(proc, rae_proc, cgroup);
	FIELD(proc, rae_proc, cap_inheritable); FIELD(proc, rae_proc, cap_permitted); FIELD(proc, rae_proc, cap_effective);
	FIELD(proc, rae_proc, env); FIELD(proc, rae_proc, exe_ino_ctime); FIELD(proc, rae_proc, exe_ino_mtime);
	FIELD(ex, rae_exit, xflags);
	Napi::Object caps = Napi::Object::New(env);
	FIELD(caps, rae_caps, cap_inheritable); FIELD(caps, rae_caps, cap_permitted); FIELD(caps, rae_caps, cap_effective);
	o.Set("caps", caps);
	FIELD(sa, rae_sockaddr, family); FIELD(sa, rae_sockaddr, port); FIELD(sa, rae_sockaddr, addr);
	sizes.Set("hdr", static_cast<double>(sizeof(rae_hdr)));
	sizes.Set("syscall", static_cast<double>(sizeof(rae_syscall)));
	sizes.Set("proc", static_cast<double>(sizeof(rae_proc)));
	sizes.Set("exit", static_cast<double>(sizeof(rae_exit)));
	sizes.Set("caps", static_cast<double>(sizeof(rae_caps)));
	sizes.Set("sockaddr", static_cast<double>(sizeof(rae_sockaddr)));
	sizes.Set("str", static_cast<double>(sizeof(rae_str)));
	sizes.Set("stats", static_cast<double>(sizeof(rae_stats)));
	o.Set("hdr", hdr); o.Set("syscall", sys); o.Set("proc", proc); o.Set("exit", ex); o.Set("sockaddr", sa);
	o.Set("sizes", sizes);
	Napi::Object kinds = Napi::Object::New(env);
	kinds.Set("SYSCALL", RAE_KIND_SYSCALL); kinds.Set("EXEC", RAE_KIND_EXEC); kinds.Set("FORK", RAE_KIND_FORK);
	kinds.Set("EXIT", RAE_KIND_EXIT); kinds.Set("PROC", RAE_KIND_PROC); kinds.Set("CAPS", RAE_KIND_CAPS);
	o.Set("kinds", kinds);
	return o;
}

Napi::Value CheckKernel(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	rae_capture_error e;
	Napi::Object o = Napi::Object::New(env);
	int rc = rae_kernel_check(&e);
	o.Set("ok", rc == 0);
	if (rc != 0) {
		o.Set("code", e.code);
		o.Set("reason", e.message);
	}
	return o;
}

// clocks(): CLOCK_BOOTTIME (record timestamps) and CLOCK_REALTIME sampled back to back, in ns.
Napi::Value Clocks(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	timespec b{}, r{};
	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_REALTIME, &r);
	Napi::Object o = Napi::Object::New(env);
	o.Set("boottimeNs", Napi::BigInt::New(env, static_cast<uint64_t>(b.tv_sec * 1000000000ll + b.tv_nsec)));
	o.Set("realtimeNs", Napi::BigInt::New(env, static_cast<uint64_t>(r.tv_sec * 1000000000ll + r.tv_nsec)));
	return o;
}

// releaseFreeMemory(): glibc's malloc_trim(0), which returns the free pages of every malloc arena
// (the main heap and each thread's) to the kernel; glibc itself gives back only a free top of a
// heap, so what a finished compile freed in the middle of the arenas stays resident otherwise.
// Returns whether any memory was released (false without glibc).
Napi::Value ReleaseFreeMemory(const Napi::CallbackInfo &info)
{
#ifdef __GLIBC__
	return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
#else
	return Napi::Boolean::New(info.Env(), false);
#endif
}

template <typename T, napi_typedarray_type K>
T *ArrayArg(const Napi::CallbackInfo &info, size_t i, size_t *len)
{
	Napi::Value v = info[i];
	if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != K)
		throw Napi::TypeError::New(info.Env(), "ingest: argument " + std::to_string(i) + " has the wrong typed-array type");
	Napi::TypedArray a = v.As<Napi::TypedArray>();
	*len = a.ElementLength();
	return reinterpret_cast<T *>(static_cast<uint8_t *>(a.ArrayBuffer().Data()) + a.ByteOffset());
}

// ingest(view, start, bytes, memory, plan, blob, tidPid, pidAddr, state, offsets, starts): translates
// SYSCALL records of view[start..bytes) into eval records (ingest.h); returns where it stopped.
Napi::Value Ingest(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	if (info.Length() < 11 || !info[1].IsNumber() || !info[2].IsNumber())
		throw Napi::TypeError::New(env, "ingest(view, start, bytes, memory, plan, blob, tidPid, pidAddr, state, offsets, starts)");
	rae_ingest_io io{};
	size_t view_len, tp_len, pa_len, st_len;
	io.view = ArrayArg<uint8_t, napi_uint8_array>(info, 0, &view_len);
	double start = info[1].As<Napi::Number>().DoubleValue(), bytes = info[2].As<Napi::Number>().DoubleValue();
	io.mem = ArrayArg<uint8_t, napi_uint8_array>(info, 3, &io.mem_len);
	io.plan = ArrayArg<int32_t, napi_int32_array>(info, 4, &io.plan_len);
	io.blob = ArrayArg<uint8_t, napi_uint8_array>(info, 5, &io.blob_len);
	io.tid_pid = ArrayArg<uint32_t, napi_uint32_array>(info, 6, &tp_len);
	io.pid_addr = ArrayArg<uint32_t, napi_uint32_array>(info, 7, &pa_len);
	io.state = ArrayArg<double, napi_float64_array>(info, 8, &st_len);
	io.offsets = ArrayArg<uint32_t, napi_uint32_array>(info, 9, &io.offsets_len);
	io.starts = ArrayArg<uint64_t, napi_biguint64_array>(info, 10, &io.starts_len);
	if (!(start >= 0 && bytes >= start && bytes <= static_cast<double>(view_len)) || st_len < RAE_IS_WORDS)
		throw Napi::RangeError::New(env, "ingest: start/bytes outside the view, or a short state array");
	io.bytes = static_cast<size_t>(bytes);
	io.pid_limit = tp_len < pa_len ? tp_len : pa_len;
	long r = rae_ingest(&io, static_cast<size_t>(start));
	if (r < 0)
		throw Napi::RangeError::New(env, "ingest: the plan or the state does not fit the memory");
	return Napi::Number::New(env, static_cast<double>(r));
}

// ingestAbi: the numbers of ingest.h, checked by kernel-ingest.ts before it uses ingest().
Napi::Object IngestAbi(Napi::Env env)
{
	Napi::Object o = Napi::Object::New(env);
	const std::pair<const char *, int64_t> nums[] = {
		{ "FLD_NUM", RAE_FLD_NUM }, { "FLD_COUNT", RAE_FLD_COUNT }, { "FLD_FAMILY", RAE_FLD_FAMILY },
		{ "FLD_NAME", RAE_FLD_NAME }, { "FLD_IPS", RAE_FLD_IPS },
		{ "NRC_OPEN", RAE_NRC_OPEN }, { "NRC_FD_RET", RAE_NRC_FD_RET }, { "NRC_FD_ARG0", RAE_NRC_FD_ARG0 },
		{ "NRC_SERVER", RAE_NRC_SERVER }, { "NRC_FLAGS_SHIFT", RAE_NRC_FLAGS_SHIFT },
		{ "NRC_SOCKET", RAE_NRC_SOCKET }, { "NRC_PTRACE", RAE_NRC_PTRACE }, { "NRC_CONNECT", RAE_NRC_CONNECT },
		{ "NRC_SENDTO", RAE_NRC_SENDTO }, { "K_L4", RAE_K_L4 }, { "FLD_L4PROTO", RAE_FLD_L4PROTO }, { "FLD_DURATION", RAE_FLD_DURATION },
		{ "FLD_ARG_FLAGS", RAE_FLD_ARG_FLAGS }, { "FLD_ARG_REQUEST", RAE_FLD_ARG_REQUEST },
		{ "K_ERRNO_END", RAE_K_ERRNO_END }, { "K_F", RAE_K_F }, { "K_IP", RAE_K_IP }, { "K_COUNT", RAE_K_COUNT },
		{ "K_DOMAIN", RAE_K_DOMAIN }, { "K_PTRACE", RAE_K_PTRACE }, { "K_PTRACE_HI", RAE_K_PTRACE_HI },
		{ "K_OACC", RAE_K_OACC }, { "K_OFLAG", RAE_K_OFLAG }, { "OFLAG_COUNT", RAE_OFLAG_COUNT },
		{ "IP_OFLAGS", RAE_IP_OFLAGS }, { "IP_STRIDE", RAE_IP_STRIDE }, { "IP_HEAD", RAE_IP_HEAD }, { "IP_NSLOTS", RAE_IP_NSLOTS },
		{ "IP_NR", RAE_IP_NR }, { "IP_CONST", RAE_IP_CONST }, { "IP_SLOTS", RAE_IP_SLOTS },
		{ "IS_EVENTS", RAE_IS_EVENTS }, { "IS_MAX", RAE_IS_MAX }, { "IS_HEAP", RAE_IS_HEAP },
		{ "IS_HEAP_END", RAE_IS_HEAP_END }, { "IS_NUM", RAE_IS_NUM }, { "IS_BASE", RAE_IS_BASE },
		{ "IS_CONST", RAE_IS_CONST }, { "IS_STOP", RAE_IS_STOP }, { "IS_LOOKUP", RAE_IS_LOOKUP }, { "IS_WORDS", RAE_IS_WORDS },
		{ "NR_SYSCALLS", RAE_NR_SYSCALLS },
		{ "FLD_ARG_NAME", RAE_FLD_ARG_NAME }, { "FLD_ARG_PATH", RAE_FLD_ARG_PATH }, { "FLD_ARG_FILENAME", RAE_FLD_ARG_FILENAME },
		{ "FLD_ARG_NEWPATH", RAE_FLD_ARG_NEWPATH }, { "FLD_ARG_MODE", RAE_FLD_ARG_MODE }, { "FLD_ARG_FD", RAE_FLD_ARG_FD },
		{ "FLD_ARG_UID", RAE_FLD_ARG_UID }, { "FLD_ARG_CMD", RAE_FLD_ARG_CMD }, { "K_MODE", RAE_K_MODE },
		{ "NRC_PATHARG_SHIFT", RAE_NRC_PATHARG_SHIFT }, { "NRC_PATH_RAW", RAE_NRC_PATH_RAW }, { "NRC_NEWPATH", RAE_NRC_NEWPATH },
		{ "NRC_MODE_SHIFT", RAE_NRC_MODE_SHIFT }, { "NRC_MODEFMT_SHIFT", RAE_NRC_MODEFMT_SHIFT }, { "NRC_FDARG_SHIFT", RAE_NRC_FDARG_SHIFT },
		{ "NRC_SETUID", RAE_NRC_SETUID }, { "NRC_BPF", RAE_NRC_BPF },
		{ "FLD_TID", RAE_FLD_TID }, { "FLD_TIME", RAE_FLD_TIME }, { "FLD_RAWTIME", RAE_FLD_RAWTIME },
		{ "FLD_DIRECTION", RAE_FLD_DIRECTION }, { "FLD_SOURCE", RAE_FLD_SOURCE }, { "FLD_HOSTNAME", RAE_FLD_HOSTNAME },
		{ "FLD_OPEN_EXEC", RAE_FLD_OPEN_EXEC }, { "K_DIRECTION", RAE_K_DIRECTION }, { "K_SOURCE", RAE_K_SOURCE },
		{ "K_HOSTNAME", RAE_K_HOSTNAME }, { "IS_EPOCH_LO", RAE_IS_EPOCH_LO }, { "IS_EPOCH_HI", RAE_IS_EPOCH_HI },
		{ "FLD_ARG_PID", RAE_FLD_ARG_PID }, { "FLD_ARG_DIRFD", RAE_FLD_ARG_DIRFD }, { "FLD_ARG_RES", RAE_FLD_ARG_RES },
		{ "FLD_ARG_LINKPATH", RAE_FLD_ARG_LINKPATH }, { "NRC_DIRFD", RAE_NRC_DIRFD }, { "NRC_LINKPATH", RAE_NRC_LINKPATH },
		{ "NRC_RES", RAE_NRC_RES }, { "FLD_CTR_DURATION", RAE_FLD_CTR_DURATION },
		{ "FLD_PROC_ENV", RAE_FLD_PROC_ENV }, { "SLOT_ARG_SHIFT", RAE_SLOT_ARG_SHIFT },
		{ "FLD_SIP_NAME", RAE_FLD_SIP_NAME }, { "FLD_CIP_NAME", RAE_FLD_CIP_NAME }, { "FLD_LIP_NAME", RAE_FLD_LIP_NAME }, { "FLD_RIP_NAME", RAE_FLD_RIP_NAME },
		{ "FLD_BUFFER", RAE_FLD_BUFFER }, { "FLD_ARG_DATA", RAE_FLD_ARG_DATA }, { "NRC_DATA", RAE_NRC_DATA },
		{ "NRC_FLAGS_AT2", RAE_NRC_FLAGS_AT2 }, { "NRC_FLAGS_AT4", RAE_NRC_FLAGS_AT4 }, { "NRC_FLAGS_DOMAIN", RAE_NRC_FLAGS_DOMAIN }, { "NRC_FLAGS_EXEC", RAE_NRC_FLAGS_EXEC },
		{ "NRC_BIND", RAE_NRC_BIND }, { "NRC_LISTEN", RAE_NRC_LISTEN },
	};
	for (const auto &[k, v] : nums)
		o.Set(k, Napi::Number::New(env, static_cast<double>(v)));
	return o;
}

Napi::Object Init(Napi::Env env, Napi::Object exports)
{
	exports.Set("ingest", Napi::Function::New(env, Ingest));
	exports.Set("ingestAbi", IngestAbi(env));
	exports.Set("abiVersion", Napi::Number::New(env, RAE_ABI_VERSION));
	exports.Set("maxRecord", Napi::Number::New(env, RAE_MAX_RECORD));
	exports.Set("layout", Napi::Function::New(env, Layout));
	exports.Set("checkKernel", Napi::Function::New(env, CheckKernel));
	exports.Set("clocks", Napi::Function::New(env, Clocks));
	exports.Set("releaseFreeMemory", Napi::Function::New(env, ReleaseFreeMemory));
	exports.Set("Capture", Capture::Init(env));
	return exports;
}

} // namespace

NODE_API_MODULE(rae_probe, Init)
