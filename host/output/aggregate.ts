// Output aggregation (noise control), the fan-out's stage between the detection counter and the
// destinations (fanout.ts): per rule, a window and a key made of output fields. The first alert
// of a key passes and opens the key's window; repeats inside the window are held and counted;
// when the window ends, one summary alert (summaryAlert) reports them, and the key is forgotten,
// so the next alert of it passes again. Consumes Alerts and an AggregationPlan (config.ts);
// produces the pass/hold answer per alert and summary Alerts through `emit`. Memory is bounded
// by the plan's maxKeys: an alert of a new key past it passes, counted by `overflow`.
import type { Alert, OutputFieldValue } from './alert.js';
import type { AggregationPlan } from './config.js';
import { rfc3339Nano } from './time.js';

/** Time and timers of the aggregator: real ones in the engine, a hand-driven one in unit tests. */
export interface AggregationClock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Calls `fn` once, about `ms` from now; the returned function cancels it. */
  schedule(fn: () => void, ms: number): () => void;
}

/** performance.now() and unref'd timers: a pending window never keeps the process alive. */
const REAL_CLOCK: AggregationClock = {
  now: () => performance.now(),
  schedule(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

/** What the aggregator reports to. */
export interface AggregatorHooks {
  /** A summary alert to deliver (it is not a detection: the caller does not count it as one). */
  emit(summary: Alert): void;
  held(rule: string): void;
  overflow(): void;
}

/** One key's open window. */
interface OpenWindow {
  readonly first: Alert;
  readonly fields: readonly string[] | undefined;
  readonly windowMs: number;
  readonly deadline: number;
  held: number;
  firstHeldNs: bigint;
  lastHeldNs: bigint;
}

/** An output field value as a stable key part (bigint is not JSON). */
function part(v: OutputFieldValue | undefined): string {
  return typeof v === 'bigint' ? `${v}n` : JSON.stringify(v ?? null);
}

/** The key of an alert: rule, source and hostname (a central forwarder merges no two hosts), then the key fields' values. */
function keyOf(a: Alert, fields: readonly string[] | undefined): string {
  const names =
    fields ??
    Object.keys(a.outputFields)
      .filter((f) => f !== 'evt.time')
      .sort();
  const values = names.map((f) => (fields ? part(a.outputFields[f]) : `${f}=${part(a.outputFields[f])}`));
  return `${a.rule}\0${a.source}\0${a.hostname}\0${values.join('\0')}`;
}

/** The summary of a window that held `w.held` repeats (docs/aggregation.md shows its Falco JSON). */
function summaryAlert(w: OpenWindow): Alert {
  const names = w.fields ?? Object.keys(w.first.outputFields).filter((f) => f !== 'evt.time');
  const keyFields: Record<string, OutputFieldValue> = {};
  for (const f of names) keyFields[f] = w.first.outputFields[f] ?? null;
  const keyText = names.map((f) => `${f}=${String(keyFields[f])}`).join(' ');
  const first = rfc3339Nano(w.firstHeldNs);
  const last = rfc3339Nano(w.lastHeldNs);
  return {
    timeNs: w.lastHeldNs,
    rule: w.first.rule,
    priority: w.first.priority,
    source: w.first.source,
    tags: w.first.tags,
    hostname: w.first.hostname,
    message: `${w.held} more alert(s) of this rule held by aggregation from ${first} to ${last} (window ${w.windowMs / 1000}s, key ${keyText || '(none)'}); the first was: ${w.first.message}`,
    outputFields: {
      ...keyFields,
      'aggregation.count': w.held,
      'aggregation.first_time': first,
      'aggregation.last_time': last,
      'aggregation.window_seconds': w.windowMs / 1000,
    },
  };
}

/** The aggregation stage. */
export class Aggregator {
  private readonly open = new Map<string, OpenWindow>();
  /** Open windows by window length: in each, deadlines rise in insertion order (the clock is monotonic). */
  private readonly byLength = new Map<number, Map<string, OpenWindow>>();
  private cancelTimer: (() => void) | undefined;
  private timerAt = Infinity;

  constructor(
    private readonly plan: AggregationPlan,
    private readonly hooks: AggregatorHooks,
    private readonly clock: AggregationClock = REAL_CLOCK,
  ) {}

  /** true: deliver the alert now; false: it was held (and counted) in its key's window. */
  offer(a: Alert): boolean {
    const policy = this.plan.policyFor(a.rule, a.source);
    if (!policy) return true;
    const key = keyOf(a, policy.key);
    const w = this.open.get(key);
    if (w) {
      if (w.held === 0) w.firstHeldNs = a.timeNs;
      w.held++;
      w.lastHeldNs = a.timeNs;
      this.hooks.held(a.rule);
      return false;
    }
    if (this.open.size >= this.plan.maxKeys) {
      this.hooks.overflow();
      return true;
    }
    const opened: OpenWindow = { first: a, fields: policy.key, windowMs: policy.windowMs, deadline: this.clock.now() + policy.windowMs, held: 0, firstHeldNs: 0n, lastHeldNs: 0n };
    this.open.set(key, opened);
    let group = this.byLength.get(policy.windowMs);
    if (!group) this.byLength.set(policy.windowMs, (group = new Map()));
    group.set(key, opened);
    if (opened.deadline < this.timerAt) this.arm(opened.deadline);
    return true;
  }

  /** Keys with an open window. */
  get size(): number {
    return this.open.size;
  }

  /** Ends every window now, summaries first-opened first (shutdown: SIGTERM releases what is held). */
  flush(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
    const all = [...this.open.entries()].sort((x, y) => x[1].deadline - y[1].deadline);
    for (const [key, w] of all) this.close(key, w);
  }

  /** Ends the windows whose deadline has passed, then waits for the next one. */
  private expire(): void {
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    let next = Infinity;
    for (const group of this.byLength.values()) {
      for (const [key, w] of group) {
        if (w.deadline > now) {
          next = Math.min(next, w.deadline);
          break;
        }
        this.close(key, w);
      }
    }
    if (next < Infinity) this.arm(next);
  }

  private close(key: string, w: OpenWindow): void {
    this.open.delete(key);
    const group = this.byLength.get(w.windowMs);
    group?.delete(key);
    if (group?.size === 0) this.byLength.delete(w.windowMs);
    if (w.held > 0) this.hooks.emit(summaryAlert(w));
  }

  private arm(at: number): void {
    this.cancelTimer?.();
    this.timerAt = at;
    this.cancelTimer = this.clock.schedule(() => this.expire(), Math.max(0, at - this.clock.now()));
  }
}
