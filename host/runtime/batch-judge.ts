// The detection engine's batch judge: judges one batch with failure isolation and reports what
// failed. Consumes a batch and a function that judges a range of it (on the compiled module, the
// reference interpreter or kernel eval records); produces the batch's alerts, handed to onAlert.
// A failed batch (a trap, an exception while encoding an event or rendering an alert, a watchdog
// stop) is split and judged again until the events that fail on their own are found
// (isolate.ts): the others get their alerts exactly once, the failed ones are counted as dropped
// (trap / watchdog), reported through onError and announced by one internal alert per batch
// (failure-report.ts); a watchdog stop also sends the ruleset slot back to its last good module
// once the batch is done (the whole batch is judged by one module).
import type { LoadedRule, RuleMatcher, SourceEvent } from '../engine/index.js';
import type { Alert } from '../output/alert.js';
import { AlertPlan, appendedFields } from '../output/from-match.js';
import type { DetectionEngineOptions, EngineStats } from './engine-types.js';
import { runtimeError, type RuntimeError } from './errors.js';
import type { RuleModule } from './evaluator.js';
import { evaluationFailedAlert, failedCounts } from './failure-report.js';
import { DEFAULT_ISOLATION_BUDGET, judgeIsolated, type Isolated, type Judgment } from './isolate.js';
import type { Referred } from './reference.js';
import type { RulesetSlot } from './ruleset-slot.js';
import { guardedCall, isWatchdogTimeout } from './watchdog.js';

/** A judgment of one range; an exception of the host (encoding an event, rendering an alert) fails the range as a trap does. */
export function judged(run: () => Judgment<Alert>): Judgment<Alert> {
  try {
    return run();
  } catch (err) {
    return { ok: false, error: runtimeError('ETRAP', `evaluation failed: ${(err as Error)?.message ?? String(err)}`) };
  }
}

/** Judges batches for the slot's running ruleset; counts, reports and announces the events that fail. */
export class BatchJudge {
  /** Events evaluated since start (decoded and kernel). */
  evaluated = 0;
  /** The alert plan of each rule that has alerted, with its append_output fields (appendedFields), by rule. */
  private readonly plans = new WeakMap<LoadedRule, AlertPlan>();
  /**
   * The same plans by the rule's index in its ruleset, looked up first: an array read where the
   * WeakMap hashes the rule on every alert. A plan there of another ruleset's rule (after a
   * reload) is replaced from `plans` when its index alerts; until then it keeps that rule
   * (one plan an index at most, as many as the largest ruleset's rules).
   */
  private readonly byIndex: AlertPlan[] = [];

  constructor(
    private readonly options: DetectionEngineOptions,
    private readonly stats: EngineStats,
    private readonly slot: RulesetSlot,
  ) {}

  /** Judges a batch of decoded events on the running tier; returns the alert count. */
  decoded(events: readonly SourceEvent[]): number {
    const matcher = this.slot.matcher;
    if (matcher) return this.interpreted(matcher, events);
    const module = this.slot.module;
    if (!module) return 0;
    const first = this.options.ruleMatching === 'first';
    return this.batch(
      module,
      events.length,
      (start, count) => this.onModule(module, events, start, count, first),
      (i) => events[i]!.source,
    );
  }

  /**
   * Judges a batch of n events by ranges (`judge`) with failure isolation, then reports the failed
   * events and hands over the alerts; returns the alert count. `module` is the compiled module
   * judging (undefined: the reference interpreter), restored from after a watchdog stop.
   */
  batch(module: RuleModule | undefined, n: number, judge: (start: number, count: number) => Judgment<Alert>, sourceOf: (i: number) => SourceEvent['source']): number {
    this.stats.batches++;
    const r = judgeIsolated(n, judge, this.options.isolation ?? DEFAULT_ISOLATION_BUDGET);
    this.evaluated += n;
    if (r.failed.length > 0) this.settle(module, r, n, sourceOf);
    for (const a of r.out) this.options.onAlert(a);
    return r.out.length;
  }

  /** Counts a batch of n events judged with no match and nothing failed (the kernel path's common case: no closure, no isolation). */
  quiet(n: number): 0 {
    this.stats.batches++;
    this.evaluated += n;
    return 0;
  }

  /** The alert of `rule` matching `ev`, with the fields append_output adds to it. */
  alert(rule: LoadedRule, ev: SourceEvent): Alert {
    const indexed = this.byIndex[rule.index];
    const plan = indexed !== undefined && indexed.rule === rule ? indexed : this.planOf(rule);
    return plan.alert(ev, this.options.hostname, this.options.maxOutputFieldBytes);
  }

  /** The plan of `rule` from `plans` (made on its first alert), put at its index. */
  private planOf(rule: LoadedRule): AlertPlan {
    let plan = this.plans.get(rule);
    if (plan === undefined) {
      const entries = this.options.appendOutput ?? [];
      this.plans.set(rule, (plan = new AlertPlan(rule, entries.length > 0 ? appendedFields(entries, rule) : [])));
    }
    this.byIndex[rule.index] = plan;
    return plan;
  }

  /** Counts events the compiled tier had judged by the reference interpreter (a stopped one is dropped: watchdog). */
  countReferred(referred: readonly Referred[] | undefined): void {
    for (const x of referred ?? []) {
      this.options.metrics?.eventsReferenceJudged?.(x.source, x.reason);
      if (x.stopped) this.options.metrics?.eventsDropped(x.source, 'watchdog');
    }
  }

  /** Reports a failure through onError (default: a line on stderr). */
  report(what: string, error: RuntimeError): void {
    const report = this.options.onError ?? ((e: RuntimeError) => process.stderr.write(`engine: ${what} (${e.code}): ${e.message}\n`));
    report(error);
  }

  /** Judges events[start, start+count) on the compiled module, alerts rendered; any exception fails the range. */
  private onModule(module: RuleModule, events: readonly SourceEvent[], start: number, count: number, first: boolean): Judgment<Alert> {
    return judged(() => {
      const range = start === 0 && count === events.length ? events : events.slice(start, start + count);
      const r = module.evaluate(range, first);
      if (!r.ok) return r;
      const out = r.matches.map((m) => this.alert(m.rule, range[m.event]!));
      this.countReferred(r.referred);
      return { ok: true, out };
    });
  }

  /** Judges a batch on the reference interpreter, under the watchdog deadline on the interpreter tier. */
  private interpreted(matcher: RuleMatcher, events: readonly SourceEvent[]): number {
    const ms = this.options.engine === 'interpreter' ? 0 : (this.options.watchdogMs ?? 1000);
    const judge = (start: number, count: number): Judgment<Alert> => {
      const alerts: Alert[] = [];
      const run = (): number => {
        for (let i = start; i < start + count; i++) {
          const ev = events[i]!;
          for (const rule of matcher.match(ev.source, ev.evtType, ev.fields)) alerts.push(this.alert(rule, ev));
        }
        return 0;
      };
      try {
        if (ms > 0) guardedCall(run, 0, 0, 0, 0, 0, 0, ms);
        else run();
      } catch (err) {
        // A runaway range (or an exception: a stack overflow on a crafted value) fails that range, as with a compiled module.
        const e = err as Error & { code?: string };
        return { ok: false, error: isWatchdogTimeout(e) ? runtimeError('ETIMEOUT', `the reference interpreter was stopped by the watchdog after ${ms} ms`) : runtimeError('ETRAP', `the reference interpreter failed: ${e.message}`) };
      }
      return { ok: true, out: alerts };
    };
    return this.batch(undefined, events.length, judge, (i) => events[i]!.source);
  }

  /** Counts and reports the failed events of a batch; after a watchdog stop, goes back to the last good module. */
  private settle(module: RuleModule | undefined, r: Isolated<Alert>, batchEvents: number, sourceOf: (i: number) => SourceEvent['source']): void {
    const failedEvents = r.failed.reduce((n, f) => n + f.count, 0);
    this.stats.failedBatches++;
    this.stats.failedEvents += failedEvents;
    this.stats.failedCalls += r.failedCalls;
    for (const c of failedCounts(r.failed, sourceOf)) this.options.metrics?.eventsDropped(c.source, c.reason, c.n);
    if (r.timeouts > 0) this.stats.timeouts++;
    else this.stats.traps++;
    const first = r.failed[0]!.error;
    const judgedFine = batchEvents - failedEvents;
    this.report('batch failed', runtimeError(first.code, `${first.message} (${failedEvents} of ${batchEvents} event(s) could not be evaluated${judgedFine > 0 ? `; the other ${judgedFine} were judged` : ''})`));
    this.options.onAlert(evaluationFailedAlert(failedEvents, batchEvents, r.failed, this.options.hostname));
    if (r.timeouts > 0 && module) this.slot.restoreLastGood(module);
  }
}
