// `rae forwarder`: the forwarder on its own, as falcosidekick runs beside Falco (docs/fleet.md).
// Every node's engine posts its alerts to it (the engine's webhook output, or Falco's
// http_output, on POST /); the fan-out hands them to stdout and the outputs of
// `forwarder.outputs` (falcosidekick's keys, as `rae run` reads them), whose store destination
// writes every one into ONE database: the PostgreSQL server of DATABASE_URL, else PGlite in
// <stateDir>/api-db. The API serves the query routes (/api/v1/events) with the API's tokens.
// Start: the database and the API first (a forwarder that cannot store refuses to start: exit 1,
// the reason on stderr), then the fan-out and the server, then `forwarder: ready` on stderr.
// SIGTERM/SIGINT: the server closes (nothing new arrives), the fan-out drains (bounded), the
// store's statements in flight finish, the API closes its database; exit 0. Consumes argv and the
// configuration file of `rae run`; produces a running forwarder until a stop signal.
import { hostname as osHostname } from 'node:os';
import { startApi, type RunningApi } from '../api/index.js';
import { loadConfig } from '../config/config.js';
import { startConsole } from '../console/index.js';
import { startForwarder, type ForwarderServer } from '../forwarder/index.js';
import { createMetrics } from '../metrics/index.js';
import { createDatabaseLink } from '../output/destinations/store-link.js';
import { startFanout, type Fanout } from '../output/fanout.js';
import { log, onStdoutClosed, parseCommandArgs, setLogLevel, type Command } from './command.js';
import { announceConsole } from './run/start-console.js';

const HELP = `Usage: rae forwarder [-c FILE] [-o KEY=VALUE ...] [--state-dir DIR]

Runs the event forwarder alone, as falcosidekick runs beside Falco: the engines of every node
post their alerts to it (POST /, Falco's http_output payload: point an engine's webhook output
at it with forwarder.outputs.webhook.address=http://HOST:2801/), it delivers them to stdout and
the configured outputs (forwarder.outputs, falcosidekick's keys), stores every one in one
database, and serves the query API (GET /api/v1/events/search, /count, /count/:groupby, /:id,
/stream) with the API's personal access tokens (rae admin, api.bootstrapFile), and the web
console for the whole fleet on console.address:console.port (default 127.0.0.1:2802). Prints
'forwarder: ready' on stderr once it listens; SIGTERM or SIGINT stop it after delivering what
is queued (bounded). Logs go to stderr.

The database: the PostgreSQL server of $DATABASE_URL when set, else PGlite in
<state-dir>/api-db (one process only). A database that cannot be opened is an error (exit 1).

Options:
  -c, --config FILE     YAML configuration, the file of 'rae run' (it reads the sections
                        forwarder, api, hostname and logLevel); RAE_<SECTION>_<KEY> environment
                        variables and falcosidekick's (WEBHOOK_ADDRESS, ...) override keys
  -o, --option KEY=VALUE  set one configuration key by its dotted path (repeatable), e.g.
                        -o forwarder.address=0.0.0.0 -o forwarder.outputs.store.maxrows=5000000
      --state-dir DIR   where the PGlite database lives (default $RAE_STATE_DIR, else
                        /var/lib/runtime-audit-engine as root)
  -h, --help            this help

Listens on forwarder.address:forwarder.port (default 127.0.0.1:2801) and api.address:api.port
(default 127.0.0.1:8080). Docs: docs/fleet.md, docs/console.md, docs/forwarder.md.

Examples:
  DATABASE_URL=postgres://rae:secret@db:5432/rae rae forwarder -o forwarder.address=0.0.0.0 -o api.address=0.0.0.0
  rae run -o forwarder.outputs.webhook.address=http://forwarder.example:2801/   # on each node`;

/** What runs once the start is over, closed in reverse order by stop(). */
interface Running {
  api?: RunningApi;
  console?: Awaited<ReturnType<typeof startConsole>>;
  link?: ReturnType<typeof createDatabaseLink>;
  fanout?: Fanout;
  server?: ForwarderServer;
}

/** The server first (nothing new arrives), then the fan-out's drain, the store's statements, the database. */
async function stop(r: Running): Promise<void> {
  await r.server?.close();
  await r.console?.close();
  await r.fanout?.close();
  await r.link?.release();
  await r.api?.close();
}

/** Resolves with the first SIGTERM, SIGINT or closed stdout (EPIPE); a second one while stopping is logged. */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: string) => {
      if (stopping) return log(`forwarder: ${signal} received while stopping; the stop goes on (queued alerts drain for at most 5 s)`);
      stopping = true;
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    onStdoutClosed(() => onSignal('SIGPIPE'));
  });
}

export const forwarderCommand: Command = {
  name: 'forwarder',
  help: HELP,
  async run(argv) {
    const { values: flags } = parseCommandArgs(argv, {
      config: { type: 'string', short: 'c' },
      option: { type: 'string', short: 'o', multiple: true },
      'state-dir': { type: 'string' },
    });
    const stopped = stopSignal(); // from the start: a stop during start-up waits for it, then stops cleanly
    const { config, problems, notes } = loadConfig(flags.config, flags['state-dir'], flags.option ?? []);
    for (const note of notes) log(`forwarder: config ${note}`, 'warning');
    if (problems.length > 0) {
      for (const p of problems) log(`forwarder: config ${p.key}: ${p.message}`, 'error');
      return 1;
    }
    setLogLevel(config.logLevel);
    if (!config.forwarder.enabled) {
      log('forwarder: config forwarder.enabled: false turns off the server this command runs; remove it (or set it true)', 'error');
      return 1;
    }
    const hostname = config.hostname ?? process.env.RAE_HOSTNAME ?? process.env.FALCO_HOSTNAME ?? osHostname();
    const metrics = createMetrics({ processMetrics: true });
    const running: Running = {};
    try {
      if (config.api.enabled) {
        running.api = await startApi({ config, log, databaseUrl: process.env.DATABASE_URL });
        running.link = createDatabaseLink();
        running.link.open(running.api.db);
      } else log('forwarder: api.enabled is false: no database, so no alert store and no query API');
      running.fanout = await startFanout({ config: config.forwarder, metrics, log, hostname, alertDatabase: running.link });
      running.server = await startForwarder({ config: config.forwarder, metrics, submit: running.fanout.submit, log, hostname });
      // the fleet's console: the same pages as on a node, over the one database; no engine beside it, so no rules
      if (running.api && config.console.enabled) running.console = await startConsole({ db: running.api.db, log, address: config.console.address, port: config.console.port });
    } catch (err) {
      log(`forwarder: cannot start: ${(err as Error).message}`, 'error');
      await stop(running);
      return 1;
    }
    const outputs = running.fanout.outputs().map((o) => o.destination);
    log(`forwarder: listening on ${running.server.url} (POST / takes the engines' alerts)`);
    if (running.api) log(`forwarder: query API on ${running.api.url}/api/v1/events (storage ${running.api.db.kind} at ${running.api.db.location})`);
    if (running.console && running.api) await announceConsole(running.console.url, running.api.db);
    log(`forwarder: ready (outputs: ${outputs.join(', ') || 'none'})`);
    const signal = await stopped;
    const t0 = performance.now();
    log(`forwarder: ${signal} received, stopping`);
    await stop(running);
    log(`forwarder: stopped in ${Math.round(performance.now() - t0)} ms`);
    return 0;
  },
};
