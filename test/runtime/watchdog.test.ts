// The one-thread native watchdog (host/runtime/watchdog.ts over probes/watchdog/): it is the kind
// in use where the addon is built; it stops a runaway wasm loop with a timeout error; calls that
// end right at or after short deadlines never leave a termination pending for later JS; a trap
// still surfaces as a WebAssembly.RuntimeError; the evaluator maps its timeout to ETIMEOUT; and
// it works, and yields to worker.terminate(), inside a worker thread.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateModule } from '../../host/engine/codegen/index.js';
import { RuleModule } from '../../host/runtime/evaluator.js';
import { guardedCall, isWatchdogTimeout, watchdogFallbackReason, watchdogKind, WATCHDOG_ADDON_PATH, type Guarded } from '../../host/runtime/watchdog.js';
import { toEvents } from '../../support/differential.js';
import { wasmModule, type WasmSpec } from './wasm-bytes.js';

const evaluateOf = (evaluate: WasmSpec['evaluate']): Guarded => new WebAssembly.Instance(new WebAssembly.Module(wasmModule({ evaluate })), {}).exports.evaluate as Guarded;

/** Plain JS work after a guarded call: a leaked termination would stop it (and the test run). */
function laterJs(): number {
  let s = 0;
  for (let i = 0; i < 2000; i++) s += JSON.parse(String(i)) as number;
  return s;
}

test('watchdog: the native kind is in use where the addon is built', () => {
  assert.ok(existsSync(WATCHDOG_ADDON_PATH), `${WATCHDOG_ADDON_PATH} missing: scripts/build-probe.sh builds it`);
  assert.is(watchdogKind(), 'native', watchdogFallbackReason());
  assert.is(watchdogFallbackReason(), undefined);
});

test('watchdog: a runaway wasm loop is stopped with a timeout error; later JS runs', () => {
  const loop = evaluateOf('loop');
  for (const ms of [20, 5, 1]) {
    let caught: unknown;
    try {
      guardedCall(loop, 0, 0, 0, 0, 0, 0, ms);
    } catch (err) {
      caught = err;
    }
    assert.ok(isWatchdogTimeout(caught), `timeout error expected, got ${String(caught)}`);
    assert.is((caught as { code?: string }).code, 'ERR_WATCHDOG_TIMEOUT');
    assert.is(laterJs(), 1999000);
  }
});

test('watchdog: a normal call returns its value and its arguments arrive in order', () => {
  const f: Guarded = (a, b, c, d, e, g) => a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * g;
  assert.is(guardedCall(f, 1, 2, 3, 4, 5, 6, 1000), 91);
  assert.is(guardedCall(evaluateOf('ok'), 1, 2, 3, 4, 5, 6, 1000), 0);
});

test('watchdog: thousands of calls ending at or after short deadlines leave no termination pending', () => {
  const ok = evaluateOf('ok');
  let returned = 0;
  let timedOut = 0;
  for (let i = 0; i < 6000; i++) {
    // Deadlines of 1-8 us against calls of ~0.2 us (wasm) or spins of 0-16 us (JS): the watchdog
    // fires before, during and just after the call's return.
    const deadline = 0.001 * (1 + (i % 8));
    const spinUs = i % 16;
    const fn: Guarded =
      i % 2 === 0
        ? ok
        : (a) => {
            const end = performance.now() + spinUs / 1000;
            while (performance.now() < end);
            return a;
          };
    try {
      assert.is(guardedCall(fn, 0, 0, 0, 0, 0, 0, deadline), 0);
      returned++;
    } catch (err) {
      assert.ok(isWatchdogTimeout(err), `only a timeout may be thrown, got ${String(err)}`);
      timedOut++;
    }
    assert.is(laterJs(), 1999000);
  }
  assert.is(returned + timedOut, 6000);
});

test('watchdog: a trap surfaces as a WebAssembly.RuntimeError, and a JS exception as itself', () => {
  let caught: unknown;
  try {
    guardedCall(evaluateOf('trap'), 0, 0, 0, 0, 0, 0, 1000);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof WebAssembly.RuntimeError, String(caught));
  assert.match((caught as Error).message, 'unreachable');
  const mine = new RangeError('mine');
  assert.throws(
    () =>
      guardedCall(
        () => {
          throw mine;
        },
        0,
        0,
        0,
        0,
        0,
        0,
        1000,
      ),
    (e: unknown) => e === mine,
  );
});

test('watchdog: bad arguments are refused with a code; nested guarded calls too', () => {
  assert.throws(
    () => guardedCall(evaluateOf('ok'), 0, 0, 0, 0, 0, 0, 0),
    (e: Error & { code?: string }) => e.code === 'ERR_OUT_OF_RANGE',
  );
  let inner: unknown;
  guardedCall(
    () => {
      try {
        guardedCall(evaluateOf('ok'), 0, 0, 0, 0, 0, 0, 1000);
      } catch (err) {
        inner = err;
      }
      return 0;
    },
    0,
    0,
    0,
    0,
    0,
    0,
    1000,
  );
  assert.is((inner as { code?: string }).code, 'ERR_WATCHDOG_NESTED');
});

test('watchdog: the evaluator reports ETIMEOUT for a runaway module, then a trap as ETRAP', () => {
  const generated = generateModule([]).module!;
  const events = toEvents([{ 'evt.type': 'openat', 'proc.name': 'cat' }], 'syscall');
  const make = (evaluate: WasmSpec['evaluate']) => {
    const wasm = wasmModule({ evaluate });
    const m = RuleModule.create({ generated, module: new WebAssembly.Module(wasm), wasm, compileMs: 0, warmMs: 0 }, 10);
    if (!m.ok) throw new Error(m.error.message);
    return m.module;
  };
  const r = make('loop').evaluate(events, true);
  assert.equal(r.ok ? undefined : r.error, { code: 'ETIMEOUT', message: 'evaluation stopped by the watchdog after 10 ms' });
  const t = make('trap').evaluate(events, true);
  assert.is(t.ok ? undefined : t.error.code, 'ETRAP');
  assert.ok(make('ok').evaluate(events, true).ok);
});

/** Runs `body` (an ES module source) in a worker; resolves with its first message. */
function inWorker(body: string, onOnline?: (w: Worker) => void): Promise<{ message?: unknown; exitCode: number }> {
  const worker = new Worker(body, { eval: true, type: 'module' } as ConstructorParameters<typeof Worker>[1]);
  return new Promise((resolve, reject) => {
    let message: unknown;
    worker.on('message', (m) => {
      message = m;
      onOnline?.(worker);
    });
    worker.on('error', reject);
    worker.on('exit', (exitCode) => resolve({ message, exitCode }));
  });
}

const workerPrelude = `
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
const native = createRequire(import.meta.url)(${JSON.stringify(WATCHDOG_ADDON_PATH)});
const loop = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(${JSON.stringify([...wasmModule({ evaluate: 'loop' })])})), {}).exports.evaluate;
`;

test('watchdog: inside a worker thread it stops a runaway loop, and yields to worker.terminate()', async () => {
  const stopped = await inWorker(`${workerPrelude}
let code;
try { native.guardedCall(loop, 0, 0, 0, 0, 0, 0, 10); } catch (e) { code = e.code; }
parentPort.postMessage(code);`);
  assert.equal(stopped, { message: 'ERR_WATCHDOG_TIMEOUT', exitCode: 0 });
  // A termination that is not the watchdog's passes through: the worker ends, the deadline is far.
  const terminated = await inWorker(
    `${workerPrelude}
parentPort.postMessage('started');
native.guardedCall(loop, 0, 0, 0, 0, 0, 0, 3600000);
parentPort.postMessage('not reached');`,
    (w) => void w.terminate(),
  );
  assert.equal(terminated, { message: 'started', exitCode: 1 });
});

test.run();
