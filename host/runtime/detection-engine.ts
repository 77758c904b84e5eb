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
// The kernel byte path (evaluateKernel) needs a compiled module: while a ruleset is on the
// interpreter tier, kernel records keep going into the last compiled module (the previous
// ruleset) and its state region, which moves to the new module at the tier-up swap; that module
// judges the rules the two rulesets have in common and the reference interpreter the added and
// changed syscall rules (kernel-overlay.ts), so the new ruleset is live on the byte path from
// the first swap too. The first load of an engine has no compiled module to fall back on, so
// callers compile it first (the resources controller does: `rae run` starts serving on WASM);
// without one, evaluateKernel throws and the source counts the batch as dropped.
import type { Gauge } from 'prom-client';
import { type ExpandLimits, FieldEvent, type LoadedRule, type LoadResult, loadRules, RuleMatcher, type RuleFigure, type RuleMatching, RuleStats, type RulesBounds, type RulesFile, type SourceEvent } from '../engine/index.js';
import { prioritySeverity, type Priority } from '../engine/priority.js';
import type { Alert } from '../output/alert.js';
import { alertFor } from '../output/from-match.js';
import type { Metrics } from '../metrics/index.js';
import { EVALUATOR_TIERS, METRICS, type EvaluatorTier } from '../metrics/names.js';
import { RuleCompiler, warmPlan, type ModuleFrom } from './compiler.js';
import { runtimeError, type RuntimeError } from './errors.js';
import { guardedCall, isWatchdogTimeout } from './watchdog.js';
import { RuleModule, type CompiledRuleset } from './evaluator.js';
import { evaluationFailedAlert, failedCounts } from './failure-report.js';
import { DEFAULT_ISOLATION_BUDGET, judgeIsolated, type IsolationBudget, type Isolated, type Judgment } from './isolate.js';
import { KernelOverlay } from './kernel-overlay.js';
import type { Referred } from './reference.js';
import type { RecordTranslator } from './translator.js';

export type { EvaluatorTier } from '../metrics/names.js';

export interface DetectionEngineOptions {
  ruleMatching: RuleMatching;
  minPriority: Priority;
  hostname: string;
  onAlert: (alert: Alert) => void;
  /** The syscall source's translator (host/sources/syscall/ingest.ts KernelIngest): evaluateKernel throws without one. */
  kernel?: RecordTranslator;
  /** 'wasm' (default) or the reference 'interpreter'. */
  engine?: 'wasm' | 'interpreter';
  /** Watchdog deadline per evaluate call, ms (default 1000; 0 = off). */
  watchdogMs?: number;
  /** Failed calls spent isolating the failing events of one batch (default DEFAULT_ISOLATION_BUDGET: 64, of which 8 watchdog stops). */
  isolation?: IsolationBudget;
  /** Stop the compile worker after this many idle ms (default 0: keep it; `rae run` uses rules.compilerIdleSeconds). */
  compilerIdleMs?: number;
  /** Deadline of one compile in the worker, ms (default 120 s; 0: none); past it the worker is stopped and the load fails with ECOMPILETIMEOUT. */
  compileTimeoutMs?: number;
  /** The compile worker's V8 heap cap, MB (default 2048): a build that needs more fails with EWORKER instead of taking the process down. */
  compileWorkerHeapMb?: number;
  /** Keep built modules here and load unchanged rulesets from here (module-cache.ts; `rae run`: <stateDir>/module-cache). */
  moduleCacheDir?: string;
  /** Bounds of the expanded rule conditions (default: the engine's DEFAULT_EXPAND_LIMITS). */
  expandLimits?: Partial<ExpandLimits & RulesBounds>;
  /** Longest field value an alert carries, UTF-8 bytes (default 64 KiB; `rae run`: rules.maxOutputFieldBytes); longer ones are cut and marked. */
  maxOutputFieldBytes?: number;
  /** Count every rule's evaluations, matches and cost on both tiers (default true; docs/rule-cost.md). */
  ruleCounters?: boolean;
  /** With ruleCounters: one compiled evaluate call in this many is timed rule by rule (default 64). */
  costSampleEvery?: number;
  /** Where failures are reported (default: a line on stderr). */
  onError?: (error: RuntimeError) => void;
  /** Metrics hooks: compile time per ruleset, events of failed batches (trap / watchdog); optionally tier compile failures, events judged by the reference interpreter for the compiled tier, the tier gauge (from the registry) and the rule figures' source. */
  metrics?: Pick<Metrics, 'compileTime' | 'eventsDropped'> & Partial<Pick<Metrics, 'rulesetFailed' | 'eventsReferenceJudged' | 'registry' | 'ruleFigures'>>;
}

/** How `load` installs a valid ruleset. */
export interface LoadOptions {
  /** Serve it with the reference interpreter at once and move it to WASM when compiled (default: compile first). */
  interpreterFirst?: boolean;
}

/** How the background compile of an interpreter-first ruleset ended. */
export type TierUp = { state: 'wasm'; changeToCompiledMs: number } | { state: 'superseded' } | { state: 'failed'; errors: RuntimeError[] } | { state: 'closed' };

/** What `load` did. */
export interface LoadOutcome {
  /** True when the new ruleset is now running. */
  swapped: boolean;
  result: LoadResult;
  /** Why a valid ruleset could not be compiled (then the old one keeps running). */
  errors?: RuntimeError[];
  /** The tier the new ruleset went live on (when swapped). */
  tier?: EvaluatorTier;
  /** Compile-first loads: where the module came from (memory, the on-disk module cache, a build). */
  from?: ModuleFrom;
  /** Interpreter-first loads: settles when the ruleset runs on WASM, or why it never will. */
  compiled?: Promise<TierUp>;
}

/** Counters and last timings of the evaluator, for metrics. */
export interface EngineStats {
  batches: number;
  /** Batches with at least one event that could not be evaluated. */
  failedBatches: number;
  /** Events that could not be evaluated (failed on their own, or left when the isolation budget ran out). */
  failedEvents: number;
  /** Judging calls that failed, the first call of a batch and those of its isolation. */
  failedCalls: number;
  /** Failed batches by cause: a trap or exception only, or at least one watchdog stop. */
  traps: number;
  timeouts: number;
  restores: number;
  /** Rulesets installed (on either tier); a tier-up of the same ruleset is not counted here. */
  swaps: number;
  /** The tier judging decoded events now. */
  tier: EvaluatorTier;
  /** Interpreter-tier rulesets moved to their compiled module. */
  tierUps: number;
  /** Interpreter-tier rulesets whose compile failed (they stay on the interpreter). */
  tierFailures: number;
  /** Background compiles thrown away because a newer ruleset came first. */
  superseded: number;
  /** Main-thread time of the last swap itself (state carry-over + switch), ms. */
  lastSwapStallMs: number;
  /** Main-thread time spent instantiating and checking the new module before the swap, ms. */
  lastPrepareMs: number;
  /** Compile worker time of the last load (codegen + asc + checks), ms. */
  lastCompileMs: number;
  lastWarmMs: number;
  /** Where the last compiled module came from ('' before the first). */
  lastModuleFrom: ModuleFrom | '';
  /** load() call to the new ruleset running (on its first tier), ms. */
  lastChangeToLiveMs: number;
  /** load() call to the new ruleset running on WASM, ms. */
  lastChangeToCompiledMs: number;
}

/** The rules a ruleset evaluates, in order: enabled, at least as severe as the minimum. */
export function selectRules(rules: readonly LoadedRule[], minPriority: Priority): LoadedRule[] {
  const min = prioritySeverity(minPriority);
  return rules.filter((r) => r.enabled && prioritySeverity(r.priority) <= min).sort((a, b) => a.index - b.index);
}

/** A judgment of one range; an exception of the host (encoding an event, rendering an alert) fails the range as a trap does. */
function judged(run: () => Judgment<Alert>): Judgment<Alert> {
  try {
    return run();
  } catch (err) {
    return { ok: false, error: runtimeError('ETRAP', `evaluation failed: ${(err as Error)?.message ?? String(err)}`) };
  }
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
  /** Decoded events go to the interpreter while set (interpreter engine or interpreter tier). */
  private matcher: RuleMatcher | undefined;
  /** The last compiled module and the ruleset it was compiled from (the kernel path's judge). */
  private module: RuleModule | undefined;
  private moduleResult: LoadResult | undefined;
  private lastGood: { module: RuleModule; result: LoadResult } | undefined;
  /** The byte path's view of the interpreter-tier ruleset over the last compiled module (built on the first kernel batch). */
  private overlay: KernelOverlay | undefined;
  private current: LoadResult | undefined;
  private evaluated = 0;
  private generation = 0;
  private target: TierTarget | undefined;
  private tiering: Promise<void> | undefined;
  private closed = false;
  private loading: Promise<unknown> = Promise.resolve();
  /** The rules precompile() loaded, for the load() of the same files that follows it (`rae run`'s start: one loadRules instead of two). */
  private precompiled: { files: readonly RulesFile[]; result: LoadResult } | undefined;
  /** Aborts the compile of the newest load or tier-up target when a newer ruleset comes. */
  private compileAbort: AbortController | undefined;
  private readonly compiler: RuleCompiler;
  /** Per-rule figures of both tiers, kept across reloads (undefined with ruleCounters false). */
  private readonly ruleStats: RuleStats | undefined;
  private readonly tierGauge: Gauge<string> | undefined;
  private readonly counters: EngineStats = {
    batches: 0,
    failedBatches: 0,
    failedEvents: 0,
    failedCalls: 0,
    traps: 0,
    timeouts: 0,
    restores: 0,
    swaps: 0,
    tier: 'wasm',
    tierUps: 0,
    tierFailures: 0,
    superseded: 0,
    lastSwapStallMs: 0,
    lastPrepareMs: 0,
    lastCompileMs: 0,
    lastWarmMs: 0,
    lastModuleFrom: '',
    lastChangeToLiveMs: 0,
    lastChangeToCompiledMs: 0,
  };

  constructor(private readonly options: DetectionEngineOptions) {
    const counters = options.ruleCounters ?? true;
    this.ruleStats = counters ? new RuleStats() : undefined;
    this.compiler = new RuleCompiler({ idleMs: options.compilerIdleMs, cacheDir: options.moduleCacheDir, timeoutMs: options.compileTimeoutMs, maxHeapMb: options.compileWorkerHeapMb, counters });
    if (this.ruleStats) options.metrics?.ruleFigures?.(() => this.ruleFigures);
    this.tierGauge = options.metrics?.registry?.getSingleMetric(METRICS.evaluatorTier.name) as Gauge<string> | undefined;
    this.setTier(options.engine === 'interpreter' ? 'interpreter' : 'wasm');
  }

  /**
   * Loads rules files; the new set replaces the running one only if it is valid (and, unless
   * interpreter-first, compiles). A valid set stops the compile of an older load still in
   * progress (that load resolves unswapped with ECANCELED, a tier-up as superseded), so a slow
   * compile never holds back a newer ruleset; an invalid set stops nothing.
   */
  load(files: readonly RulesFile[], opts: LoadOptions = {}): Promise<LoadOutcome> {
    const t0 = performance.now();
    const result = this.takePrecompiled(files) ?? loadRules(files, { limits: this.options.expandLimits });
    let signal: AbortSignal | undefined;
    if (result.ok) {
      this.compileAbort?.abort();
      this.compileAbort = new AbortController();
      signal = this.compileAbort.signal;
    }
    const next = this.loading.then(() => this.loadNow(result, t0, opts, signal));
    this.loading = next.catch(() => undefined);
    return next;
  }

  private async loadNow(result: LoadResult, t0: number, opts: LoadOptions, signal: AbortSignal | undefined): Promise<LoadOutcome> {
    if (!result.ok || !signal) return { swapped: false, result };
    if (signal.aborted) return { swapped: false, result, errors: [runtimeError('ECANCELED', 'a newer load superseded this ruleset before it was compiled')] };
    if (this.options.engine === 'interpreter' || opts.interpreterFirst) {
      this.installInterpreter(result);
      this.counters.lastChangeToLiveMs = performance.now() - t0;
      if (this.options.engine === 'interpreter') return { swapped: true, result, tier: 'interpreter' };
      return { swapped: true, result, tier: 'interpreter', compiled: this.tierUp(result, t0, signal) };
    }
    const prepared = await this.prepare(result, signal);
    if (!prepared.ok) return { swapped: false, result, errors: prepared.errors };
    this.install(result, prepared.module);
    const live = performance.now() - t0;
    Object.assign(this.counters, preparedTimes(prepared), { lastChangeToLiveMs: live, lastChangeToCompiledMs: live });
    return { swapped: true, result, tier: 'wasm', from: prepared.from };
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
    if (this.ruleStats) created.module.countInto(this.ruleStats, this.options.costSampleEvery);
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
        this.report('tier-up failed', runtimeError(prepared.errors[0]?.code ?? 'ECOMPILE', `the new ruleset stays on the reference interpreter: it does not compile (${why})`));
        t.settle({ state: 'failed', errors: prepared.errors });
        continue;
      }
      this.install(t.result, prepared.module, true);
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
    if (this.ruleStats) created.module.countInto(this.ruleStats, this.options.costSampleEvery);
    this.install(result, created.module);
    return { ok: true };
  }

  /** A new ruleset goes live: supersedes any compile waiting for an older one. */
  private newRuleset(result: LoadResult): void {
    if (this.target) {
      this.target.settle({ state: 'superseded' });
      this.target = undefined;
    }
    this.current = result;
    this.generation++;
    this.counters.swaps++;
  }

  /** The interpreter-tier swap point: decoded events go to the reference interpreter from the next batch. */
  private installInterpreter(result: LoadResult): void {
    const s0 = performance.now();
    this.newRuleset(result);
    this.matcher = new RuleMatcher(result.ruleset, this.options, this.ruleStats);
    this.setTier('interpreter');
    this.counters.lastSwapStallMs = performance.now() - s0;
  }

  /** The compiled swap point: runs between two evaluate() calls; the state region moves with it. */
  private install(result: LoadResult, module: RuleModule, tierUp = false): void {
    const s0 = performance.now();
    if (this.module) module.adoptState(this.module);
    this.lastGood = this.module && this.moduleResult ? { module: this.module, result: this.moduleResult } : undefined;
    this.module = module;
    this.moduleResult = result;
    if (tierUp) this.counters.tierUps++;
    else this.newRuleset(result);
    this.matcher = undefined;
    this.overlay = undefined;
    this.setTier('wasm');
    this.counters.lastSwapStallMs = performance.now() - s0;
  }

  private setTier(tier: EvaluatorTier): void {
    this.counters.tier = tier;
    for (const t of EVALUATOR_TIERS) this.tierGauge?.set({ tier: t }, t === tier ? 1 : 0);
  }

  private report(what: string, error: RuntimeError): void {
    const report = this.options.onError ?? ((e: RuntimeError) => process.stderr.write(`engine: ${what} (${e.code}): ${e.message}\n`));
    report(error);
  }

  /** The running load result, if any. */
  get ruleset(): LoadResult | undefined {
    return this.current;
  }

  /** Increases on every new ruleset (and on a restore); not on a tier-up of the same ruleset. */
  get rulesetGeneration(): number {
    return this.generation;
  }

  /** Events evaluated since start. */
  get eventsEvaluated(): number {
    return this.evaluated;
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
    return this.module;
  }

  /** Evaluates one batch synchronously (a batch is never split across two rulesets); returns the alert count. */
  evaluate(events: readonly SourceEvent[]): number {
    if (this.matcher) return this.evaluateInterpreted(this.matcher, events);
    const module = this.module;
    if (!module) return 0;
    this.counters.batches++;
    const first = this.options.ruleMatching === 'first';
    const r = judgeIsolated(events.length, (start, count) => this.judgeDecoded(module, events, start, count, first), this.isolation);
    this.evaluated += events.length;
    return this.finish(module, r, events.length, (i) => events[i]!.source);
  }

  /** Judges events[start, start+count) on the compiled module, alerts rendered; any exception fails the range. */
  private judgeDecoded(module: RuleModule, events: readonly SourceEvent[], start: number, count: number, first: boolean): Judgment<Alert> {
    return judged(() => {
      const range = start === 0 && count === events.length ? events : events.slice(start, start + count);
      const r = module.evaluate(range, first);
      if (!r.ok) return r;
      const out = r.matches.map((m) => alertFor(m.rule, range[m.event]!, this.options.hostname, this.options.maxOutputFieldBytes));
      this.countReferred(r.referred);
      return { ok: true, out };
    });
  }

  /** Counts events the compiled tier had judged by the reference interpreter (a stopped one is dropped: watchdog). */
  private countReferred(referred: readonly Referred[] | undefined): void {
    for (const x of referred ?? []) {
      this.options.metrics?.eventsReferenceJudged?.(x.source, x.reason);
      if (x.stopped) this.options.metrics?.eventsDropped(x.source, 'watchdog');
    }
  }

  /**
   * Evaluates a batch of kernel wire records (probes/src/events.h) as the capture addon delivers
   * them: process records update the thread table in the module's state region, syscall records
   * become eval records without JS objects; only matched events are decoded, for their alerts.
   * Record times are CLOCK_BOOTTIME; `bootToEpochNs` turns them into alert times. Returns the
   * alert count; throws when there is no compiled module (the interpreter engine, or no load yet). On the interpreter
   * tier, the last compiled module judges the rules it shares with the running ruleset and the
   * reference interpreter the added and changed ones (kernel-overlay.ts) until the tier-up.
   * A failed batch is isolated like a decoded one, by ranges of its eval records (written once,
   * judged again in place; the thread table was updated before the first call).
   */
  evaluateKernel(view: Uint8Array, bytes: number, bootToEpochNs = 0n): number {
    const module = this.module;
    // Never a silent 0: the caller counts a thrown batch as dropped (the syscall source does).
    if (this.options.engine === 'interpreter') throw new Error('kernel records need the compiled engine (this engine is the reference interpreter)');
    if (!module) throw new Error('no compiled ruleset yet for kernel records');
    const kernel = this.options.kernel;
    if (!kernel) throw new Error('kernel records need a translator (DetectionEngineOptions.kernel)');
    this.counters.batches++;
    // event i's record is at offsets[i] (the ingest's reused array: read only within this call)
    const n = kernel.ingestInto(module, view, bytes, bootToEpochNs);
    const offsets = kernel.offsets;
    const first = this.options.ruleMatching === 'first';
    // On the interpreter tier the module judges with rule matching `all`: its matches are merged with the interpreter's.
    const overlay = this.overlayOf(module);
    const moduleFirst = first && !overlay;
    const r0 = module.evaluateRecords('syscall', n, moduleFirst);
    this.evaluated += n;
    if (!overlay && r0.ok && r0.matches.length === 0 && !r0.handBack?.length) return 0;
    const lazy: SourceEvent[] = [];
    const eventAt = (i: number): SourceEvent => {
      const fields = kernel.fieldsOf(module, view, offsets[i]!, i);
      const timeNs = new DataView(view.buffer, view.byteOffset + offsets[i]!).getBigUint64(0, true) + bootToEpochNs;
      return (lazy[i] ??= { source: 'syscall', timeNs, evtType: fields['evt.type'] as string, fields: new FieldEvent(fields, { source: 'syscall', timeNs, num: BigInt(this.evaluated - n + i + 1) }) });
    };
    // The whole batch was judged once already: its result is the first judgment.
    const judge = (start: number, count: number): Judgment<Alert> =>
      judged(() => {
        const r = start === 0 && count === n ? r0 : module.evaluateRecords('syscall', count, moduleFirst, start);
        if (!r.ok) return r;
        if (overlay) {
          const merged = overlay.merge(r.matches, r.handBack ?? [], start, count, (i) => eventAt(start + i), first, this.options.watchdogMs ?? 1000);
          if (!merged.ok) return merged;
          return { ok: true, out: merged.out.map((m) => alertFor(m.rule, eventAt(start + m.event), this.options.hostname, this.options.maxOutputFieldBytes)) };
        }
        const matches = r.matches;
        if (r.handBack?.length) {
          // events whose transformer results did not fit the scratch area: the reference interpreter judges them
          const referred: Referred[] = [];
          for (const i of r.handBack) {
            const rules = module.judgeByReference(eventAt(start + i), first);
            referred.push({ source: 'syscall', reason: 'scratch', stopped: rules === undefined });
            for (const rule of rules ?? []) matches.push({ event: i, rule });
          }
          matches.sort((x, y) => x.event - y.event);
          this.countReferred(referred);
        }
        return { ok: true, out: matches.map((m) => alertFor(m.rule, eventAt(start + m.event), this.options.hostname, this.options.maxOutputFieldBytes)) };
      });
    return this.finish(module, judgeIsolated(n, judge, this.isolation), n, () => 'syscall');
  }

  /** The interpreter-tier ruleset as the byte path serves it over `module`, or undefined when `module` is the running ruleset's. */
  private overlayOf(module: RuleModule): KernelOverlay | undefined {
    const current = this.current;
    if (!this.matcher || !current || current === this.moduleResult) return undefined;
    if (this.overlay?.module !== module || this.overlay.ruleset !== current) this.overlay = new KernelOverlay(module, current, selectRules(current.ruleset.rules, this.options.minPriority));
    return this.overlay;
  }

  private get isolation(): IsolationBudget {
    return this.options.isolation ?? DEFAULT_ISOLATION_BUDGET;
  }

  /** Reports the failed events of a judged batch, then hands over its alerts; returns the alert count. */
  private finish(module: RuleModule | undefined, r: Isolated<Alert>, batchEvents: number, sourceOf: (i: number) => SourceEvent['source']): number {
    if (r.failed.length > 0) this.settle(module, r, batchEvents, sourceOf);
    for (const a of r.out) this.options.onAlert(a);
    return r.out.length;
  }

  /** Counts and reports the failed events of a batch; after a watchdog stop, goes back to the last good module. */
  private settle(module: RuleModule | undefined, r: Isolated<Alert>, batchEvents: number, sourceOf: (i: number) => SourceEvent['source']): void {
    const failedEvents = r.failed.reduce((n, f) => n + f.count, 0);
    this.counters.failedBatches++;
    this.counters.failedEvents += failedEvents;
    this.counters.failedCalls += r.failedCalls;
    for (const c of failedCounts(r.failed, sourceOf)) this.options.metrics?.eventsDropped(c.source, c.reason, c.n);
    if (r.timeouts > 0) this.counters.timeouts++;
    else this.counters.traps++;
    const first = r.failed[0]!.error;
    const judgedFine = batchEvents - failedEvents;
    this.report('batch failed', runtimeError(first.code, `${first.message} (${failedEvents} of ${batchEvents} event(s) could not be evaluated${judgedFine > 0 ? `; the other ${judgedFine} were judged` : ''})`));
    this.options.onAlert(evaluationFailedAlert(failedEvents, batchEvents, r.failed, this.options.hostname));
    const good = this.lastGood;
    if (r.timeouts > 0 && good && module && module === this.module) {
      good.module.adoptState(module);
      this.module = good.module;
      this.moduleResult = good.result;
      this.lastGood = undefined;
      // On the interpreter tier the decoded path keeps its ruleset; only the kernel path's module goes back.
      if (!this.matcher) {
        this.current = good.result;
        this.generation++;
      }
      this.counters.restores++;
    }
  }

  private evaluateInterpreted(matcher: RuleMatcher, events: readonly SourceEvent[]): number {
    this.counters.batches++;
    const ms = this.options.engine === 'interpreter' ? 0 : (this.options.watchdogMs ?? 1000);
    const judge = (start: number, count: number): Judgment<Alert> => {
      const alerts: Alert[] = [];
      const run = (): number => {
        for (let i = start; i < start + count; i++) {
          const ev = events[i]!;
          for (const rule of matcher.match(ev.source, ev.evtType, ev.fields)) alerts.push(alertFor(rule, ev, this.options.hostname, this.options.maxOutputFieldBytes));
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
    const r = judgeIsolated(events.length, judge, this.isolation);
    this.evaluated += events.length;
    return this.finish(undefined, r, events.length, (i) => events[i]!.source);
  }

  /**
   * Compiles the module of `files` ahead of a load (nothing is installed), so that a later
   * load() of the same rules finds it built or building. `rae run` starts this before opening
   * its database, so the compile worker and PGlite's first start share the two cores. Invalid
   * rules or a failed compile resolve quietly: the load that follows reports them.
   */
  async precompile(files: readonly RulesFile[]): Promise<void> {
    const result = loadRules(files, { limits: this.options.expandLimits });
    this.precompiled = { files, result };
    if (result.ok && this.options.engine !== 'interpreter') await this.compiler.compile(selectRules(result.ruleset.rules, this.options.minPriority)).catch(() => undefined);
  }

  /** The precompile's load result when `files` are the ones it loaded (once: the first load after it). */
  private takePrecompiled(files: readonly RulesFile[]): LoadResult | undefined {
    const p = this.precompiled;
    this.precompiled = undefined;
    const same = p && p.files.length === files.length && p.files.every((f, i) => f.name === files[i]!.name && f.text === files[i]!.text);
    return same ? p.result : undefined;
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
