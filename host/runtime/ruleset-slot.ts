// The detection engine's ruleset slot: which ruleset runs, and on which tier. It holds the running
// load result, the reference interpreter's matcher while a ruleset runs on the interpreter tier,
// the last compiled module with the ruleset it was compiled from (the kernel path's judge), and
// the module before it (the last good one, restored after a watchdog stop: kept compiled but not
// instantiated, so its linear memory, 9 MB resident with the built-in rules, is freed at the swap
// and a restore instantiates it again). Consumes the rulesets
// and modules that DetectionEngine's load and tier-up produce; produces what the next batch is
// judged by. Every change happens between two batches (evaluation is synchronous); a compiled
// swap carries the state region over to the new module.
import type { Gauge } from 'prom-client';
import type { LoadedRule, LoadResult, RuleMatcher } from '../engine/index.js';
import { prioritySeverity, type Priority } from '../engine/priority.js';
import { EVALUATOR_TIERS, type EvaluatorTier } from '../metrics/names.js';
import type { EngineStats } from './engine-types.js';
import { RuleModule, type CompiledRuleset } from './evaluator.js';

/** The rules a ruleset evaluates, in order: enabled, at least as severe as the minimum. */
export function selectRules(rules: readonly LoadedRule[], minPriority: Priority): LoadedRule[] {
  const min = prioritySeverity(minPriority);
  return rules.filter((r) => r.enabled && prioritySeverity(r.priority) <= min).sort((a, b) => a.index - b.index);
}

/** The running ruleset, its tier, and the compiled modules behind it. */
export class RulesetSlot {
  /** Decoded events go to the interpreter while set (interpreter engine or interpreter tier). */
  matcher: RuleMatcher | undefined;
  /** The last compiled module and the ruleset it was compiled from (the kernel path's judge). */
  module: RuleModule | undefined;
  moduleResult: LoadResult | undefined;
  /** The running ruleset (on either tier). */
  current: LoadResult | undefined;
  /** Increases on every new ruleset (and on a restore); not on a tier-up of the same ruleset. */
  generation = 0;
  /** The module before the running one: its compiled ruleset and watchdog, no instance. */
  private lastGood: { compiled: CompiledRuleset; watchdogMs: number; result: LoadResult } | undefined;

  /** `onNewRuleset` runs when a new ruleset (not a tier-up) goes live: the engine supersedes an older tier-up there. */
  constructor(
    private readonly stats: EngineStats,
    private readonly tierGauge: Gauge<string> | undefined,
    private readonly onNewRuleset: () => void,
  ) {
    this.setTier(stats.tier);
  }

  /** The interpreter-tier swap point: decoded events go to `matcher` from the next batch. */
  installInterpreter(result: LoadResult, matcher: RuleMatcher): void {
    const s0 = performance.now();
    this.newRuleset(result);
    this.matcher = matcher;
    this.setTier('interpreter');
    this.stats.lastSwapStallMs = performance.now() - s0;
  }

  /** The compiled swap point (a new ruleset, or the tier-up of the running one); the state region moves with it. */
  installCompiled(result: LoadResult, module: RuleModule, tierUp = false): void {
    const s0 = performance.now();
    if (this.module) module.adoptState(this.module);
    this.lastGood = this.module && this.moduleResult ? { compiled: this.module.compiled, watchdogMs: this.module.watchdogMs, result: this.moduleResult } : undefined;
    this.module = module;
    this.moduleResult = result;
    if (tierUp) this.stats.tierUps++;
    else this.newRuleset(result);
    this.matcher = undefined;
    this.setTier('wasm');
    this.stats.lastSwapStallMs = performance.now() - s0;
  }

  /**
   * After a watchdog stop of `stopped` (still the running module): goes back to the last good
   * module, if any, on a new instance that takes over the state region (the rule counts stop
   * there, as they did on the old instance, whose counts were read at its swap).
   */
  restoreLastGood(stopped: RuleModule): void {
    const good = this.lastGood;
    if (!good || stopped !== this.module) return;
    // it was instantiated and checked before: this fails only where memory is exhausted
    const created = RuleModule.create(good.compiled, good.watchdogMs);
    if (!created.ok) return;
    created.module.adoptState(stopped);
    this.module = created.module;
    this.moduleResult = good.result;
    this.lastGood = undefined;
    // On the interpreter tier the decoded path keeps its ruleset; only the kernel path's module goes back.
    if (!this.matcher) {
      this.current = good.result;
      this.generation++;
    }
    this.stats.restores++;
  }

  private newRuleset(result: LoadResult): void {
    this.onNewRuleset();
    this.current = result;
    this.generation++;
    this.stats.swaps++;
  }

  private setTier(tier: EvaluatorTier): void {
    this.stats.tier = tier;
    for (const t of EVALUATOR_TIERS) this.tierGauge?.set({ tier: t }, t === tier ? 1 : 0);
  }
}
