// The module as `rae run` starts it. startResources: the watched directory, and with `cluster`
// the orchestrator's API objects too (cluster.ts), reconciled together by one controller: every
// snapshot it applies is the directory's files followed by the cluster's objects (the first
// snapshot is in force before it resolves). startModule, on top: the
// resources directory (created and seeded with an enabled ModuleConfig on first start), the
// ruleset = built-in sets + configured files + valid EngineAuditRules loaded through the engine,
// rejections reported through the forwarder, and the module state applied: sources started when
// enabled and stopped when disabled, the forwarder's debug logging switched by
// settings.debugLogging. Consumes run's parts; produces a stop().
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../config/config.js';
import { writeProblem } from '../config/write-problem.js';
import { builtinRulesFiles, type LoadResult, type RulesFile } from '../engine/index.js';
import type { Metrics } from '../metrics/index.js';
import type { Alert } from '../output/alert.js';
import { startClusterResources, type ClusterResources, type ClusterResourcesOptions } from './cluster.js';
import { ResourceController, type ControllerOptions, type ModuleState, type RulesEngine } from './controller.js';
import { MODULE_NAME, RESOURCE_VERSION } from './manifests.js';
import type { ApiObject } from './list-watch.js';
import type { ModuleSources } from './sources.js';
import { hasStatus, nodeReport } from './status.js';
import { StatusWriter, type StatusWriterOptions } from './status-writer.js';
import { watchDirectory, type DirectoryWatch, type ManifestFile } from './watch.js';

/** The ModuleConfig written into a resources directory that did not exist (first start). */
function defaultModuleConfig(apiGroup: string): string {
  return [
    '# Written by `rae run` when it created this directory: the module is on, with default settings.',
    '# Set enabled: false (or delete this file) to stop the event sources; see docs/resources.md.',
    `apiVersion: ${apiGroup}/${RESOURCE_VERSION}`,
    'kind: ModuleConfig',
    'metadata:',
    `  name: ${MODULE_NAME}`,
    'spec:',
    '  enabled: true',
    '  version: 1',
    '',
  ].join('\n');
}

/** Creates the directory if missing; on creation, seeds it with the default ModuleConfig. Returns true when created. */
function ensureResourcesDir(dir: string, apiGroup: string): boolean {
  if (existsSync(dir)) return false;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'module-config.yaml'), defaultModuleConfig(apiGroup));
  } catch (err) {
    // Half made (created, not seeded) it would read as a module without a ModuleConfig on the next start: leave nothing.
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`cannot create the resources directory ${dir}: ${writeProblem(dirname(dir), err as NodeJS.ErrnoException)}; create it beforehand (with a ModuleConfig) or set resources.dir`);
  }
  return true;
}

export interface ResourcesOptions extends ControllerOptions {
  dir: string;
  debounceMs?: number;
  rescanMs?: number;
  /** Bounds of what is read (watch.ts defaults: 256 files of 1 MiB). */
  maxFiles?: number;
  maxFileBytes?: number;
  /** The orchestrator's API objects, beside the directory. */
  cluster?: Pick<ClusterResourcesOptions, 'kinds' | 'retryMs' | 'retryMaxMs'> & {
    /** How long the first ruleset waits for the first list of every kind before it goes live without them. */
    syncTimeoutMs: number;
    /**
     * The objects' status: this node's report and, while it holds the Lease, the status of every
     * EngineAuditRules and NamespacedEngineAuditRules object, and of the ModuleConfig unless
     * `moduleConfigStatus` is false (on Deckhouse, Deckhouse writes it).
     */
    status?: Omit<StatusWriterOptions, 'objects' | 'log'> & { moduleConfigStatus?: boolean };
  };
}

/** Running resources. */
export interface Resources {
  controller: ResourceController;
  readonly state: ModuleState | undefined;
  /** Resolves once no directory change is pending or being reconciled. */
  idle(): Promise<void>;
  close(): void;
}

/**
 * Watches `dir` (and the cluster's objects with `cluster`) and reconciles every change; resolves
 * after the first snapshot is in force. The cluster's first lists are waited for (up to
 * `syncTimeoutMs`), so the first ruleset has the cluster's rules when the API answers.
 */
export async function startResources(opts: ResourcesOptions): Promise<Resources> {
  const controller = new ResourceController(opts);
  let dirFiles: ManifestFile[] = [];
  let clusterFiles: ManifestFile[] = [];
  let clusterObjects: ReadonlyMap<string, ApiObject> = new Map();
  let appliedCluster = clusterFiles;
  let started = false;
  let writer: StatusWriter | undefined;
  // The directory's files first: a resource in both is the directory's (the first by file wins).
  const apply = async () => {
    const c = clusterFiles;
    const objects = clusterObjects;
    const result = await controller.apply([...dirFiles, ...c]);
    appliedCluster = c;
    writer?.setReport(nodeReport(objects, result));
  };
  let cluster: ClusterResources | undefined;
  if (opts.cluster) {
    const { syncTimeoutMs, status, ...rest } = opts.cluster;
    cluster = startClusterResources({
      ...rest,
      log: opts.reporter.log,
      onChange: async (files, objects) => {
        clusterFiles = files;
        clusterObjects = objects;
        if (started) await apply();
      },
    });
    const watched = cluster;
    if (status) {
      const { moduleConfigStatus = true, ...writerOptions } = status;
      const written = (o: ApiObject) => hasStatus(o) && (moduleConfigStatus || o.kind !== 'ModuleConfig');
      writer = new StatusWriter({ ...writerOptions, log: opts.reporter.log, objects: () => [...watched.objects().values()].filter(written) });
    }
    if (await cluster.whenSynced(syncTimeoutMs)) await cluster.idle();
    else opts.reporter.log(`resources: the orchestrator's API did not answer within ${syncTimeoutMs / 1000} s: starting without its objects (they are applied once listed)`);
  }
  const watch: DirectoryWatch = await watchDirectory({
    dir: opts.dir,
    debounceMs: opts.debounceMs,
    rescanMs: opts.rescanMs,
    maxFiles: opts.maxFiles,
    maxFileBytes: opts.maxFileBytes,
    log: opts.reporter.log,
    onChange: async (files) => {
      dirFiles = files;
      await apply();
    },
  });
  started = true;
  // Objects listed while the directory's first snapshot was applied.
  if (appliedCluster !== clusterFiles) await apply();
  writer?.start();
  return {
    controller,
    get state() {
      return controller.moduleState;
    },
    idle: async () => {
      await watch.idle();
      await cluster?.idle();
      await writer?.idle();
    },
    close: () => {
      watch.close();
      cluster?.close();
      writer?.stop();
    },
  };
}

export interface ModuleOptions {
  config: Config;
  /** `--resources DIR` (else resources.dir, else <stateDir>/resources). */
  dir?: string;
  engine: RulesEngine;
  sources: ModuleSources;
  /** Configured rules files, loaded after the built-in sets. */
  extraFiles: readonly RulesFile[];
  metrics: Metrics;
  log: (message: string) => void;
  submit: (alert: Alert) => void;
  hostname: string;
  onRulesLoaded?: (result: LoadResult) => void;
}

/** What a reload did: the new base replaced the running ruleset, changed nothing, or was refused. */
type ModuleReload = 'replaced' | 'unchanged' | 'refused';

/** The running module. */
export interface RunningModule {
  resources: Resources;
  dir: string;
  /**
   * Loads the ruleset again on new base files (built-in sets re-read from rules/, the configured
   * files as given) with the running engine; an invalid set is reported and the running one stays.
   */
  reload(base: { extraFiles: readonly RulesFile[]; builtIn: readonly string[] }): Promise<ModuleReload>;
  /** Stops watching and stops the sources. */
  stop(): Promise<void>;
}

/** The resources directory of a configuration. */
function resourcesDir(config: Config, override?: string): string {
  return override || config.resources.dir || join(config.stateDir, 'resources');
}

/**
 * The cluster's kinds of this module (with resources.watchApi), read through the configured
 * kubeconfig or the pod's service account. Outside a pod without a kubeconfig the engine says
 * so and reads the directory alone (as the pod test's kubelet runs it); a kubeconfig that was
 * named but cannot be read stops the start. The API client (@kubernetes/client-node, kube-api.ts)
 * is imported only here, when the API is watched: off a cluster it never loads.
 */
async function clusterOption(config: Config, hostname: string, log: (message: string) => void): Promise<ResourcesOptions['cluster']> {
  const { apiGroup, watchApi, kubeconfig, apiSyncTimeoutSeconds, moduleConfigStatus } = config.resources;
  if (!watchApi) return undefined;
  if (!kubeconfig && !process.env.KUBERNETES_SERVICE_HOST) {
    log("module: not watching the orchestrator's API: not in a pod (KUBERNETES_SERVICE_HOST is not set) and resources.kubeconfig is empty; the resources directory alone is read");
    return undefined;
  }
  const { contextNamespace, loadKubeConfig, moduleKinds, statusApi } = await import('./kube-api.js');
  const kc = loadKubeConfig(kubeconfig);
  const kinds = moduleKinds(kc, apiGroup, RESOURCE_VERSION);
  const namespace = contextNamespace(kc);
  log(
    `module: watching ${kc.getCurrentCluster()!.server} (${kubeconfig || 'the service account'}) for ${apiGroup}/${RESOURCE_VERSION} ModuleConfig, EngineAuditRules and NamespacedEngineAuditRules; status through Leases in namespace ${namespace}`,
  );
  const status = { api: statusApi(kc, apiGroup, RESOURCE_VERSION), namespace, node: hostname, moduleConfigStatus };
  return { kinds, syncTimeoutMs: apiSyncTimeoutSeconds * 1000, status };
}

/** Starts the module; rejects when the first ruleset (built-in sets + configured files) is invalid. */
export async function startModule(opts: ModuleOptions): Promise<RunningModule> {
  const { config, log, metrics, sources } = opts;
  const dir = resourcesDir(config, opts.dir);
  const apiGroup = config.resources.apiGroup;
  if (ensureResourcesDir(dir, apiGroup)) log(`module: created ${dir} with module-config.yaml (ModuleConfig runtime-audit-engine, enabled: true)`);
  log(`module: watching ${dir} for ${apiGroup}/v1alpha1 ModuleConfig and EngineAuditRules`);
  const configuredDebug = config.forwarder.debugLogging;
  // The base of every ruleset; reload() replaces it.
  const base = { extraFiles: opts.extraFiles, builtIn: config.rules.builtIn as readonly string[] };
  const resources = await startResources({
    dir,
    apiGroup,
    maxFiles: config.resources.maxFiles,
    maxFileBytes: config.resources.maxFileBytes,
    cluster: await clusterOption(config, opts.hostname, log),
    engine: opts.engine,
    baseFiles: (sel) => [...builtinRulesFiles(sel).files, ...base.extraFiles],
    get defaultBuiltIn() {
      return base.builtIn;
    },
    reporter: { log, alert: opts.submit, metrics, hostname: opts.hostname },
    onRulesLoaded: (result) => {
      metrics.knownRules(result.ruleset.rules);
      for (const source of ['syscall', 'k8s_audit'] as const) {
        metrics.rulesLoaded(source, result.ruleset.rules.filter((r) => r.source === source && r.enabled).length);
      }
      metrics.rulesetSwapped();
      opts.onRulesLoaded?.(result);
    },
    onModuleState: async (s) => {
      // The forwarder reads this flag on every alert (falcosidekick's DEBUG=true, reference §1).
      config.forwarder.debugLogging = configuredDebug || s.debugLogging;
      log(`module: ${s.enabled ? 'enabled' : 'disabled'} (built-in rule sets: ${s.builtIn.join(', ') || 'none'}; debugLogging: ${s.debugLogging})`);
      await sources.setEnabled(s.enabled);
    },
  });
  if (!resources.controller.loaded) {
    resources.close();
    await sources.stopAll();
    throw new Error('the configured rules are invalid');
  }
  return {
    resources,
    dir,
    async reload(next) {
      const prev = { ...base };
      Object.assign(base, next);
      const r = await resources.controller.reapply();
      if (!r.rejections.some((x) => x.kind === 'ruleset')) return r.swapped ? 'replaced' : 'unchanged';
      // The new base itself is invalid (reported by the controller): later snapshots keep the old one.
      Object.assign(base, prev);
      await resources.controller.reapply();
      return 'refused';
    },
    async stop() {
      resources.close();
      await resources.idle();
      await sources.stopAll();
    },
  };
}
