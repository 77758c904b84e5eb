// The detection engine of `rae run`: holds the running ruleset, evaluates batches of events from
// the sources, and hands every match as an Alert to `onAlert`. `load` validates the rules, then
// compiles and warms the new module in the compile worker while the old one keeps evaluating,
// and swaps between two batches (evaluate() is synchronous, so a batch is judged by exactly one
// ruleset); the persistent state region moves with the swap. An invalid or uncompilable set is
// rejected with its diagnostics and the running one stays. A failed batch (a trap, an exception
// while encoding an event or rendering an alert, a watchdog stop) is split and judged again
// until the events that fail on their own are found (isolate.ts): the others get their alerts
// exactly once, the failed ones are counted as dropped (trap / watchdog), reported and announced
// by one internal alert per batch (failure-report.ts); a watchdog stop also restores the last
// good module once the batch is done (the whole batch is judged by one module).
// A compile is bounded (compileTimeoutMs, the worker's heap cap) and a newer valid load stops an
// older one's compile (ECANCELED) instead of queueing behind it.
// Decoded events go through evaluate(); kernel wire records through evaluateKernel() (no JS
// object per event, only matches are decoded). `engine: 'interpreter'` keeps the reference
// interpreter reachable behind the same interface.
//
// Tiers (like a JIT): `load(files, { interpreterFirst: true })` puts a valid new ruleset live at
// once on the reference interpreter (differential-tested equal to the compiled evaluator), swaps
// between two batches, and compiles in the background; when the module is compiled and warmed,
// and no newer ruleset has superseded it, a second swap between two batches moves the same
// ruleset to WASM. A valid load that comes while a compile runs stops that compile (the worker is
// restarted): only the newest ruleset is compiled. A rule the code generator cannot compile never
// gets here: the load refuses it (RAE_ERR_UNSUPPORTED, engine facade). A build failure (the
// compiler or its worker failing) leaves the interpreter tier running: reported through
// onError, counted (ruleset failures, reason compile) and visible in stats.tier and the
// evaluator-tier gauge. An invalid ruleset never replaces the running one, whatever its tier.
// close() stops a pending compile (its `compiled` promise settles as 'closed'). The interpreter
// tier runs under the same watchdog deadline as the compiled module (its regexes, like the
// module's, never backtrack); a stopped batch fails (counted) and the tier-up still comes.
// The kernel byte path (evaluateKernel, kernel-path.ts) needs a compiled module: while a ruleset
// is on the interpreter tier, kernel records keep going into the last compiled module (the previous
// ruleset) and its state region, which moves to the new module at the tier-up swap; that module
// judges the rules the two rulesets have in common and the reference interpreter the added and
// changed syscall rules (kernel-overlay.ts), so the new ruleset is live on the byte path from
// the first swap too. The first load of an engine has no compiled module to fall back on, so
// callers compile it first (the resources controller does: `rae run` starts serving on WASM);
// without one, evaluateKernel judges nothing and returns why (KernelUnready), a state the source
// checks: it counts the batch as dropped (no_ruleset).
// Parts: ruleset-slot.ts (the running ruleset, its tier, the last good module), batch-judge.ts
// (isolation, failure report), kernel-path.ts (the byte path, and container starts judged again
// when their metadata comes late: late-starts.ts); this file loads, compiles and
// tiers up, and composes them.
import type { Gauge } from 'prom-client';
import { type LoadResult, loadRules, RuleMatcher, type RuleFigure, RuleStats, type RulesFile, type SourceEvent } from '../engine/index.js';
import { METRICS } from '../metrics/names.js';
import { BatchJudge } from './batch-judge.js';
import { RuleCompiler, warmPlan, type ModuleFrom } from './compiler.js';
import { type DetectionEngineOptions, type EngineStats, type KernelUnready, type LoadOptions, type LoadOutcome, newEngineStats, type TierUp } from './engine-types.js';
import { runtimeError, type RuntimeError } from './errors.js';
import { RuleModule, type CompiledRuleset } from './evaluator.js';
import { KernelPath } from './kernel-path.js';
import { RulesetSlot, selectRules } from './ruleset-slot.js';

export type { TierUp } from './engine-types.js';
export { selectRules } from './ruleset-slot.js';

/** What precompile() loaded, and where its module came from once compiled. */
interface Precompiled {
  files: readonly RulesFile[];
  result: LoadResult;
  from?: ModuleFrom;
}

type Prepared = { ok: true; module: RuleModule; compiled: CompiledRuleset; prepareMs: number; from: ModuleFrom } | { ok: false; errors: RuntimeError[] };

/** The stats timings of a prepared module. */
function preparedTimes(p: Extract<Prepared, { ok: true }>): Pick<EngineStats, 'lastPrepareMs' | 'lastCompileMs' | 'lastWarmMs' | 'lastModuleFrom'> {
  return { lastPrepareMs: p.prepareMs, lastCompileMs: p.compiled.compileMs, lastWarmMs: p.compiled.warmMs, lastModuleFrom: p.from };
}

/** A ruleset on the interpreter tier waiting for its compiled module. */
interface TierTarget {
  result: LoadResult;
  t0: number;
  /** Aborted when a newer load comes: the compile stops instead of finishing for nothing. */
  signal: AbortSignal;
  settle: (u: TierUp) => void;
}

/** Evaluates events against the current ruleset; swaps rulesets between batches. */
export class DetectionEngine {
  private readonly slot: RulesetSlot;
  private readonly judge: BatchJudge;
  private readonly kernel: KernelPath;
  private readonly counters: EngineStats;
  private target: TierTarget | undefined;
  private tiering: Promise<void> | undefined;
  private closed = false;
  private loading: Promise<unknown> = Promise.resolve();
  /** The rules precompile() loaded, for the load() of the same files that follows it (`rae run`'s start: one loadRules instead of two). */
  private precompiled: Precompiled | undefined;
  /** Aborts the compile of the newest load or tier-up target when a newer ruleset comes. */
  private compileAbort: AbortController | undefined;
  private readonly compiler: RuleCompiler;
  /** Per-rule figures of both tiers, kept across reloads (undefined with ruleCounters false). */
  private readonly ruleStats: RuleStats | undefined;
  /** Whether the compile worker is building: the rule figures' profiles wait meanwhile (rule-tally.ts holdProfiles). */
  private readonly compiling = (): boolean => this.compiler.building;

  constructor(private readonly options: DetectionEngineOptions) {
    const counters = options.ruleCounters ?? true;
    this.ruleStats = counters ? new RuleStats() : undefined;
    this.compiler = new RuleCompiler({
      idleMs: options.compilerIdleMs,
      onIdleStop: options.onCompilerIdleStop,
      whileBuilding: options.onCompilerBusy,
      cacheDir: options.moduleCacheDir,
      shippedDir: options.shippedModuleDir,
      compilerCacheDir: options.compilerCacheDir,
      shippedCompilerDir: options.shippedCompilerDir,
      keepBackend: options.compilerKeepsBackend,
      timeoutMs: options.compileTimeoutMs,
      maxHeapMb: options.compileWorkerHeapMb,
      counters,
    });
    if (this.ruleStats) options.metrics?.ruleFigures?.(() => this.ruleFigures);
    const tierGauge = options.metrics?.registry?.getSingleMetric(METRICS.evaluatorTier.name) as Gauge<string> | undefined;
    this.counters = newEngineStats(options.engine === 'interpreter' ? 'interpreter' : 'wasm');
    this.slot = new RulesetSlot(this.counters, tierGauge, () => this.supersedeTarget());
    this.judge = new BatchJudge(options, this.counters, this.slot);
    this.kernel = new KernelPath(options, this.slot, this.judge, this.counters);
  }

  /**
   * Loads rules files; the new set replaces the running one only if it is valid (and, unless
   * interpreter-first, compiles). A valid set stops the compile of an older load still in
   * progress (that load resolves unswapped with ECANCELED, a tier-up as superseded), so a slow
   * compile never holds back a newer ruleset; an invalid set stops nothing.
   */
  load(files: readonly RulesFile[], opts: LoadOptions = {}): Promise<LoadOutcome> {
    const t0 = performance.now();
    // a ruleset put on the interpreter first is compiled next: the compile worker starts now, so it
    // boots and loads the compiler while this thread parses the rules (an invalid set leaves it idle)
    if (opts.interpreterFirst && this.options.engine !== 'interpreter' && !this.closed) this.compiler.prestart();
    const ahead = this.takePrecompiled(files);
    const result = ahead?.result ?? loadRules(files, { limits: this.options.expandLimits });
    let signal: AbortSignal | undefined;
    if (result.ok) {
      this.compileAbort?.abort();
      this.compileAbort = new AbortController();
      signal = this.compileAbort.signal;
    }
    const next = this.loading.then(() => this.loadNow(result, t0, opts, signal, ahead));
    this.loading = next.catch(() => undefined);
    return next;
  }

  private async loadNow(result: LoadResult, t0: number, opts: LoadOptions, signal: AbortSignal | undefined, ahead: Precompiled | undefined): Promise<LoadOutcome> {
    if (!result.ok || !signal) return { swapped: false, result };
    if (signal.aborted) return { swapped: false, result, errors: [runtimeError('ECANCELED', 'a newer load superseded this ruleset before it was compiled')] };
    if (this.options.engine === 'interpreter' || opts.interpreterFirst) {
      this.slot.installInterpreter(result, new RuleMatcher(result.ruleset, this.options, this.ruleStats));
      this.counters.lastChangeToLiveMs = performance.now() - t0;
      if (this.options.engine === 'interpreter') return { swapped: true, result, tier: 'interpreter' };
      return { swapped: true, result, tier: 'interpreter', compiled: this.tierUp(result, t0, signal) };
    }
    const prepared = await this.prepare(result, signal);
    if (!prepared.ok) return { swapped: false, result, errors: prepared.errors };
    this.slot.installCompiled(result, prepared.module);
    const live = performance.now() - t0;
    Object.assign(this.counters, preparedTimes(prepared), { lastChangeToLiveMs: live, lastChangeToCompiledMs: live });
    // the precompile's module, held in the compiler's memory since: it came from where the precompile took it
    return { swapped: true, result, tier: 'wasm', from: prepared.from === 'memory' ? (ahead?.from ?? 'memory') : prepared.from };
  }

  /** Compiles (worker), instantiates, checks and warms a ruleset's module; nothing is swapped. */
  private async prepare(result: LoadResult, signal?: AbortSignal): Promise<Prepared> {
    const compiled = await this.compiler.compile(selectRules(result.ruleset.rules, this.options.minPriority), signal);
    if (!compiled.ok) return { ok: false, errors: compiled.errors };
    this.options.metrics?.compileTime(compiled.compiled.compileMs / 1000);
    const p0 = performance.now();
    const created = RuleModule.create(compiled.compiled, this.options.watchdogMs ?? 1000);
    if (!created.ok) return { ok: false, errors: [created.error] };
    const prepareMs = performance.now() - p0;
    await created.module.pretouch();
    await created.module.warmUp(warmPlan(compiled.compiled.generated));
    if (this.ruleStats) created.module.countInto(this.ruleStats, this.options.costSampleEvery, this.compiling);
    return { ok: true, module: created.module, compiled: compiled.compiled, prepareMs, from: compiled.from };
  }

  /** Schedules the background compile of the ruleset just put on the interpreter tier. */
  private tierUp(result: LoadResult, t0: number, signal: AbortSignal): Promise<TierUp> {
    return new Promise<TierUp>((settle) => {
      this.target = { result, t0, settle, signal };
      if (!this.tiering) this.tiering = this.tierLoop();
    });
  }

  /** Compiles the newest waiting ruleset until none waits; installs only a ruleset still running. */
  private async tierLoop(): Promise<void> {
    await Promise.resolve(); // so that `tiering` is set before the loop can end
    for (;;) {
      const t = this.target;
      if (!t || this.closed) {
        this.tiering = undefined;
        return;
      }
      // An exception (a compiler bug) must not end the loop: it is a failed compile like any other.
      const prepared = await this.prepare(t.result, t.signal).catch((err: Error): Prepared => ({ ok: false, errors: [runtimeError('ECOMPILE', `the compiler failed: ${err.message}`)] }));
      if (this.closed) continue; // close() settled the target
      if (t.signal.aborted && this.target === t) {
        // a newer valid ruleset stopped this compile and goes live next
        this.target = undefined;
        t.settle({ state: 'superseded' });
      }
      if (this.target !== t) {
        this.counters.superseded++;
        continue;
      }
      this.target = undefined;
      if (!prepared.ok) {
        this.counters.tierFailures++;
        this.options.metrics?.rulesetFailed?.('compile');
        const why = prepared.errors.map((e) => `${e.code}: ${e.message}`).join('; ');
        this.judge.report('tier-up failed', runtimeError(prepared.errors[0]?.code ?? 'ECOMPILE', `the new ruleset stays on the reference interpreter: it does not compile (${why})`));
        t.settle({ state: 'failed', errors: prepared.errors });
        continue;
      }
      this.slot.installCompiled(t.result, prepared.module, true);
      const ms = performance.now() - t.t0;
      Object.assign(this.counters, preparedTimes(prepared), { lastChangeToCompiledMs: ms });
      t.settle({ state: 'wasm', changeToCompiledMs: ms });
    }
  }

  /**
   * Installs an already compiled ruleset (byte-level sources and tools; load() uses it): checks
   * and instantiates it, carries the state region over, and swaps between two batches.
   */
  swapCompiled(compiled: CompiledRuleset, result: LoadResult): { ok: true } | { ok: false; error: RuntimeError } {
    const created = RuleModule.create(compiled, this.options.watchdogMs ?? 1000);
    if (!created.ok) return created;
    if (this.ruleStats) created.module.countInto(this.ruleStats, this.options.costSampleEvery, this.compiling);
    this.slot.installCompiled(result, created.module);
    return { ok: true };
  }

  /** A new ruleset goes live: supersedes any compile waiting for an older one. */
  private supersedeTarget(): void {
    if (this.target) {
      this.target.settle({ state: 'superseded' });
      this.target = undefined;
    }
  }

  /** The running load result, if any. */
  get ruleset(): LoadResult | undefined {
    return this.slot.current;
  }

  /** Increases on every new ruleset (and on a restore); not on a tier-up of the same ruleset. */
  get rulesetGeneration(): number {
    return this.slot.generation;
  }

  /** Events evaluated since start. */
  get eventsEvaluated(): number {
    return this.judge.evaluated;
  }

  /** Every rule's evaluations, matches and cost so far, on both tiers (a rule removed by a reload keeps its row); empty with ruleCounters false. */
  get ruleFigures(): RuleFigure[] {
    return this.ruleStats?.figures() ?? [];
  }

  /** Evaluator counters and timings. */
  get stats(): Readonly<EngineStats> {
    return this.counters;
  }

  /** The last compiled module (undefined with the interpreter engine or before the first compiled load). */
  get ruleModule(): RuleModule | undefined {
    return this.slot.module;
  }

  /** Evaluates one batch synchronously (a batch is never split across two rulesets); returns the alert count. */
  evaluate(events: readonly SourceEvent[]): number {
    return this.judge.decoded(events);
  }

  /**
   * Evaluates a batch of kernel wire records (probes/src/events.h) as the capture addon delivers
   * them (kernel-path.ts); record times are CLOCK_BOOTTIME, `bootToEpochNs` turns them into alert
   * times. Returns the alert count, or why nothing was judged (KernelUnready: no compiled module
   * yet, the interpreter engine, no translator), which the caller counts as dropped.
   */
  evaluateKernel(view: Uint8Array, bytes: number, bootToEpochNs = 0n): number | KernelUnready {
    return this.kernel.evaluate(view, bytes, bootToEpochNs);
  }

  /**
   * The metadata of container `key` came (rae run: ContainerTable.onLearned): its start, if it was
   * judged without it, is judged once more (kernel-path.ts judgeLate); returns the alert count.
   */
  containerLearned(key: string): number {
    return this.kernel.judgeLate(key);
  }

  /** Why kernel records would be judged by nothing now (see evaluateKernel), or undefined when they would be judged. */
  get kernelUnready(): KernelUnready | undefined {
    return this.kernel.unready;
  }

  /**
   * Compiles the module of `files` ahead of a load (nothing is installed), so that a later
   * load() of the same rules finds it built or building. `rae run` starts this before opening
   * its database, so the compile worker and PGlite's first start share the two cores. Invalid
   * rules or a failed compile resolve quietly: the load that follows reports them.
   */
  async precompile(files: readonly RulesFile[]): Promise<void> {
    const result = loadRules(files, { limits: this.options.expandLimits });
    const ahead: Precompiled = { files, result };
    this.precompiled = ahead;
    if (result.ok && this.options.engine !== 'interpreter') {
      const c = await this.compiler.compile(selectRules(result.ruleset.rules, this.options.minPriority)).catch(() => undefined);
      if (c?.ok) ahead.from = c.from;
    }
  }

  /** The precompile's load result when `files` are the ones it loaded (once: the first load after it). */
  private takePrecompiled(files: readonly RulesFile[]): Precompiled | undefined {
    const p = this.precompiled;
    this.precompiled = undefined;
    const same = p && p.files.length === files.length && p.files.every((f, i) => f.name === files[i]!.name && f.text === files[i]!.text);
    return same ? p : undefined;
  }

  /** Modules the compiler has built (neither from its memory nor from the module cache). */
  get moduleBuilds(): number {
    return this.compiler.builds;
  }

  /** The compile deadline, ms (0: none); applies from the next compile on (a configuration reload). */
  set compileTimeoutMs(ms: number) {
    this.compiler.timeoutMs = ms;
  }

  /** Whether the compile worker is running (it stops after `compilerIdleMs`). */
  get compileWorkerRunning(): boolean {
    return this.compiler.workerRunning;
  }

  /** Stops a pending background compile (its `compiled` promise settles as 'closed') and the compile worker. */
  async close(): Promise<void> {
    this.closed = true;
    this.compileAbort?.abort();
    this.target?.settle({ state: 'closed' });
    this.target = undefined;
    await this.compiler.close();
    await this.tiering;
  }
}
