// Start-up step of `rae run`: the event sources and the module that runs them. Sources run while
// the module is enabled (a ModuleConfig in the resources directory); one that fails to start is
// retried with backoff, and readiness shows it meanwhile. The audit webhook's stop drains the
// events already accepted (bounded, logged); the kernel source is left out, after saying why on
// every channel, where the probe cannot run. Consumes the configuration, the engine and where
// alerts go; produces the running module (the first rules load happens in it).
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../config/config.js';
import type { LoadResult, RulesFile } from '../../engine/index.js';
import type { Metrics, SourceLabel } from '../../metrics/index.js';
import type { Alert } from '../../output/alert.js';
import { ModuleSources, publishAuditWebhookConfig, startModule, type ModuleSource } from '../../resources/index.js';
import type { DetectionEngine } from '../../runtime/index.js';
import { clientCredentials, startAuditWebhook } from '../../sources/audit/index.js';
import { ringBytesFor } from '../../sources/syscall/addon.js';
import { syscallModuleSource } from '../../sources/syscall/source.js';
import type { FaultTracking } from '../../tracking/index.js';
import { log } from '../command.js';
import { reportUnavailableSource } from '../readiness.js';
import type { Lifecycle } from './lifecycle.js';

/** What the sources step needs besides the configuration and the engine. */
export interface SourceInputs {
  /** The watched resources directory (--resources). */
  resourcesDir: string | undefined;
  /** The configured rules files (after the built-in ones). */
  files: readonly RulesFile[];
  hostname: string;
  metrics: Metrics;
  submit: (alert: Alert) => void;
  tracking: FaultTracking;
  onRulesLoaded: (r: LoadResult) => void;
}

/** The event source each module source feeds (Falco's metrics name the running ones). */
const SOURCE_OF: Record<string, SourceLabel | undefined> = { syscall: 'syscall', webhook: 'k8s_audit' };

/** The running module of `rae run`. */
export type RunModule = Awaited<ReturnType<typeof startModule>>;

/** Adds the enabled sources and starts the module (its first load, the sources once it is enabled); marks the engine up. */
export async function startSources(config: Config, engine: DetectionEngine, inputs: SourceInputs, life: Lifecycle): Promise<RunModule> {
  const { hostname, metrics, submit, tracking } = inputs;
  const board = life.board;
  const sources = new ModuleSources(log, {
    onState: (name, s) => {
      board.set(name, s);
      tracking.sourceState(name, s);
      const source = SOURCE_OF[name];
      if (source) metrics.sourceUp(source, s.state === 'up');
    },
  });
  if (config.webhook.enabled) await sources.add(webhookSource(config, engine, metrics));
  const capture = { snaplen: config.syscall.snaplen, ringBufferBytes: ringBytesFor(config.syscall.bufSizePreset, cpus().length), filterOpens: config.syscall.filterOpens };
  const kernel = syscallModuleSource({ engine, metrics, log, hostname, submit, capture }, (code, reason) => {
    reportUnavailableSource({ board, metrics, submit, hostname, log }, 'syscall', code, reason, config.syscall.optional);
    tracking.probeUnavailable(reason);
  });
  if (kernel) await sources.add(kernel);
  const submitModuleAlert = (a: Alert) => {
    submit(a);
    tracking.moduleAlert(a);
  };
  const module = await startModule({ config, dir: inputs.resourcesDir, engine, sources, extraFiles: inputs.files, metrics, log, hostname, submit: submitModuleAlert, onRulesLoaded: inputs.onRulesLoaded });
  life.add({ name: `module (${module.dir})`, stop: () => module.stop() });
  board.set('engine', { state: 'up' });
  return module;
}

/** The orchestrator audit webhook as a module source; its stop drains the accepted events (bounded, logged). */
function webhookSource(config: Config, engine: DetectionEngine, metrics: Metrics): ModuleSource {
  return {
    name: 'webhook',
    start: async () => {
      const audit = await startAuditWebhook({ config, evaluate: (events) => engine.evaluate(events), metrics, log });
      log(`run: webhook listening on ${audit.webhook.url}`);
      const cpm = config.module.controlPlaneManager
        ? publishAuditWebhookConfig(config.module.auditWebhookConfigFile || join(config.stateDir, 'audit-webhook-config.yaml'), audit.webhook.url, audit.tls.caPem, clientCredentials(audit.tls), log)
        : undefined;
      return {
        async stop() {
          cpm?.remove();
          const waiting = audit.webhook.queueLength;
          const limit = config.webhook.drainTimeoutSeconds;
          const d = await audit.webhook.close(limit * 1000);
          const ms = Math.round(d.ms);
          if (d.abandoned > 0) log(`run: webhook drain stopped after ${ms} ms (webhook.drainTimeoutSeconds: ${limit}): ${d.drained} accepted audit events evaluated, ${d.abandoned} not evaluated`);
          else log(`run: webhook drained in ${ms} ms: ${d.drained} accepted audit events evaluated (${waiting} were queued at the stop)`);
        },
      };
    },
  };
}
