// `rae run`: the long-running host. Loads the configuration (defaults unless --config), the
// built-in and configured rules, starts every enabled component, reports `ready` on stderr once
// all are up (a source that fails is retried, and readiness on /healthz says so until it is up),
// reloads the configuration and rules on SIGHUP (reload.ts), and on SIGTERM/SIGINT stops every
// component after evaluating the audit events already accepted (bounded, logged).
// This file only sequences the start-up steps, one file each under run/ (as Falco's
// app/actions/): load-config, signals, lifecycle (components, stop, readiness), start-outputs,
// start-api (and start-console, once the API is up), start-engine, start-sources, start-reload,
// load-rules (reporting, --dry-run).
import { mkdirSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { log, type Command } from './command.js';
import type { Reloader } from './reload.js';
import { checkRun } from './run-config.js';
import { versionInfo } from './run-info.js';
import { HELP } from './run/help.js';
import { loadRunConfig } from './run/load-config.js';
import { inspectRules, onRulesLoaded } from './run/load-rules.js';
import type { DetectionEngine } from '../runtime/index.js';

export const runCommand: Command = {
  name: 'run',
  help: HELP,
  async run(argv) {
    const loaded = loadRunConfig(argv);
    if (typeof loaded === 'number') return loaded;
    const { flags, config, overrides } = loaded;
    if (flags['dry-run'] || flags['list-rules'] || flags.describe !== undefined) return inspectRules(config, flags.describe, flags['list-rules'] ?? false, flags.json ?? false, flags.url);
    // a start's modules load only now (run/starting.ts): the answers above need none of them
    const { apiStarts, consoleRules, createDatabaseLink, createFaultTracking, createMetrics, handleSignals, Lifecycle, startEngine, startOutputs, startReload, startSources } = await import('./run/starting.js');
    const life = new Lifecycle();
    const signals = handleSignals(life);
    mkdirSync(config.stateDir, { recursive: true });
    log(`run: state directory ${config.stateDir}`);
    const checked = checkRun(config);
    if (!checked.ok) {
      for (const p of checked.problems) log(`run: ${p}`, 'error');
      return 1;
    }
    const { minPriority, files } = checked;
    const hostname = config.hostname ?? process.env.RAE_HOSTNAME ?? process.env.FALCO_HOSTNAME ?? osHostname();
    // The configuration as read, before the module's state changes any of it (SIGHUP compares with it).
    const running = structuredClone(config);
    life.board.set('engine', { state: 'starting' });
    // The engine's own faults, reported to errorTracking.dsn or its own project (host/tracking).
    const tracking = createFaultTracking({ dsn: config.errorTracking.dsn, version: versionInfo().version, hostname, log });
    if ('problem' in tracking) {
      log(`run: config errorTracking.dsn: ${tracking.problem}`, 'error');
      return 1;
    }
    tracking.handleProcessFaults();
    life.add({ name: 'error tracking', stop: async () => void (await tracking.close()) });
    let reloader: Reloader;
    try {
      const metrics = tracking.tapMetrics(createMetrics({ processMetrics: true }));
      const version = versionInfo();
      metrics.versionInfo(version.version, version.engine_version);
      // the store destination writes into the API's database, once the API has opened it
      const storeLink = config.api.enabled ? createDatabaseLink() : undefined;
      const outputs = await startOutputs(config, metrics, hostname, life, storeLink);
      // the console's Rules page reads the engine, which starts after the API may have
      let engine: DetectionEngine | undefined;
      const api = apiStarts(config, life, tracking, storeLink, () => consoleRules(engine?.ruleset, engine?.ruleFigures ?? []));
      api.early();
      outputs.announce();
      const submit = outputs.submit;
      engine = startEngine(config, { minPriority, files, hostname, metrics, submit, tracking }, life);
      const module = await startSources(config, engine, { resourcesDir: flags.resources, files, hostname, metrics, submit, tracking, onRulesLoaded: onRulesLoaded(metrics, tracking) }, life);
      reloader = startReload(config, running, flags, overrides, module, life);
      signals.reloadWith(reloader);
      // A database still to be created: the API last, once the detection path is up.
      api.late();
    } catch (err) {
      log(`run: failed to start: ${(err as Error).message}`, 'error');
      life.stopping = true;
      await life.stopAll();
      return 1;
    }
    life.startedUp();
    signals.requestPending();
    const signal = await signals.stopped;
    const t0 = performance.now();
    log(`run: ${signal} received, stopping`);
    await reloader.idle();
    await life.stopAll();
    log(`run: stopped in ${Math.round(performance.now() - t0)} ms`);
    return 0;
  },
};
