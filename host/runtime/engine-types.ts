// The detection engine's interface types: its options, what a load did, how a tier-up ended, and
// its counters. Shared by the engine (detection-engine.ts) and its parts (ruleset-slot.ts,
// batch-judge.ts, kernel-path.ts), so that none of them imports another for a type.
import type { ExpandLimits, LoadResult, RuleMatching, RulesBounds } from '../engine/index.js';
import type { Priority } from '../engine/priority.js';
import type { Metrics } from '../metrics/index.js';
import type { EvaluatorTier } from '../metrics/names.js';
import type { Alert } from '../output/alert.js';
import type { AppendOutput } from '../output/falco-json.js';
import type { ModuleFrom } from './compiler.js';
import type { RuntimeError } from './errors.js';
import type { IsolationBudget } from './isolate.js';
import type { RecordTranslator } from './translator.js';

export interface DetectionEngineOptions {
  ruleMatching: RuleMatching;
  minPriority: Priority;
  hostname: string;
  onAlert: (alert: Alert) => void;
  /** The syscall source's translator (host/sources/syscall/ingest.ts KernelIngest): without one, evaluateKernel judges nothing ('no-translator'). */
  kernel?: RecordTranslator;
  /** 'wasm' (default) or the reference 'interpreter'. */
  engine?: 'wasm' | 'interpreter';
  /** Watchdog deadline per evaluate call, ms (default 1000; 0 = off). */
  watchdogMs?: number;
  /** Failed calls spent isolating the failing events of one batch (default DEFAULT_ISOLATION_BUDGET: 64, of which 8 watchdog stops). */
  isolation?: IsolationBudget;
  /** Stop the compile worker after this many idle ms (default 0: keep it; `rae run` uses rules.compilerIdleSeconds). */
  compilerIdleMs?: number;
  /** Runs once the idle compile worker has exited (`rae run`: hands the memory it freed back to the kernel, addon.ts releaseFreeMemory). */
  onCompilerIdleStop?: () => void;
  /** Runs every 250 ms while a build is in the compile worker, and once when it ends (`rae run`: addon.ts releaseFreeMemory, as onCompilerIdleStop). */
  onCompilerBusy?: () => void;
  /** Deadline of one compile in the worker, ms (default 120 s; 0: none); past it the worker is stopped and the load fails with ECOMPILETIMEOUT. */
  compileTimeoutMs?: number;
  /** The compile worker's V8 heap cap, MB (default 2048): a build that needs more fails with EWORKER instead of taking the process down. */
  compileWorkerHeapMb?: number;
  /** Keep built modules here and load unchanged rulesets from here (module-cache.ts; `rae run`: <stateDir>/module-cache). */
  moduleCacheDir?: string;
  /** Also load unchanged rulesets from this read-only module cache (`rae run`: the build's, module-cache.ts SHIPPED_MODULE_DIR). */
  shippedModuleDir?: string;
  /** Keep the compiler's split here, which a compile worker loads the compiler from in a quarter of the time (asc-loader.ts; `rae run`: <stateDir>/compiler-cache). */
  compilerCacheDir?: string;
  /** Also take the compiler's split from here, read only (`rae run`: the build's, asc-loader.ts SHIPPED_COMPILER_DIR). */
  shippedCompilerDir?: string;
  /** Keep binaryen's compiled module on this thread between compile workers (compiler.ts keepBackend; `rae run`: rules.compilerKeepsBackend). */
  compilerKeepsBackend?: boolean;
  /** Bounds of the expanded rule conditions (default: the engine's DEFAULT_EXPAND_LIMITS). */
  expandLimits?: Partial<ExpandLimits & RulesBounds>;
  /** Longest field value an alert carries, UTF-8 bytes (default 64 KiB; `rae run`: rules.maxOutputFieldBytes); longer ones are cut and marked. */
  maxOutputFieldBytes?: number;
  /** Falco's append_output (`rae run`: forwarder.falco.append_output): the fields it names are extracted from the event into the output_fields of the rules it matches. */
  appendOutput?: readonly AppendOutput[];
  /** Count every rule's evaluations, matches and cost on both tiers (default true; docs/rule-cost.md). */
  ruleCounters?: boolean;
  /** With ruleCounters: one compiled evaluate call in this many is timed whole to calibrate the cost (default 16; rule-tally.ts). */
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
  /** Compile-first loads: where the module came from (memory, the on-disk module cache, the build's shipped one, a build). */
  from?: ModuleFrom;
  /** Interpreter-first loads: settles when the ruleset runs on WASM, or why it never will. */
  compiled?: Promise<TierUp>;
}

/**
 * Why evaluateKernel judged nothing (a state the caller checks, not an exception): no compiled
 * module yet (the first load has not compiled), the reference-interpreter engine (it has no byte
 * path), or no record translator in the options. The caller counts the batch's events as dropped.
 */
export type KernelUnready = 'no-module' | 'interpreter-engine' | 'no-translator';

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
  /** Container starts judged before their container's metadata came: held, judged again when it came, dropped (limits, or no module to judge with) (late-starts.ts). */
  lateStartsHeld: number;
  lateStartsJudged: number;
  lateStartsDropped: number;
}

/** Fresh counters of an engine that starts on `tier`. */
export function newEngineStats(tier: EvaluatorTier): EngineStats {
  return {
    batches: 0,
    failedBatches: 0,
    failedEvents: 0,
    failedCalls: 0,
    traps: 0,
    timeouts: 0,
    restores: 0,
    swaps: 0,
    tier,
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
    lateStartsHeld: 0,
    lateStartsJudged: 0,
    lateStartsDropped: 0,
  };
}
