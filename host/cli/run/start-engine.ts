// Start-up step of `rae run`: the detection engine and the kernel ingest that feeds its byte
// path, with what enriches that ingest (container metadata, the rules' domain names resolved off
// the event path). The configured rules start compiling in the worker at once, so the module's
// first load finds the module built or building. Consumes the configuration, the rules files and
// where alerts go; produces the engine and its ingest, registered as components.
import { join } from 'node:path';
import type { Config } from '../../config/config.js';
import { builtinRulesFiles, type RulesFile } from '../../engine/index.js';
import type { Priority } from '../../engine/priority.js';
import type { Metrics } from '../../metrics/index.js';
import type { Alert } from '../../output/alert.js';
import { DetectionEngine, SHIPPED_COMPILER_DIR, SHIPPED_MODULE_DIR } from '../../runtime/index.js';
import { followContainers } from '../../sources/container/index.js';
import { followDomainNames } from '../../sources/dns/index.js';
import { releaseFreeMemory } from '../../sources/syscall/addon.js';
import { KernelIngest } from '../../sources/syscall/ingest.js';
import { readProcess } from '../../sources/syscall/procfs.js';
import type { FaultTracking } from '../../tracking/index.js';
import { log } from '../command.js';
import { expandLimitsOf } from '../run-config.js';
import type { Lifecycle } from './lifecycle.js';

/** What the engine step needs besides the configuration. */
export interface EngineInputs {
  minPriority: Priority;
  /** The configured rules files (after the built-in ones). */
  files: readonly RulesFile[];
  hostname: string;
  metrics: Metrics;
  /** Where alerts go; `ruleMatch` marks the engine's own (its matches, and its internal alerts, which match no loaded rule). */
  submit: (alert: Alert, ruleMatch?: boolean) => void;
  tracking: FaultTracking;
}

/** Starts the kernel ingest's helpers and the engine, and its precompile of the configured rules. */
export function startEngine(config: Config, inputs: EngineInputs, life: Lifecycle): DetectionEngine {
  const { hostname, metrics } = inputs;
  // a process first seen in a syscall record is read from /proc, as libsinsp does (unknown-process.ts)
  const kernelIngest = new KernelIngest({ hostname, unknownProcesses: { read: (pid) => readProcess(pid), onLookup: (r) => metrics.processLookup(r) } });
  // the thread table counts its drops in plain numbers; the metrics read them when scraped
  metrics.threadTableDrops(() => kernelIngest.threads.drops);
  const containers = config.containers.enabled ? followContainers(config.containers, kernelIngest.containers, log) : undefined;
  if (containers) life.add(containers);
  // the rules' domain names (fd.sip.name ...) resolved off the event path into the module's DNS table
  if (config.dns.enabled) life.add(followDomainNames(config.dns, kernelIngest.dns, log));
  const engine = new DetectionEngine({
    ruleMatching: config.rules.ruleMatching,
    minPriority: inputs.minPriority,
    compilerIdleMs: config.rules.compilerIdleSeconds * 1000,
    // a build leaves 40-60 MB free in the malloc arenas of its threads, resident until handed back
    onCompilerIdleStop: () => void releaseFreeMemory(),
    // and while it builds: what its threads freed is handed back as it goes, so it does not pile up to the peak
    onCompilerBusy: () => void releaseFreeMemory(),
    compileTimeoutMs: config.rules.compileTimeoutSeconds * 1000,
    compileWorkerHeapMb: config.rules.compileWorkerHeapMb,
    ruleCounters: config.rules.ruleCounters,
    moduleCacheDir: join(config.stateDir, 'module-cache'),
    // a default first start's module, built with the build (ship-module.ts): no compile for it
    shippedModuleDir: SHIPPED_MODULE_DIR,
    // the compiler loaded from its split (asc-loader.ts): the build's, else one the worker writes here
    compilerCacheDir: join(config.stateDir, 'compiler-cache'),
    shippedCompilerDir: SHIPPED_COMPILER_DIR,
    compilerKeepsBackend: config.rules.compilerKeepsBackend,
    hostname,
    kernel: kernelIngest,
    metrics,
    expandLimits: expandLimitsOf(config),
    maxOutputFieldBytes: config.rules.maxOutputFieldBytes,
    appendOutput: config.forwarder.falco.append_output,
    onAlert: (a) => inputs.submit(a, true),
    onError: (e) => inputs.tracking.engineError(e),
  });
  // a container's start judged before its metadata came is judged again when it comes (late-starts.ts)
  kernelIngest.containers.onLearned = (id) => engine.containerLearned(id);
  if (containers) {
    metrics.containerMetadata(() => {
      const s = engine.stats;
      return { ...containers.figures(), lateStarts: { held: s.lateStartsHeld, judged: s.lateStartsJudged, dropped: s.lateStartsDropped } };
    });
  }
  void engine.precompile([...builtinRulesFiles(config.rules.builtIn).files, ...inputs.files]);
  life.add({ name: 'engine', stop: () => engine.close() });
  return engine;
}
