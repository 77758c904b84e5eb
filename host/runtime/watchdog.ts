// The evaluator's watchdog: guardedCall(fn, a0..a5, timeoutMs) runs fn(a0..a5) and stops it when
// it runs past the deadline. Native kind: the rae_watchdog addon (probes/watchdog/, built by
// scripts/build-probe.sh into probes/build/Release/) keeps one long-lived thread per isolate and
// costs about a microsecond per call. Fallback kind ('vm', when the addon is not built or cannot
// load, or RAE_WATCHDOG=vm): vm's script timeout, which starts and joins a thread per call
// (24 us quiet, hundreds under load). Either way a timeout throws an error that
// isWatchdogTimeout() recognises; fn's own exceptions (wasm traps) pass through unchanged.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

/** A function guarded with six numeric arguments (the rule module's evaluate). */
export type Guarded = (a0: number, a1: number, a2: number, a3: number, a4: number, a5: number) => number;

/** Which watchdog guards calls in this thread. */
export type WatchdogKind = 'native' | 'vm';

interface Native {
  kind: 'native';
  guardedCall(fn: Guarded, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, timeoutMs: number): number;
}

/** Where scripts/build-probe.sh puts the addon. */
export const WATCHDOG_ADDON_PATH = fileURLToPath(new URL('../../probes/build/Release/rae_watchdog.node', import.meta.url));

let native: Native | null | undefined;
let loadError: string | undefined;

function loadNative(): Native | null {
  if (native !== undefined) return native;
  native = null;
  if (process.env.RAE_WATCHDOG === 'vm') loadError = 'RAE_WATCHDOG=vm';
  else if (!existsSync(WATCHDOG_ADDON_PATH)) loadError = `${WATCHDOG_ADDON_PATH} is missing (run scripts/build-probe.sh)`;
  else {
    try {
      native = createRequire(import.meta.url)(WATCHDOG_ADDON_PATH) as Native;
    } catch (err) {
      loadError = `the watchdog addon cannot be loaded: ${(err as Error).message}`;
    }
  }
  return native;
}

/** 'native' when the addon guards calls, 'vm' for the per-call-thread fallback. */
export function watchdogKind(): WatchdogKind {
  return loadNative() ? 'native' : 'vm';
}

/** Why the native watchdog is not in use (undefined when it is). */
export function watchdogFallbackReason(): string | undefined {
  loadNative();
  return loadError;
}

/** True for the error a guarded call throws when its deadline passed (either kind). */
export function isWatchdogTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ERR_WATCHDOG_TIMEOUT' || code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}

/**
 * The vm fallback's context and script, created once per thread (a context costs ms to make). The
 * function and arguments go through a plain array and a Float64Array the context holds, not
 * through the context's own properties (each of those is an interceptor call: measured 11 vs
 * 5 us per guarded call without the timeout).
 */
let vmGuard: { ctx: vm.Context; script: vm.Script; fn: [Guarded | null]; args: Float64Array } | undefined;

function vmCall(fn: Guarded, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, timeoutMs: number): number {
  if (!vmGuard) {
    const holder: [Guarded | null] = [null];
    const args = new Float64Array(7);
    vmGuard = { ctx: vm.createContext({ F: holder, A: args }), script: new vm.Script('A[6] = F[0](A[0], A[1], A[2], A[3], A[4], A[5])'), fn: holder, args };
  }
  const g = vmGuard;
  g.fn[0] = fn;
  g.args[0] = a0;
  g.args[1] = a1;
  g.args[2] = a2;
  g.args[3] = a3;
  g.args[4] = a4;
  g.args[5] = a5;
  try {
    g.script.runInContext(g.ctx, { timeout: timeoutMs });
  } finally {
    g.fn[0] = null;
  }
  return g.args[6]!;
}

/** fn(a0..a5) stopped after timeoutMs (> 0): its result, its own exception, or a watchdog timeout. */
export function guardedCall(fn: Guarded, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, timeoutMs: number): number {
  const n = native === undefined ? loadNative() : native;
  return n ? n.guardedCall(fn, a0, a1, a2, a3, a4, a5, timeoutMs) : vmCall(fn, a0, a1, a2, a3, a4, a5, timeoutMs);
}
