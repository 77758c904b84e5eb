// Rule selection and matching with the reference interpreter: rules of the event's source,
// indexed by event type (syscall) in definition order, `rule_matching` first or all, minimum
// priority (reference/falco-language.md B.8, G). Used by `rae replay` and as the oracle.
import type { Source } from './fields.js';
import type { LoadedRule, Ruleset } from './ruleset.js';
import { Interpreter, type EventAccessor } from './interpreter.js';
import { prioritySeverity, type Priority } from './priority.js';

export type RuleMatching = 'first' | 'all';

export interface MatcherOptions {
  ruleMatching: RuleMatching;
  /** Rules less severe than this are not enabled (Falco `priority`, default Debug). */
  minPriority: Priority;
}

/** Matches events against the enabled rules of a ruleset. */
export class RuleMatcher {
  private readonly interpreter = new Interpreter();
  private readonly byType = new Map<string, LoadedRule[]>();
  private readonly bySource = new Map<Source, LoadedRule[]>();

  constructor(
    ruleset: Pick<Ruleset, 'rules'>,
    private readonly options: MatcherOptions,
  ) {
    const min = prioritySeverity(options.minPriority);
    const enabled = ruleset.rules.filter((r) => r.enabled && prioritySeverity(r.priority) <= min).sort((a, b) => a.index - b.index);
    for (const r of enabled) {
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
    for (const r of this.candidates(source, evtType)) {
      if (this.interpreter.evaluate(r.condition, ev)) {
        out.push(r);
        if (first) break;
      }
    }
    return out;
  }
}
