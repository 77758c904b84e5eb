// `rae run`: the long-running host. Loads the configuration (defaults unless --config), the
// built-in and configured rules, starts every enabled component, reports `ready` on stderr once
// all are up, and stops them cleanly on SIGTERM/SIGINT.
import { mkdirSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { join } from 'node:path';
import { startApi } from '../api/index.js';
import { loadConfig, type Config } from '../config/config.js';
import { BUILTIN_SETS, builtinRulesFiles } from '../engine/builtin.js';
import { renderDiagnostic } from '../engine/diagnostics.js';
import type { LoadResult, RulesFile } from '../engine/index.js';
import { parsePriority } from '../engine/priority.js';
import { startForwarder } from '../forwarder/index.js';
import { createMetrics } from '../metrics/index.js';
import { DetectionEngine } from '../runtime/detection-engine.js';
import { ModuleSources, publishAuditWebhookConfig, startModule } from '../resources/index.js';
import { startAuditWebhook } from '../sources/audit/index.js';
import { syscallModuleSource } from '../sources/syscall/source.js';
import { log, parseCommandArgs, type Command } from './command.js';
import { readRulesFiles } from './rules-files.js';

const HELP = `Usage: rae run [--config FILE] [--state-dir DIR] [--resources DIR]

Runs the engine: loads the built-in rules (rules/) and any configured rules files, starts the
enabled sources and servers, prints one line containing 'ready' on stderr once everything is up,
and runs until SIGTERM or SIGINT. Detections are written to stdout as JSON lines; logs go to
stderr.

Options:
  -c, --config FILE     YAML configuration; every setting has a default, so none is needed
      --state-dir DIR   state directory (default: $RAE_STATE_DIR, else /var/lib/runtime-audit-engine
                        as root, else ~/.local/state/runtime-audit-engine)
      --resources DIR   watched directory of ModuleConfig and EngineAuditRules manifests (default:
                        resources.dir, else <state-dir>/resources, created with an enabled
                        ModuleConfig on first start); the sources run only while a ModuleConfig
                        enables the module; see docs/resources.md
  -h, --help            show this help

Components (each can be disabled in the configuration):
  forwarder  event forwarder and metrics on 127.0.0.1:2801: /test, /, /healthz, /ping, /metrics
             (forwarder.*); every detection goes through it to stdout and optional outputs
  webhook    orchestrator audit webhook, HTTPS on 127.0.0.1:9765/orchestrator-audit (webhook.*;
             TLS material in <state-dir>/webhook-tls; see rae webhook-config and docs/webhook.md)
  api        error-tracking REST API on 127.0.0.1:8080 (api.*)`;

/** A started part of the host. */
interface Component {
  name: string;
  stop(): Promise<void>;
}

/** The configured rules files (loaded after the built-in sets); undefined after reporting a problem. */
function configuredRulesFiles(config: Config): RulesFile[] | undefined {
  const builtin = builtinRulesFiles(config.rules.builtIn);
  if (builtin.unknown.length > 0) {
    log(`run: unknown built-in rule set(s): ${builtin.unknown.join(', ')} (known: ${BUILTIN_SETS.join(', ')})`);
    return undefined;
  }
  const extra = readRulesFiles(config.rules.files);
  for (const p of extra.problems) log(`run: ${p}`);
  return extra.problems.length > 0 ? undefined : extra.files;
}

/** Logs a load result: errors in full, then a one-line summary. */
function reportLoad(result: LoadResult): void {
  for (const d of result.diagnostics.filter((x) => x.severity === 'error')) log(renderDiagnostic(d, result.sources));
  const s = result.ruleset.stats;
  const warnings = result.diagnostics.filter((d) => d.severity === 'warning').length;
  log(`run: loaded ${s.rules} rules (${s.enabled} enabled), ${s.macros} macros, ${s.lists} lists from ${result.files.length} file(s); ${warnings} warning(s) (see rae validate)`);
}

export const runCommand: Command = {
  name: 'run',
  summary: 'run the engine (built-in rules, sources, servers) until SIGTERM/SIGINT',
  help: HELP,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { config: { type: 'string', short: 'c' }, 'state-dir': { type: 'string' }, resources: { type: 'string' } });
    const { config, problems } = loadConfig(values.config, values['state-dir']);
    if (problems.length > 0) {
      for (const p of problems) log(`run: config ${p.key}: ${p.message}`);
      return 1;
    }
    // Listen for SIGTERM/SIGINT from the start, so a stop during start-up is clean too.
    const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    mkdirSync(config.stateDir, { recursive: true });
    log(`run: state directory ${config.stateDir}`);
    const minPriority = parsePriority(config.rules.minPriority);
    if (!minPriority) {
      log(`run: config rules.minPriority: unknown priority '${config.rules.minPriority}'`);
      return 1;
    }
    if (!Number.isFinite(config.rules.compilerIdleSeconds) || config.rules.compilerIdleSeconds < 0) {
      log(`run: config rules.compilerIdleSeconds: expected a number of seconds, 0 or more (0 keeps the compile worker running), not ${config.rules.compilerIdleSeconds}`);
      return 1;
    }
    for (const key of ['compileTimeoutSeconds', 'compileWorkerHeapMb', 'maxConditionNodes'] as const) {
      const v = config.rules[key];
      if (!Number.isFinite(v) || v < 0 || (key === 'compileWorkerHeapMb' && v < 64)) {
        log(`run: config rules.${key}: expected a number, ${key === 'compileWorkerHeapMb' ? '64 or more' : '0 or more (0: no limit)'}, not ${v}`);
        return 1;
      }
    }
    const files = configuredRulesFiles(config);
    if (!files) return 1;
    const hostname = config.hostname ?? process.env.RAE_HOSTNAME ?? process.env.FALCO_HOSTNAME ?? osHostname();

    const components: Component[] = [];
    const stopAll = async () => {
      for (const c of components.reverse()) {
        try {
          await c.stop();
        } catch (err) {
          log(`run: stopping ${c.name}: ${(err as Error).message}`);
        }
      }
    };
    try {
      const metrics = createMetrics({ processMetrics: true });
      const forwarder = await startForwarder({ config, metrics, log, hostname });
      components.push({ name: 'forwarder', stop: () => forwarder.close() });
      if (forwarder.url) log(`run: forwarder listening on ${forwarder.url}`);
      const engine = new DetectionEngine({ ruleMatching: config.rules.ruleMatching, minPriority, compilerIdleMs: config.rules.compilerIdleSeconds * 1000, compileTimeoutMs: config.rules.compileTimeoutSeconds * 1000, compileWorkerHeapMb: config.rules.compileWorkerHeapMb, maxConditionNodes: config.rules.maxConditionNodes, moduleCacheDir: join(config.stateDir, 'module-cache'), hostname, metrics, onAlert: (a) => forwarder.submit(a) });
      // The configured rules start compiling in the worker now, while the API opens its database
      // (the module's load then finds the module built or building; measured on a first start: ...).
      void engine.precompile([...builtinRulesFiles(config.rules.builtIn).files, ...files]);
      components.push({ name: 'engine', stop: () => engine.close() });
      // The API before the sources: opening its database (PGlite's first start takes seconds on
      // this thread) must not hold up draining the kernel ring once capture runs.
      if (config.api.enabled) {
        const api = await startApi({ config, log, databaseUrl: process.env.DATABASE_URL });
        components.push({ name: 'api', stop: () => api.close() });
        log(`run: api listening on ${api.url}`);
      }
      // Sources run while the module is enabled (a ModuleConfig in the resources directory).
      const sources = new ModuleSources(log);
      if (config.webhook.enabled) {
        await sources.add({
          name: 'webhook',
          start: async () => {
            const audit = await startAuditWebhook({ config, evaluate: (events) => engine.evaluate(events), metrics, log });
            log(`run: webhook listening on ${audit.webhook.url}`);
            const cpm = config.module.controlPlaneManager
              ? publishAuditWebhookConfig(config.module.auditWebhookConfigFile || join(config.stateDir, 'audit-webhook-config.yaml'), audit.webhook.url, audit.tls.caPem, log)
              : undefined;
            return {
              async stop() {
                cpm?.remove();
                await audit.webhook.close();
              },
            };
          },
        });
      }
      const kernel = syscallModuleSource({ engine, metrics, log, hostname, submit: (a) => forwarder.submit(a) });
      if (kernel) await sources.add(kernel);
      const module = await startModule({ config, dir: values.resources, engine, sources, extraFiles: files, metrics, log, hostname, submit: (a) => forwarder.submit(a), onRulesLoaded: (r) => reportLoad(r) });
      components.push({ name: `module (${module.dir})`, stop: () => module.stop() });
    } catch (err) {
      log(`run: failed to start: ${(err as Error).message}`);
      await stopAll();
      return 1;
    }
    log(`run: ready (${components.map((c) => c.name).join(', ') || 'no servers'})`);
    const signal = await stopSignal;
    log(`run: ${signal} received, stopping`);
    await stopAll();
    log('run: stopped');
    return 0;
  },
};
