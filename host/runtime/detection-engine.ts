// The detection engine of `rae run`: holds the running ruleset, evaluates batches of events from
// the sources, and hands every match as an Alert to `onAlert`. `load` replaces the ruleset only
// when the new one is valid; an invalid set is rejected with its diagnostics and the running one
// stays. Today evaluation uses the reference interpreter (RuleMatcher); the compiled WASM
// evaluator of the compiled-rules issue replaces it behind this same interface.
import { loadRules, type LoadResult, type RulesFile } from '../engine/index.js';
import { RuleMatcher, type RuleMatching } from '../engine/matcher.js';
import type { Priority } from '../engine/priority.js';
import type { Alert } from '../output/alert.js';
import { alertFor } from '../output/from-match.js';
import type { SourceEvent } from '../sources/types.js';

export interface DetectionEngineOptions {
  ruleMatching: RuleMatching;
  minPriority: Priority;
  hostname: string;
  onAlert: (alert: Alert) => void;
}

/** What `load` did. */
export interface LoadOutcome {
  /** True when the new ruleset is now running. */
  swapped: boolean;
  result: LoadResult;
}

/** Evaluates events against the current ruleset; swaps rulesets between batches. */
export class DetectionEngine {
  private matcher: RuleMatcher | undefined;
  private current: LoadResult | undefined;
  private evaluated = 0;
  private generation = 0;

  constructor(private readonly options: DetectionEngineOptions) {}

  /** Loads rules files; the new set replaces the running one only if it is valid. */
  async load(files: readonly RulesFile[]): Promise<LoadOutcome> {
    const result = loadRules(files);
    if (!result.ok) return { swapped: false, result };
    this.matcher = new RuleMatcher(result.ruleset, this.options);
    this.current = result;
    this.generation++;
    return { swapped: true, result };
  }

  /** The running load result, if any. */
  get ruleset(): LoadResult | undefined {
    return this.current;
  }

  /** Increases on every successful swap. */
  get rulesetGeneration(): number {
    return this.generation;
  }

  /** Events evaluated since start. */
  get eventsEvaluated(): number {
    return this.evaluated;
  }

  /** Evaluates one batch synchronously (a batch is never split across two rulesets); returns the alert count. */
  evaluate(events: readonly SourceEvent[]): number {
    const matcher = this.matcher;
    if (!matcher) return 0;
    let alerts = 0;
    for (const ev of events) {
      for (const rule of matcher.match(ev.source, ev.evtType, ev.fields)) {
        this.options.onAlert(alertFor(rule, ev, this.options.hostname));
        alerts++;
      }
    }
    this.evaluated += events.length;
    return alerts;
  }
}
