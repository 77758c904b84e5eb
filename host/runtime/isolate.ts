// Failure isolation of one batch. When judging a batch fails (the rule module traps, the host
// throws while encoding an event or rendering an alert, or the watchdog stops the call), one
// crafted event must not blind the engine to its neighbours: the batch is split in halves and
// each half judged again, down to the events that fail on their own. A failed call's output is
// thrown away whole, so an event that judges fine is reported exactly once, by the one call
// that succeeded on a range holding it. Judging is stateless for the ranges given (decoded
// events carry their own per-batch thread entries; kernel records were ingested into the state
// region before the first call), so a range may be judged again.
// Cost: a trap costs microseconds, a watchdog stop a whole deadline; the budget bounds both.
// One bad event among n costs about log2(n) failed calls. Once the budget is spent, no range is
// split any more: the ranges waiting (at most log2(n)) are judged once each and fail whole, and
// after one more watchdog stop those still waiting fail unjudged. So a batch costs at most
// maxFailedCalls + log2(n) failed calls and maxTimeouts + 1 watchdog stops. Consumes a range
// count and a judge function; produces the outputs in range order and the failed ranges.
import type { RuntimeError } from './errors.js';

/** What judging one range produced: its outputs, or why it failed (its outputs are lost). */
export type Judgment<T> = { ok: true; out: T[] } | { ok: false; error: RuntimeError };

/** A range of the batch that failed on its own (one event) or was left when the budget ran out. */
export interface FailedRange {
  start: number;
  count: number;
  error: RuntimeError;
}

/** Bounds on the failed calls spent isolating one batch (the first call included). */
export interface IsolationBudget {
  /** Failed calls of any kind. */
  maxFailedCalls: number;
  /** Calls stopped by the watchdog (each costs the whole deadline). */
  maxTimeouts: number;
}

/**
 * Defaults: 64 failed calls isolate a few bad events in the largest batch (8192 events: 13 per
 * event); 8 watchdog stops (8 s at the default 1 s deadline) isolate one slow event in a batch of
 * up to 128 events, and cut larger ones down to ranges of n/128.
 */
export const DEFAULT_ISOLATION_BUDGET: IsolationBudget = { maxFailedCalls: 64, maxTimeouts: 8 };

/** The outcome of a batch: the outputs of every range that judged fine, in order, and the failed ranges, in order. */
export interface Isolated<T> {
  out: T[];
  failed: FailedRange[];
  /** Failed calls spent (0: the batch judged fine at once). */
  failedCalls: number;
  timeouts: number;
}

/** Judges events [0, n) with `judge(start, count)`; a failed range is split in halves and judged again. */
export function judgeIsolated<T>(n: number, judge: (start: number, count: number) => Judgment<T>, budget: IsolationBudget = DEFAULT_ISOLATION_BUDGET): Isolated<T> {
  const out: T[] = [];
  const failed: FailedRange[] = [];
  let failedCalls = 0;
  let timeouts = 0;
  let spent = false;
  // Left halves on top, so ranges are judged (and their outputs kept) in event order.
  const stack: Array<[start: number, count: number]> = n > 0 ? [[0, n]] : [];
  for (let range = stack.pop(); range !== undefined; range = stack.pop()) {
    const [start, count] = range;
    const r = judge(start, count);
    if (r.ok) {
      for (const x of r.out) out.push(x);
      continue;
    }
    failedCalls++;
    const timedOut = r.error.code === 'ETIMEOUT';
    if (timedOut) timeouts++;
    const wasSpent = spent;
    spent ||= failedCalls >= budget.maxFailedCalls || timeouts >= budget.maxTimeouts;
    if (count === 1 || spent) {
      failed.push({ start, count, error: r.error });
      if (wasSpent && timedOut) {
        for (let rest = stack.pop(); rest !== undefined; rest = stack.pop()) failed.push({ start: rest[0], count: rest[1], error: r.error });
      }
      continue;
    }
    const half = count >> 1;
    stack.push([start + half, count - half], [start, half]);
  }
  failed.sort((a, b) => a.start - b.start);
  return { out, failed, failedCalls, timeouts };
}
