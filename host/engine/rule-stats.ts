// Per-rule figures of both engines (DESIGN.md "Rule cost"): how many events reached a rule after
// the event-type index (evaluations), how many it matched, and the time it cost. Consumes counts
// and timing samples from the compiled module (host/runtime/evaluator.ts) and the reference
// interpreter (matcher.ts); produces RuleFigure rows for /metrics, `rae profile` and `rae
// describe`. Rows are keyed by rule name and source and outlive reloads (a removed rule keeps its
// row), so the set is bounded by the rules ever loaded.
//
// Cost is sampled timing (docs/rule-cost.md): the compiled tier costs its evaluations itself
// (rule-tally.ts: per group, what removing the rule saves, calibrated on whole batches) and adds
// them with costed(); the interpreter times the rule alone, which gives a rate (seconds per
// evaluation) that every evaluation is costed at. Evaluations counted before a rule's first
// sample are costed when that sample comes. A compiled module keeps its counts in its own memory: it
// registers a flusher here, and figures() runs the flushers first, so counting costs nothing
// between two reads.
import type { Source } from './fields.js';

/** One rule's figures. */
export interface RuleFigure {
  rule: string;
  source: Source;
  evaluations: number;
  matches: number;
  /** Estimated seconds spent evaluating the rule (sampled timing × evaluations). */
  costSeconds: number;
}

/**
 * Timings of a rule on the interpreter thrown away first: its first evaluations run cold code
 * (measured: the first one 100 to 1,000 times the rate that follows). The compiled module's
 * sampler profiles a group again instead (rule-tally.ts).
 */
const INTERPRETER_WARMUP = 2;

/** Sampled time and evaluations of one rule on the interpreter: its rate. */
class Rate {
  warmup = INTERPRETER_WARMUP;
  seconds = 0;
  evaluations = 0;
  /** Evaluations waiting for the first sample to be costed. */
  uncosted = 0;

  /** Seconds per evaluation. */
  get value(): number | undefined {
    return this.evaluations > 0 ? this.seconds / this.evaluations : undefined;
  }
}

/** The counters of one rule (a module or matcher holds these by rule id, so counting is a field update). */
export class RuleCounter {
  evaluations = 0;
  matches = 0;
  costSeconds = 0;
  private readonly rate = new Rate();

  constructor(
    readonly rule: string,
    readonly source: Source,
  ) {}

  /** `n` more evaluations on the compiled tier that cost `seconds` (rule-tally.ts costs them). */
  costed(n: number, seconds: number): void {
    this.evaluations += n;
    this.costSeconds += seconds;
  }

  /** `n` more evaluations on the interpreter, costed at the rule's sampled rate. */
  evaluated(n: number): void {
    this.evaluations += n;
    const v = this.rate.value;
    if (v === undefined) this.rate.uncosted += n;
    else this.costSeconds += n * v;
  }

  /** Whether the rule has fewer than `min` timed evaluations on the interpreter (its rate is still rough); warm-up timings are not counted. */
  undersampled(min: number): boolean {
    return this.rate.evaluations < min;
  }

  /** A timing sample on the interpreter: the rule took `seconds` over `evaluations` events; evaluations waiting for a rate are costed at it. */
  sampled(seconds: number, evaluations: number): void {
    if (evaluations <= 0) return;
    const rate = this.rate;
    if (rate.warmup > 0) {
      rate.warmup--;
      return;
    }
    rate.seconds += seconds;
    rate.evaluations += evaluations;
    if (rate.uncosted !== 0) {
      this.costSeconds += rate.uncosted * rate.value!;
      rate.uncosted = 0;
    }
  }
}

/** Every rule's counters, by name and source. */
export class RuleStats {
  private readonly rows = new Map<string, RuleCounter>();
  /** Counts held elsewhere (a compiled module's memory) that figures() brings in first. */
  private readonly flushers = new Set<() => void>();

  /** Registers (or, with `on` false, unregisters) a source of counts that figures() flushes first. */
  pending(flush: () => void, on = true): void {
    if (on) this.flushers.add(flush);
    else this.flushers.delete(flush);
  }

  /** The counter of a rule (created on first use). */
  counter(rule: { name: string; source: Source }): RuleCounter {
    const key = `${rule.source}\0${rule.name}`;
    let c = this.rows.get(key);
    if (!c) {
      c = new RuleCounter(rule.name, rule.source);
      this.rows.set(key, c);
    }
    return c;
  }

  /** The figures of every rule counted so far (costs of rules never sampled read 0). */
  figures(): RuleFigure[] {
    for (const flush of this.flushers) flush();
    return [...this.rows.values()].map((c) => ({ rule: c.rule, source: c.source, evaluations: c.evaluations, matches: c.matches, costSeconds: c.costSeconds }));
  }
}

/** Figures ranked by cost, most costly first, with each rule's share of the total cost. */
export function rankByCost(figures: readonly RuleFigure[]): Array<RuleFigure & { share: number }> {
  const total = figures.reduce((s, f) => s + f.costSeconds, 0);
  return [...figures].sort((a, b) => b.costSeconds - a.costSeconds || b.evaluations - a.evaluations || (a.rule < b.rule ? -1 : 1)).map((f) => ({ ...f, share: total > 0 ? f.costSeconds / total : 0 }));
}
