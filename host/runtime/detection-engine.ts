// The detection engine of `rae run`: holds the running ruleset, evaluates batches of events from
// the sources, and hands every match as an Alert to `onAlert`. `load` validates the rules, then
// compiles and warms the new module in the compile worker while the old one keeps evaluating,
// and swaps between two batches (evaluate() is synchronous, so a batch is judged by exactly one
// ruleset); the persistent state region moves with the swap. An invalid or uncompilable set is
// rejected with its diagnostics and the running one stays. A trap fails one batch (counted,
// logged); a batch stopped by the watchdog also restores the last good module.
// Decoded events go through evaluate(); kernel wire records through evaluateKernel() (no JS
// object per event, only matches are decoded). `engine: 'interpreter'` keeps the reference
// interpreter reachable behind the same interface.
import { loadRules, type LoadedRule, type LoadResult, type RulesFile } from '../engine/index.js';
import { RuleMatcher, type RuleMatching } from '../engine/matcher.js';
import { prioritySeverity, type Priority } from '../engine/priority.js';
import type { Alert } from '../output/alert.js';
import { alertFor } from '../output/from-match.js';
import type { Metrics } from '../metrics/index.js';
import { FieldEvent } from '../sources/field-event.js';
import type { SourceEvent } from '../sources/types.js';
import { KernelIngest } from './kernel-ingest.js';
import { RuleCompiler, warmPlan } from './compiler.js';
import type { RuntimeError } from './errors.js';
import { RuleModule, type BatchResult, type CompiledRuleset } from './evaluator.js';

export interface DetectionEngineOptions {
  ruleMatching: RuleMatching;
  minPriority: Priority;
  hostname: string;
  onAlert: (alert: Alert) => void;
  /** 'wasm' (default) or the reference 'interpreter'. */
  engine?: 'wasm' | 'interpreter';
  /** Watchdog deadline per evaluate call, ms (default 1000; 0 = off). */
  watchdogMs?: number;
  /** Where failures are reported (default: a line on stderr). */
  onError?: (error: RuntimeError) => void;
  /** Metrics hooks: compile time per ruleset, events of failed batches (trap / watchdog). */
  metrics?: Pick<Metrics, 'compileTime' | 'eventsDropped'>;
}

/** What `load` did. */
export interface LoadOutcome {
  /** True when the new ruleset is now running. */
  swapped: boolean;
  result: LoadResult;
  /** Why a valid ruleset could not be compiled (then the old one keeps running). */
  errors?: RuntimeError[];
}

/** Counters and last timings of the evaluator, for metrics. */
export interface EngineStats {
  batches: number;
  failedBatches: number;
  traps: number;
  timeouts: number;
  restores: number;
  swaps: number;
  /** Main-thread time of the last swap itself (state carry-over + switch), ms. */
  lastSwapStallMs: number;
  /** Main-thread time spent instantiating and checking the new module before the swap, ms. */
  lastPrepareMs: number;
  /** Compile worker time of the last load (codegen + asc + checks), ms. */
  lastCompileMs: number;
  lastWarmMs: number;
  /** load() call to the new module running, ms. */
  lastChangeToLiveMs: number;
}

/** The rules a ruleset evaluates, in order: enabled, at least as severe as the minimum. */
export function selectRules(rules: readonly LoadedRule[], minPriority: Priority): LoadedRule[] {
  const min = prioritySeverity(minPriority);
  return rules.filter((r) => r.enabled && prioritySeverity(r.priority) <= min).sort((a, b) => a.index - b.index);
}

function countBySource(events: readonly SourceEvent[]): Map<SourceEvent['source'], number> {
  const out = new Map<SourceEvent['source'], number>();
  for (const ev of events) out.set(ev.source, (out.get(ev.source) ?? 0) + 1);
  return out;
}

/** Evaluates events against the current ruleset; swaps rulesets between batches. */
export class DetectionEngine {
  private matcher: RuleMatcher | undefined;
  private module: RuleModule | undefined;
  private lastGood: { module: RuleModule; result: LoadResult } | undefined;
  private current: LoadResult | undefined;
  private evaluated = 0;
  private generation = 0;
  private loading: Promise<unknown> = Promise.resolve();
  private readonly compiler = new RuleCompiler();
  private readonly kernel = new KernelIngest();
  private readonly counters: EngineStats = {
    batches: 0, failedBatches: 0, traps: 0, timeouts: 0, restores: 0, swaps: 0,
    lastSwapStallMs: 0, lastPrepareMs: 0, lastCompileMs: 0, lastWarmMs: 0, lastChangeToLiveMs: 0,
  };

  constructor(private readonly options: DetectionEngineOptions) {}

  /** Loads rules files; the new set replaces the running one only if it is valid and compiles. */
  load(files: readonly RulesFile[]): Promise<LoadOutcome> {
    const next = this.loading.then(() => this.loadNow(files));
    this.loading = next.catch(() => undefined);
    return next;
  }

  private async loadNow(files: readonly RulesFile[]): Promise<LoadOutcome> {
    const t0 = performance.now();
    const result = loadRules(files);
    if (!result.ok) return { swapped: false, result };
    if (this.options.engine === 'interpreter') {
      this.matcher = new RuleMatcher(result.ruleset, this.options);
      this.install(result);
      return { swapped: true, result };
    }
    const compiled = await this.compiler.compile(selectRules(result.ruleset.rules, this.options.minPriority));
    if (!compiled.ok) return { swapped: false, result, errors: compiled.errors };
    this.options.metrics?.compileTime(compiled.compiled.compileMs / 1000);
    const p0 = performance.now();
    const created = RuleModule.create(compiled.compiled, this.options.watchdogMs ?? 1000);
    if (!created.ok) return { swapped: false, result, errors: [created.error] };
    const p1 = performance.now();
    await created.module.pretouch();
    await created.module.warmUp(warmPlan(compiled.compiled.generated));
    this.counters.lastPrepareMs = p1 - p0;
    this.install(result, created.module);
    Object.assign(this.counters, { lastCompileMs: compiled.compiled.compileMs, lastWarmMs: compiled.compiled.warmMs, lastChangeToLiveMs: performance.now() - t0 });
    return { swapped: true, result };
  }

  /**
   * Installs an already compiled ruleset (byte-level sources and tools; load() uses it): checks
   * and instantiates it, carries the state region over, and swaps between two batches.
   */
  swapCompiled(compiled: CompiledRuleset, result: LoadResult): { ok: true } | { ok: false; error: RuntimeError } {
    const created = RuleModule.create(compiled, this.options.watchdogMs ?? 1000);
    if (!created.ok) return created;
    this.install(result, created.module);
    return { ok: true };
  }

  /** The swap point: runs between two evaluate() calls; the state region moves with it. */
  private install(result: LoadResult, module?: RuleModule): void {
    const s0 = performance.now();
    if (module) {
      if (this.module) module.adoptState(this.module);
      this.lastGood = this.module && this.current ? { module: this.module, result: this.current } : undefined;
      this.module = module;
      this.counters.swaps++;
    }
    this.current = result;
    this.generation++;
    if (module) this.counters.lastSwapStallMs = performance.now() - s0;
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

  /** Evaluator counters and timings. */
  get stats(): Readonly<EngineStats> {
    return this.counters;
  }

  /** The running compiled module (undefined with the interpreter or before the first load). */
  get ruleModule(): RuleModule | undefined {
    return this.module;
  }

  /** Evaluates one batch synchronously (a batch is never split across two rulesets); returns the alert count. */
  evaluate(events: readonly SourceEvent[]): number {
    if (this.options.engine === 'interpreter') return this.evaluateInterpreted(events);
    const module = this.module;
    if (!module) return 0;
    this.counters.batches++;
    const r = module.evaluate(events, this.options.ruleMatching === 'first');
    this.evaluated += events.length;
    if (!this.settle(module, r, countBySource(events))) return 0;
    if (!r.ok) return 0;
    for (const m of r.matches) this.options.onAlert(alertFor(m.rule, events[m.event]!, this.options.hostname));
    return r.matches.length;
  }

  /**
   * Evaluates a batch of kernel wire records (probes/src/events.h) as the capture addon delivers
   * them: process records update the thread table in the module's state region, syscall records
   * become eval records without JS objects; only matched events are decoded, for their alerts.
   * Record times are CLOCK_BOOTTIME; `bootToEpochNs` turns them into alert times. Returns the
   * alert count (0 with the interpreter engine, which needs decoded events).
   */
  evaluateKernel(view: Uint8Array, bytes: number, bootToEpochNs = 0n): number {
    const module = this.module;
    if (!module || this.options.engine === 'interpreter') return 0;
    this.counters.batches++;
    const offsets = this.kernel.ingest(module, view, bytes);
    const r = module.evaluateRecords('syscall', offsets.length, this.options.ruleMatching === 'first');
    this.evaluated += offsets.length;
    const lazy: SourceEvent[] = [];
    const eventAt = (i: number): SourceEvent => {
      const fields = this.kernel.fieldsOf(module, view, offsets[i]!, i);
      const timeNs = new DataView(view.buffer, view.byteOffset + offsets[i]!).getBigUint64(0, true) + bootToEpochNs;
      return (lazy[i] ??= { source: 'syscall', timeNs, evtType: fields['evt.type'] as string, fields: new FieldEvent(fields, { source: 'syscall', timeNs, num: BigInt(this.evaluated - offsets.length + i + 1) }) });
    };
    if (!this.settle(module, r, new Map([['syscall', offsets.length]]))) return 0;
    if (!r.ok) return 0;
    for (const m of r.matches) this.options.onAlert(alertFor(m.rule, eventAt(m.event), this.options.hostname));
    return r.matches.length;
  }

  /** Counts a failed batch; after a watchdog stop, goes back to the last good module. */
  private settle(module: RuleModule, r: BatchResult, bySource: ReadonlyMap<SourceEvent['source'], number>): boolean {
    if (r.ok) return true;
    this.counters.failedBatches++;
    for (const [source, n] of bySource) this.options.metrics?.eventsDropped(source, r.error.code === 'ETIMEOUT' ? 'watchdog' : 'trap', n);
    if (r.error.code === 'ETIMEOUT') this.counters.timeouts++;
    else this.counters.traps++;
    const report = this.options.onError ?? ((e: RuntimeError) => process.stderr.write(`engine: batch failed (${e.code}): ${e.message}\n`));
    report(r.error);
    const good = this.lastGood;
    if (r.error.code === 'ETIMEOUT' && good && module === this.module) {
      good.module.adoptState(module);
      this.module = good.module;
      this.lastGood = undefined;
      this.current = good.result;
      this.generation++;
      this.counters.restores++;
    }
    return false;
  }

  private evaluateInterpreted(events: readonly SourceEvent[]): number {
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

  /** Stops the compile worker. */
  async close(): Promise<void> {
    await this.compiler.close();
  }
}
