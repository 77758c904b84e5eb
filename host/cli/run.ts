// `rae run`: the long-running host. Loads the configuration (defaults unless --config), the
// built-in and configured rules, starts every enabled component, reports `ready` on stderr once
// all are up (a source that fails is retried, and readiness on /healthz says so until it is up),
// reloads the configuration and rules on SIGHUP (reload.ts), and on SIGTERM/SIGINT stops every
// component after evaluating the audit events already accepted (bounded, logged).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { join } from 'node:path';
import { pgliteDir, startApi } from '../api/index.js';
import { loadConfig, type Config } from '../config/config.js';
import { builtinRulesFiles, type LoadResult, loadRules, renderDiagnostic, type RuleFigure } from '../engine/index.js';
import { startForwarder, type ForwarderServer } from '../forwarder/index.js';
import { startFanout } from '../output/fanout.js';
import { createMetrics, type Metrics } from '../metrics/index.js';
import type { Alert } from '../output/alert.js';
import { DetectionEngine } from '../runtime/index.js';
import { ModuleSources, publishAuditWebhookConfig, startModule, type ModuleSource } from '../resources/index.js';
import { startAuditWebhook } from '../sources/audit/index.js';
import { followContainers } from '../sources/container/index.js';
import { followDomainNames } from '../sources/dns/index.js';
import { KernelIngest } from '../sources/syscall/ingest.js';
import { readProcess } from '../sources/syscall/procfs.js';
import { syscallModuleSource } from '../sources/syscall/source.js';
import { createFaultTracking } from '../tracking/index.js';
import { log, onStdoutClosed, parseCommandArgs, setLogLevel, UsageError, type Command } from './command.js';
import { notReady, ReadinessBoard, reportUnavailableSource } from './readiness.js';
import { Reloader } from './reload.js';
import { checkRun, expandLimitsOf, SELECTION_FILE } from './run-config.js';
import { watchRulesFiles } from './rules-watch.js';
import { fetchFigures } from './rule-figures.js';
import { describeRule, printEvents, printFields, printRules, printVersion, versionInfo } from './run-info.js';

const HELP = `Usage: rae run [-c FILE] [-r FILE|DIR ...] [-o KEY=VALUE ...] [--state-dir DIR] [--resources DIR]
               [-T TAG ...|-t TAG ...] [-D SUBSTRING ...] [--dry-run]
       rae run --version | --list[=SOURCE] | --list-events | -L | -l RULE  [--json]

Runs the engine: loads the built-in rules (rules/) and any configured rules files, starts the
enabled sources and servers, prints one line containing 'ready' on stderr once everything is up,
and runs until SIGTERM or SIGINT, which stop it after evaluating the audit events already
accepted (at most webhook.drainTimeoutSeconds). SIGHUP reads the configuration file and the
rules again and swaps the new ruleset into the running engine (rules.builtIn and rules.files
apply live; other changed keys are logged as needing a restart). Detections are written to
stdout as JSON lines; logs go to stderr.

Options (Falco's where Falco has one):
  -c, --config FILE     YAML configuration; every setting has a default, so none is needed;
                        RAE_<SECTION>_<KEY> environment variables then override single keys
                        (e.g. RAE_FORWARDER_WEBHOOKURL=http://sidekick:2801/)
  -o, --option KEY=VALUE  set one configuration key by its dotted path (repeatable), typed by
                        the key: numbers, true/false, lists as [a,b] or the key given again;
                        e.g. -o forwarder.port=2802 -o rules.builtIn=[syscall]
  -r, --rules FILE|DIR  rules file, or directory of *.yaml/*.yml loaded in name order
                        (repeatable; replaces rules.files, as Falco's -r replaces rules_files)
  -T, --disable-tag TAG disable the rules with this tag (repeatable; rules.disableTags)
  -t, --enable-tag TAG  enable only the rules with this tag (repeatable; rules.enableTags;
                        not with -T)
  -D, --disable-rule SUBSTRING  disable the rules whose name contains it (repeatable;
                        rules.disableNames)
  -S, --snaplen LEN     bytes of a syscall's I/O buffer recorded for evt.buffer/evt.arg.data
                        (syscall.snaplen, default 80, at most 4096; copied only for the syscalls
                        of rules that read them)
      --dry-run         load the configuration and the rules, report them, exit 0 (valid) or 1
      --version         print the version and the rules engine version (--json: as JSON)
      --list[=SOURCE]   print the fields of every source, or of syscall or k8s_audit
      --list-events     print the event type names evt.type accepts
  -L, --list-rules      print every loaded rule with its description
  -l, --describe RULE   print one loaded rule: description, condition, output, priority, tags
      --url URL         with -l: add the rule's evaluations, matches and cost from the running
                        engine whose forwarder answers there (e.g. http://127.0.0.1:2801)
      --json            print --version, --list, -L and -l as JSON
      --state-dir DIR   state directory (default: $RAE_STATE_DIR, else /var/lib/runtime-audit-engine
                        as root, else ~/.local/state/runtime-audit-engine)
      --resources DIR   watched directory of ModuleConfig and EngineAuditRules manifests (default:
                        resources.dir, else <state-dir>/resources, created with an enabled
                        ModuleConfig on first start); the sources run only while a ModuleConfig
                        enables the module; see docs/resources.md
  -h, --help            show this help

Components (each can be disabled in the configuration):
  outputs    every detection goes to stdout (Falco's JSON line) and the configured outputs
             (forwarder.stdout, forwarder.outputs.*), whether or not the forwarder runs
  forwarder  falcosidekick's HTTP face on 127.0.0.1:2801: /test, /, /healthz, /readyz, /ping,
             /metrics (forwarder.*); what it receives goes out with the detections;
             /healthz answers 503 while a component is starting or failed
  webhook    orchestrator audit webhook, HTTPS on 127.0.0.1:9765/orchestrator-audit (webhook.*;
             TLS material in <state-dir>/webhook-tls; see rae webhook-config and docs/webhook.md)
  api        error-tracking REST API on 127.0.0.1:8080 (api.*)`;

/** A started part of the host. */
interface Component {
  name: string;
  stop(): Promise<void>;
}

/** Logs a load result: errors in full, then a one-line summary. */
function reportLoad(result: LoadResult): void {
  for (const d of result.diagnostics.filter((x) => x.severity === 'error')) log(renderDiagnostic(d, result.sources), 'error');
  const s = result.ruleset.stats;
  const warnings = result.diagnostics.filter((d) => d.severity === 'warning').length;
  log(`run: loaded ${s.rules} rules (${s.enabled} enabled), ${s.macros} macros, ${s.lists} lists from ${result.files.length} file(s); ${warnings} warning(s) (see rae validate)`);
}

export const runCommand: Command = {
  name: 'run',
  help: HELP,
  async run(argv) {
    // Falco's --list takes an optional =SOURCE; parseArgs needs a value, so a bare --list is --list=.
    const { values } = parseCommandArgs(
      argv.map((a) => (a === '--list' ? '--list=' : a)),
      {
        config: { type: 'string', short: 'c' },
        'state-dir': { type: 'string' },
        resources: { type: 'string' },
        option: { type: 'string', short: 'o', multiple: true },
        rules: { type: 'string', short: 'r', multiple: true },
        'disable-tag': { type: 'string', short: 'T', multiple: true },
        'enable-tag': { type: 'string', short: 't', multiple: true },
        'disable-rule': { type: 'string', short: 'D', multiple: true },
        snaplen: { type: 'string', short: 'S' },
        'dry-run': { type: 'boolean' },
        version: { type: 'boolean' },
        list: { type: 'string' },
        'list-events': { type: 'boolean' },
        'list-rules': { type: 'boolean', short: 'L' },
        describe: { type: 'string', short: 'l' },
        url: { type: 'string' },
        json: { type: 'boolean' },
      },
    );
    const json = values.json ?? false;
    if (values.version) return (printVersion(json), 0);
    if (values['list-events']) return (printEvents(), 0);
    if (values.list !== undefined) {
      if (printFields(values.list, json)) return 0;
      throw new UsageError(`--list: unknown source '${values.list}' (known: syscall, k8s_audit)`);
    }
    // The flags are -o options of their keys (given again, a list key appends), before the -o options.
    const flagged = (key: string, list: string[] | undefined) => (list ?? []).map((v) => `${key}=${v}`);
    const overrides = [
      ...flagged('rules.files', values.rules),
      ...flagged('rules.disableTags', values['disable-tag']),
      ...flagged('rules.enableTags', values['enable-tag']),
      ...flagged('rules.disableNames', values['disable-rule']),
      ...flagged('syscall.snaplen', values.snaplen === undefined ? undefined : [values.snaplen]),
      ...(values.option ?? []),
    ];
    const { config, problems } = loadConfig(values.config, values['state-dir'], overrides);
    if (problems.length > 0) {
      for (const p of problems) log(`run: config ${p.key}: ${p.message}`, 'error');
      return 1;
    }
    setLogLevel(config.logLevel);
    if (values.url !== undefined && values.describe === undefined) throw new UsageError('--url goes with -l RULE');
    if (values.describe !== undefined && values.url !== undefined) {
      const got = await fetchFigures(values.url);
      if (!got.ok) {
        log(`run: --url: ${got.message}`, 'error');
        return 1;
      }
      return inspectRules(config, values.describe, false, json, got.figures);
    }
    if (values['dry-run'] || values['list-rules'] || values.describe !== undefined) return inspectRules(config, values.describe, values['list-rules'] ?? false, json);
    // Signals are handled from the start: a stop or a reload during start-up is clean too, and no
    // signal ends the process with accepted events still queued (Node's default for SIGHUP).
    let stopping = false;
    let reloader: Reloader | undefined;
    let reloadPending = false;
    const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        if (stopping) return log(`run: ${signal} received while stopping; the stop goes on (bounded by webhook.drainTimeoutSeconds)`);
        stopping = true;
        resolve(signal);
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      // the reader of the alert lines has gone (EPIPE): as SIGPIPE would, but a clean stop
      onStdoutClosed(() => stop('SIGPIPE'));
    });
    process.on('SIGHUP', () => {
      if (stopping) return log('run: SIGHUP received while stopping; ignored');
      log('run: SIGHUP received, reloading the configuration and rules');
      if (reloader) void reloader.request();
      else reloadPending = true;
    });
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

    const components: Component[] = [];
    /** Settles once the API is up, has failed, or was closed by a stop during its start (rae run starts it last, without waiting). */
    let apiStarted: Promise<void> | undefined;
    /** Tells an API still starting that the run stops: it closes its database instead of listening. */
    const apiAbort = new AbortController();
    // Every started component, last first; then an API still opening its database, which cannot be
    // cut short (a PGlite first start is an initdb: stopped half-way it would leave a database the
    // next start cannot open) but holds no port yet: the ports are free before the wait.
    const stopAll = async () => {
      apiAbort.abort();
      for (const c of components.reverse()) {
        try {
          await c.stop();
        } catch (err) {
          log(`run: stopping ${c.name}: ${(err as Error).message}`);
        }
      }
      if (!apiStarted) return;
      log('run: every component is stopped but the api, which is still opening its database; it closes it once open, without listening');
      await apiStarted;
    };
    let started = false;
    let wasReady = false;
    const board = new ReadinessBoard((r) => {
      if (!started || stopping || r.ready === wasReady) return;
      wasReady = r.ready;
      log(r.ready ? `run: ready (${components.map((c) => c.name).join(', ')}): every component is up` : `run: no longer ready: ${notReady(r)}; /healthz answers 503 until it is up`);
    });
    board.set('engine', { state: 'starting' });
    // The engine's own faults, reported to errorTracking.dsn or its own project (host/tracking).
    const tracking = createFaultTracking({ dsn: config.errorTracking.dsn, version: versionInfo().version, hostname, log });
    if ('problem' in tracking) {
      log(`run: config errorTracking.dsn: ${tracking.problem}`, 'error');
      return 1;
    }
    tracking.handleProcessFaults();
    components.push({ name: 'error tracking', stop: async () => void (await tracking.close()) });
    try {
      const metrics = tracking.tapMetrics(createMetrics({ processMetrics: true }));
      const version = versionInfo();
      metrics.versionInfo(version.version, version.engine_version);
      // Every loaded rules file's sha256, as Falco's falcosecurity_falco_sha256_rules_files_info, updated on each load.
      const rulesLoaded = (r: LoadResult) => {
        reportLoad(r);
        const files = r.files.filter((f) => f.name !== SELECTION_FILE).map((f) => ({ name: f.name, text: r.sources(f.name)?.text ?? '' }));
        const hashes = Object.entries(versionInfo(files).rules_files_sha256).map(([name, sha256]) => ({ name, sha256 }));
        metrics.rulesFiles(hashes);
        tracking.setRulesHash(
          createHash('sha256')
            .update(hashes.map((h) => `${h.name} ${h.sha256}\n`).join(''))
            .digest('hex'),
        );
      };
      // The fan-out (stdout and the destinations) runs either way; the forwarder's server feeds it.
      const fanout = await startFanout({ config: config.forwarder, metrics, log, hostname });
      let forwarder: ForwarderServer | undefined;
      const stopForwarder = async () => {
        await forwarder?.close(); // the server first: nothing new reaches the fan-out while it drains
        await fanout.close();
      };
      components.push({ name: 'forwarder', stop: stopForwarder });
      if (config.forwarder.enabled) forwarder = await startForwarder({ config: config.forwarder, metrics, submit: fanout.submit, log, hostname, readiness: () => board.report() });
      // The API is never awaited: until it is up, readiness names it; if it fails, detection goes
      // on and readiness reports the API failed. Creating its database (PGlite's first start) is
      // seconds of this thread's CPU: it starts once the detection path is up, so that comes
      // first (measured under load: started alongside, it put the detection path 3.6 s later).
      // An existing database (a restart) or a PostgreSQL server only opens: alongside the start
      // (measured under load: the detection path as soon, every component 0.7 s sooner).
      const startApiAside = () => {
        board.set('api', { state: 'starting' });
        const pending = startApi({ config, log, databaseUrl: process.env.DATABASE_URL, signal: apiAbort.signal })
          .then(
            async (api) => {
              if (apiAbort.signal.aborted) return api.close(); // up just as the stop began
              // the engine's faults still pending go into the API's database before it closes
              components.push({ name: 'api', stop: () => tracking.close().then(() => api.close()) });
              log(`run: api listening on ${api.url}`);
              board.set('api', { state: 'up' });
              void tracking.apiStarted(api.db);
            },
            (err: unknown) => {
              if (apiAbort.signal.aborted) return log(`run: the api did not start: ${(err as Error).message}`);
              log(`run: the api failed to start: ${(err as Error).message}; detection goes on without it`, 'error');
              board.set('api', { state: 'failed', error: (err as Error).message });
              tracking.apiUnavailable(`the api failed to start`);
            },
          )
          .finally(() => {
            apiStarted = undefined;
          });
        apiStarted = pending;
      };
      const apiEarly = config.api.enabled && (!!process.env.DATABASE_URL || existsSync(join(pgliteDir(config.stateDir), 'PG_VERSION')));
      if (apiEarly) startApiAside();
      board.set('forwarder', forwarder ? { state: 'up' } : { state: 'off', reason: 'forwarder.enabled is false' });
      if (forwarder) log(`run: forwarder listening on ${forwarder.url}`);
      // a process first seen in a syscall record is read from /proc, as libsinsp does (unknown-process.ts)
      const kernelIngest = new KernelIngest({ hostname, unknownProcesses: { read: (pid) => readProcess(pid), onLookup: (r) => metrics.processLookup(r) } });
      if (config.containers.enabled) components.push(followContainers(config.containers, kernelIngest.containers, log));
      // the rules' domain names (fd.sip.name ...) resolved off the event path into the module's DNS table
      if (config.dns.enabled) components.push(followDomainNames(config.dns, kernelIngest.dns, log));
      const engine = new DetectionEngine({
        ruleMatching: config.rules.ruleMatching,
        minPriority,
        compilerIdleMs: config.rules.compilerIdleSeconds * 1000,
        compileTimeoutMs: config.rules.compileTimeoutSeconds * 1000,
        compileWorkerHeapMb: config.rules.compileWorkerHeapMb,
        ruleCounters: config.rules.ruleCounters,
        moduleCacheDir: join(config.stateDir, 'module-cache'),
        hostname,
        kernel: kernelIngest,
        metrics,
        expandLimits: expandLimitsOf(config),
        maxOutputFieldBytes: config.rules.maxOutputFieldBytes,
        onAlert: fanout.submit,
        onError: (e) => tracking.engineError(e),
      });
      // The configured rules start compiling in the worker now (the module's load then finds the
      // module built or building).
      void engine.precompile([...builtinRulesFiles(config.rules.builtIn).files, ...files]);
      components.push({ name: 'engine', stop: () => engine.close() });
      // Sources run while the module is enabled (a ModuleConfig in the resources directory); one
      // that fails to start is retried with backoff, and readiness shows it meanwhile.
      const sources = new ModuleSources(log, {
        onState: (name, s) => {
          board.set(name, s);
          tracking.sourceState(name, s);
        },
      });
      if (config.webhook.enabled) await sources.add(webhookSource(config, engine, metrics));
      const kernel = syscallModuleSource({ engine, metrics, log, hostname, submit: fanout.submit, capture: { snaplen: config.syscall.snaplen } }, (code, reason) => {
        reportUnavailableSource({ board, metrics, submit: fanout.submit, hostname, log }, 'syscall', code, reason, config.syscall.optional);
        tracking.probeUnavailable(reason);
      });
      if (kernel) await sources.add(kernel);
      const submitModuleAlert = (a: Alert) => {
        fanout.submit(a);
        tracking.moduleAlert(a);
      };
      const module = await startModule({ config, dir: values.resources, engine, sources, extraFiles: files, metrics, log, hostname, submit: submitModuleAlert, onRulesLoaded: rulesLoaded });
      components.push({ name: `module (${module.dir})`, stop: () => module.stop() });
      board.set('engine', { state: 'up' });
      const reload = new Reloader({ configFile: values.config, stateDirOverride: values['state-dir'], overrides, running, module, log });
      reloader = reload;
      if (config.rules.watch && config.rules.files.length > 0) {
        const watched = watchRulesFiles(
          config.rules.files,
          () => {
            if (stopping) return;
            log('run: a rules file changed, reloading the configuration and rules');
            void reload.request();
          },
          log,
        );
        components.push({ name: 'rules watch', stop: async () => watched.close() });
        log(`run: watching ${watched.dirs.join(', ')} for rules changes (rules.watch)`);
      }
      // A database still to be created: the API last, once the detection path is up.
      if (config.api.enabled && !apiEarly) startApiAside();
      if (!config.api.enabled) tracking.apiUnavailable('api.enabled is false');
    } catch (err) {
      log(`run: failed to start: ${(err as Error).message}`, 'error');
      stopping = true;
      await stopAll();
      return 1;
    }
    started = true;
    const names = components.map((c) => c.name).join(', ') || 'no servers';
    const readiness = board.report();
    wasReady = readiness.ready;
    // Without the word on its own while something failed: tests and scripts wait for it.
    log(readiness.ready ? `run: ready (${names})` : `run: started (${names}); waiting for ${notReady(readiness)}; /healthz answers 503 until every component is up`);
    if (reloadPending) void reloader.request();
    const signal = await stopSignal;
    const t0 = performance.now();
    log(`run: ${signal} received, stopping`);
    await reloader.idle();
    await stopAll();
    log(`run: stopped in ${Math.round(performance.now() - t0)} ms`);
    return 0;
  },
};

/** --dry-run, -L and -l: the configuration and the rules as `rae run` would load them, without starting anything. */
function inspectRules(config: Config, describe: string | undefined, list: boolean, json: boolean, figures?: readonly RuleFigure[]): number {
  const checked = checkRun(config);
  if (!checked.ok) {
    for (const p of checked.problems) log(`run: ${p}`, 'error');
    return 1;
  }
  // the same bounds as the engine of `rae run` loads with
  const result = loadRules([...builtinRulesFiles(config.rules.builtIn).files, ...checked.files], { limits: expandLimitsOf(config) });
  if (describe !== undefined) {
    const rule = result.ruleset.rules.find((r) => r.name === describe);
    if (!rule) {
      log(`run: -l: no loaded rule is named '${describe}'`, 'error');
      return 1;
    }
    describeRule(rule, json, result, figures);
    return 0;
  }
  if (list) {
    printRules(result.ruleset.rules, json);
    return 0;
  }
  reportLoad(result);
  log(`run: dry run: the configuration is valid and the rules ${result.ok ? 'load' : 'have errors (above)'}; exiting without starting`);
  return result.ok ? 0 : 1;
}

/** The orchestrator audit webhook as a module source; its stop drains the accepted events (bounded, logged). */
function webhookSource(config: Config, engine: DetectionEngine, metrics: Metrics): ModuleSource {
  return {
    name: 'webhook',
    start: async () => {
      const audit = await startAuditWebhook({ config, evaluate: (events) => engine.evaluate(events), metrics, log });
      log(`run: webhook listening on ${audit.webhook.url}`);
      const cpm = config.module.controlPlaneManager
        ? publishAuditWebhookConfig(config.module.auditWebhookConfigFile || join(config.stateDir, 'audit-webhook-config.yaml'), audit.webhook.url, audit.tls.caPem, { certPem: audit.tls.clientCertPem, keyPem: audit.tls.clientKeyPem }, log)
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
