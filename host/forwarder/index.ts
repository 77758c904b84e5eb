// The event forwarder: falcosidekick's HTTP face (server.ts: POST /test, POST /, /healthz,
// /readyz, /ping, /metrics). What it receives is normalised as falcosidekick does
// (normalize.ts) and handed to the engine's fan-out (host/output/fanout.ts), which delivers it
// with the engine's own alerts; the fan-out runs whether or not this server does. Consumes the
// server keys of the `forwarder` section (config.ts) and where to hand alerts; produces a
// running server.
import type { Metrics } from '../metrics/index.js';
import type { Alert } from '../output/alert.js';
import { serverLimits, type ForwarderServerConfig } from './config.js';
import { startServer, type ForwarderServer, type Readiness } from './server.js';

export type { ComponentStatus, ForwarderServer, Readiness } from './server.js';

/** What startForwarder needs. */
export interface ForwarderOptions {
  config: ForwarderServerConfig;
  metrics: Metrics;
  /** Where accepted alerts go (the fan-out's submit); never waits. */
  submit: (alert: Alert) => void;
  /** Log lines (stderr); never stdout. */
  log: (message: string) => void;
  /** The hostname of /test events. */
  hostname: string;
  /** The engine's readiness for /healthz and /readyz (always ready when absent). */
  readiness?: () => Readiness;
}

/** Starts the HTTP server on forwarder.address:port; an unreadable certificate file is a rejected promise naming the file. */
export async function startForwarder(opts: ForwarderOptions): Promise<ForwarderServer> {
  const { config: fc, metrics, log } = opts;
  return startServer({ metrics, accept: opts.submit, hostname: opts.hostname, log, readiness: opts.readiness }, fc.address, fc.port, serverLimits(fc));
}
