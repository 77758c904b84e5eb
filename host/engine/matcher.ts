// Rule selection and matching with the reference interpreter: rules of the event's source,
// indexed by event type (syscall) in definition order, `rule_matching` first or all, minimum
// priority (reference/falco-language.md B.8, G). Used by `rae replay` and as the oracle. With a
// RuleStats, counts every rule's evaluations and matches, and times the rules of one event in
// SAMPLE_EVERY (rule-stats.ts, docs/rule-cost.md).
import type { Source } from './fields.js';
import type { RuleCounter, RuleStats } from './rule-stats.js';
import type { LoadedRule, Ruleset } from './ruleset.js';
import { Interpreter, type EventAccessor } from './interpreter.js';
import { prioritySeverity, type Priority } from './priority.js';

export type RuleMatching = 'first' | 'all';

export interface MatcherOptions {
  ruleMatching: RuleMatching;
  /** Rules less severe than this are not enabled (Falco `priority`, default Debug). */
  minPriority: Priority;
}

/** One event in this many has each of its rules timed (about 1 % of the interpreter's time in timer calls). */
const SAMPLE_EVERY = 64;
/** A rule with fewer timed evaluations than this is timed on every event (a short replay still gets a rate for every rule). */
const MIN_TIMED = 16;

/** Matches events against the enabled rules of a ruleset. */
export class RuleMatcher {
  private readonly interpreter = new Interpreter();
  private readonly byType = new Map<string, LoadedRule[]>();
  private readonly bySource = new Map<Source, LoadedRule[]>();
  private readonly counters = new Map<LoadedRule, RuleCounter>();
  private sampleIn = 0;

  constructor(
    ruleset: Pick<Ruleset, 'rules'>,
    private readonly options: MatcherOptions,
    stats?: RuleStats,
  ) {
    const min = prioritySeverity(options.minPriority);
    const enabled = ruleset.rules.filter((r) => r.enabled && prioritySeverity(r.priority) <= min).sort((a, b) => a.index - b.index);
    for (const r of enabled) {
      if (stats) this.counters.set(r, stats.counter(r));
      const list = this.bySource.get(r.source) ?? [];
      list.push(r);
      this.bySource.set(r.source, list);
      for (const t of r.evttypes ?? []) {
        const l = this.byType.get(t) ?? [];
        l.push(r);
        this.byType.set(t, l);
      }
    }
  }

  /** The rules an event of this source and type is evaluated against, in order. */
  candidates(source: Source, evtType: string | undefined): readonly LoadedRule[] {
    if (source === 'syscall') return evtType === undefined ? [] : (this.byType.get(evtType) ?? []);
    return this.bySource.get(source) ?? [];
  }

  /** The matching rules: the first one, or all in order (`first` defaults to the options' ruleMatching). */
  match(source: Source, evtType: string | undefined, ev: EventAccessor, first = this.options.ruleMatching === 'first'): LoadedRule[] {
    const out: LoadedRule[] = [];
    if (this.counters.size > 0) return this.matchCounted(this.candidates(source, evtType), ev, first, out);
    for (const r of this.candidates(source, evtType)) {
      if (this.interpreter.evaluate(r.condition, ev)) {
        out.push(r);
        if (first) break;
      }
    }
    return out;
  }

  /** match() with every evaluation and match counted, and one event in SAMPLE_EVERY (and a rule's first MIN_TIMED evaluations) timed rule by rule. */
  private matchCounted(rules: readonly LoadedRule[], ev: EventAccessor, first: boolean, out: LoadedRule[]): LoadedRule[] {
    const sampled = this.sampleIn-- <= 0;
    if (sampled) this.sampleIn = SAMPLE_EVERY - 1;
    for (const r of rules) {
      const c = this.counters.get(r)!;
      c.evaluated(1);
      const timed = sampled || c.undersampled(MIN_TIMED);
      const t0 = timed ? performance.now() : 0;
      const hit = this.interpreter.evaluate(r.condition, ev);
      if (timed) c.sampled((performance.now() - t0) / 1000, 1);
      if (hit) {
        c.matches++;
        out.push(r);
        if (first) break;
      }
    }
    return out;
  }
}
