// The kernel byte path on the interpreter tier. While a new ruleset compiles, kernel records are
// still written into the last compiled module (its thread table and its eval-record layout), and
// the module judges the rules it has in common with the new ruleset; the reference interpreter
// judges the new ruleset's added and changed syscall rules, only on events of their evt.types
// (read from the eval records' type ids). A rule is in common when the new ruleset has a rule
// of the same name and source whose expanded condition (macros, lists and exceptions resolved,
// printed canonically) and event types are the same; a module match of a rule the new ruleset
// dropped or changed is discarded. The module runs with rule matching `all`, so the two sets of
// matches can be merged in the new ruleset's order (ruleMatching first: the first of an event's).
// An event the module hands back (RAE_MATCH_REFERENCE) is judged whole by the interpreter over
// the new ruleset. So a new or changed syscall rule is live on the byte path from the swap that
// puts its ruleset on the interpreter tier, not from its tier-up (DetectionEngine.evaluateKernel).
// The interpreter's part of a range runs under the evaluator's watchdog deadline; a stop or an
// exception fails the range (the engine isolates it as it does a trap).
import { evtTypeId, MEM, REC } from '../abi/module.js';
import { type LoadedRule, type LoadResult, printExpr, RuleMatcher, type SourceEvent } from '../engine/index.js';
import { runtimeError } from './errors.js';
import type { RuleModule } from './evaluator.js';
import type { Judgment } from './isolate.js';
import { guardedCall, isWatchdogTimeout } from './watchdog.js';

/** One (event, rule) match of a batch range; `event` indexes the range. */
export interface OverlayMatch {
  event: number;
  rule: LoadedRule;
}

/** What decides a rule's verdicts: its source, expanded condition and event types. */
function verdictKey(r: LoadedRule): string {
  return `${r.source}\0${[...(r.evttypes ?? [])].sort().join(',')}\0${printExpr(r.expanded)}`;
}

/** A new ruleset served on the byte path by an older module plus the interpreter. */
export class KernelOverlay {
  /** The module's rules that the new ruleset has unchanged, to the new ruleset's rule. */
  private readonly kept = new Map<LoadedRule, LoadedRule>();
  /** The new ruleset's syscall rules the module does not have (added or changed). */
  private readonly changed: RuleMatcher;
  /** Eval-record type ids of the changed rules' event types (0: a type the module ABI has no id for). */
  private readonly changedTypes = new Set<number>();
  /** The whole new ruleset, for events the module hands back. */
  private readonly whole: RuleMatcher;
  /** How many of the new ruleset's syscall rules the interpreter judges. */
  readonly interpreted: number;

  /** `rules`: the new ruleset's selected rules (enabled, at the minimum priority or above, in order). */
  constructor(
    readonly module: RuleModule,
    readonly ruleset: LoadResult,
    rules: readonly LoadedRule[],
  ) {
    const old = new Map<string, LoadedRule>();
    for (const r of module.rules) if (r.source === 'syscall') old.set(`${r.name}\0${verdictKey(r)}`, r);
    const changed: LoadedRule[] = [];
    for (const r of rules) {
      if (r.source !== 'syscall') continue;
      const same = old.get(`${r.name}\0${verdictKey(r)}`);
      if (same && !this.kept.has(same)) this.kept.set(same, r);
      else {
        changed.push(r);
        for (const t of r.evttypes ?? []) this.changedTypes.add(evtTypeId(t));
      }
    }
    const all = { ruleMatching: 'all', minPriority: 'Debug' } as const;
    this.changed = new RuleMatcher({ rules: changed }, all);
    this.whole = new RuleMatcher({ rules: [...rules] }, all);
    this.interpreted = changed.length;
  }

  /**
   * Merges the module's matches of records [from, from+count) (judged with rule matching `all`)
   * with the interpreter's verdicts on the same range; `eventAt(i)` decodes event i of the range.
   * Matches come out in event order, each event's in rule order (`first`: only its first).
   */
  merge(matches: readonly { event: number; rule: LoadedRule }[], handBack: readonly number[], from: number, count: number, eventAt: (i: number) => SourceEvent, first: boolean, watchdogMs: number): Judgment<OverlayMatch> {
    const out: OverlayMatch[] = [];
    for (const m of matches) {
      const rule = this.kept.get(m.rule);
      if (rule) out.push({ event: m.event, rule });
    }
    const run = (): number => {
      const handed = new Set(handBack);
      for (const i of handBack) this.judge(this.whole, eventAt(i), i, out);
      if (this.interpreted === 0) return 0;
      const dv = new DataView(this.module.memory.buffer);
      const stride = this.module.stride('syscall');
      for (let i = 0; i < count; i++) {
        const type = dv.getUint32(MEM.batchBase + (from + i) * stride + REC.type, true);
        if ((type === 0 || this.changedTypes.has(type)) && !handed.has(i)) this.judge(this.changed, eventAt(i), i, out);
      }
      return 0;
    };
    try {
      if (watchdogMs > 0) guardedCall(run, 0, 0, 0, 0, 0, 0, watchdogMs);
      else run();
    } catch (err) {
      const e = err as Error;
      return {
        ok: false,
        error: isWatchdogTimeout(e)
          ? runtimeError('ETIMEOUT', `the reference interpreter (rules not compiled yet) was stopped by the watchdog after ${watchdogMs} ms`)
          : runtimeError('ETRAP', `the reference interpreter (rules not compiled yet) failed: ${e.message}`),
      };
    }
    out.sort((a, b) => a.event - b.event || a.rule.index - b.rule.index);
    return { ok: true, out: first ? out.filter((m, k) => k === 0 || out[k - 1]!.event !== m.event) : out };
  }

  private judge(matcher: RuleMatcher, ev: SourceEvent, event: number, out: OverlayMatch[]): void {
    for (const rule of matcher.match(ev.source, ev.evtType, ev.fields)) out.push({ event, rule });
  }
}
