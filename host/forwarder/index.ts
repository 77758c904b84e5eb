// The event forwarder (our falcosidekick): every detection of the engine, every POST / payload
// and every POST /test event goes through `submit`, which counts the alert in
// enginesecurity_enginesidekick_engine_events_total and hands it to each output's bounded queue
// (stdout JSON lines by default, and the outputs of forwarder.outputs: outputs/table.ts).
// Alerts dropped by a full output queue are reported by a rate-limited internal alert. The HTTP server runs when
// `forwarder.enabled`; the outputs run either way. Consumes Config + Metrics; produces a Forwarder.
import { readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Config } from '../config/config.js';
import type { Metrics } from '../metrics/index.js';
import { internalAlert } from '../output/alert.js';
import type { Alert } from '../output/alert.js';
import type { Destination } from '../metrics/index.js';
import { falcoJsonWriter } from './outputs/falco-json.js';
import { createOutput, fieldAdapter } from './outputs/output.js';
import { createStdoutOutput } from './outputs/stdout.js';
import { resolveOutputs } from './outputs/table.js';
import { Delivery, type Output, type OutputContext } from './outputs/types.js';
import { startServer, type ForwarderServer, type Readiness, type ServerLimits } from './server.js';

export { TEST_RULE } from './normalize.js';
export type { ComponentStatus, Readiness } from './server.js';

/** The running forwarder. */
export interface Forwarder {
  /** Counts the alert and queues it on every output; never waits, drops are counted. */
  submit(alert: Alert): void;
  /** `http://address:port` of the HTTP server ('' when forwarder.enabled is false). */
  readonly url: string;
  /** Each output and its health (undefined = healthy, else its last failure). */
  outputs(): Array<{ destination: Destination; health: string | undefined }>;
  /** Stops the server, delivers what is queued (bounded wait), closes the outputs. */
  close(): Promise<void>;
}

/** What startForwarder needs. */
export interface ForwarderOptions {
  config: Config;
  metrics: Metrics;
  /** Log lines (stderr); never stdout. */
  log: (message: string) => void;
  /** The hostname of /test events. */
  hostname: string;
  /** Where the stdout output writes (tests); process.stdout by default. */
  stdout?: Writable;
  /** The engine's readiness for /healthz and /readyz (always ready when absent). */
  readiness?: () => Readiness;
  /** The environment falcosidekick's variables are read from; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Least time between two output-drop alerts; default 10 s. */
  dropAlertIntervalMs?: number;
}

/** How long close() lets queued alerts drain. */
const DRAIN_MS = 5000;

/** The rule name of the internal alert for alerts an output dropped (its queue was full). */
export const OUTPUT_DROP_RULE = 'Forwarder output dropped alerts';

/** The internal alert for alerts dropped by full output queues since the last one. */
export function outputDropAlert(drops: ReadonlyMap<Destination, number>, hostname: string, now: bigint = BigInt(Date.now()) * 1_000_000n): Alert {
  const list = [...drops].map(([d, n]) => `${d}=${n}`).join(' ');
  const total = [...drops.values()].reduce((a, b) => a + b, 0);
  return internalAlert(OUTPUT_DROP_RULE, 'Warning', ['forwarder', 'drops'], hostname, `${total} alert(s) dropped since the last report because an output's queue was full (${list})`, { n_drops: total, outputs: [...drops.keys()] }, now);
}

/** The server's bounds from the configuration, with the TLS PEMs read when both files are set (throws, naming the file, when one cannot be read). */
export function serverLimits(fc: Config['forwarder']): ServerLimits {
  const { maxBodyBytes, maxConnectionsPerClient, handshakeTimeoutSeconds, headersTimeoutSeconds, requestTimeoutSeconds, tlsCertFile, tlsKeyFile } = fc;
  const limits: ServerLimits = { maxBodyBytes, maxConnectionsPerClient, handshakeTimeoutSeconds, headersTimeoutSeconds, requestTimeoutSeconds };
  if (!tlsCertFile && !tlsKeyFile) return limits;
  if (!tlsCertFile || !tlsKeyFile) throw new Error('forwarder: TLS needs both forwarder.tlsCertFile and forwarder.tlsKeyFile');
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`forwarder: cannot read ${file}: ${(err as Error).message}`);
    }
  };
  return { ...limits, tls: { certPem: read(tlsCertFile), keyPem: read(tlsKeyFile) } };
}

/**
 * Starts the outputs and, when enabled, the HTTP server. A bad output setting (or an unreadable
 * certificate file) is a rejected promise whose message names the key.
 */
export async function startForwarder(opts: ForwarderOptions): Promise<Forwarder> {
  const { config, metrics, log } = opts;
  const fc = config.forwarder;
  const resolved = resolveOutputs(fc, opts.env ?? process.env);
  if (resolved.problems.length > 0) throw new Error(resolved.problems.map((p) => `config ${p.key}: ${p.message}`).join('; '));
  const limits = fc.enabled ? serverLimits(fc) : undefined; // before any output starts: an unreadable TLS file leaks nothing
  const globalFieldNames = [...Object.keys(resolved.global.customfields), ...Object.keys(resolved.global.templatedfields)];
  const ctx: OutputContext = { metrics, log, hostname: opts.hostname, globalFieldNames };
  const writeLine = falcoJsonWriter(fc.falco);

  // Drops are reported by one rate-limited internal alert, sent to the outputs that are not dropping.
  const drops = new Map<Destination, number>();
  const dropInterval = opts.dropAlertIntervalMs ?? 10_000;
  let lastDropAlert = -Infinity;
  let dropTimer: NodeJS.Timeout | undefined;
  function reportDrops(): void {
    dropTimer = undefined;
    if (drops.size === 0) return;
    lastDropAlert = performance.now();
    const a = outputDropAlert(drops, opts.hostname);
    const skip = new Set(drops.keys());
    drops.clear();
    metrics.alert(a);
    const d = new Delivery(a, writeLine);
    for (const o of outputs) if (!skip.has(o.destination)) o.push(d);
  }
  function onDrop(destination: Destination): void {
    drops.set(destination, (drops.get(destination) ?? 0) + 1);
    if (dropTimer) return;
    dropTimer = setTimeout(reportDrops, Math.max(0, lastDropAlert + dropInterval - performance.now()));
    dropTimer.unref();
  }

  const outputs: Output[] = [];
  const global = resolved.global;
  if (fc.stdout) {
    const stdout = createStdoutOutput({ stream: opts.stdout, capacity: fc.queueSize, metrics, log, onDrop });
    const adapt = fieldAdapter(global.customfields, global.templatedfields);
    outputs.push({ ...stdout, push: (d) => stdout.push(adapt(d)) });
  }
  try {
    for (const r of resolved.outputs) {
      const sender = await r.row.create(r.settings, ctx);
      outputs.push(createOutput(r.row.name, r.settings, sender, ctx, global, onDrop));
    }
  } catch (err) {
    await Promise.all(outputs.map((o) => o.close(0)));
    throw err;
  }

  function submit(alert: Alert): void {
    metrics.alert(alert);
    const d = new Delivery(alert, writeLine);
    if (fc.debugLogging) log(`[DEBUG] : forwarder payload : ${d.json}`);
    for (const o of outputs) o.push(d);
  }

  let server: ForwarderServer | undefined;
  if (limits) server = await startServer({ metrics, accept: submit, hostname: opts.hostname, log, readiness: opts.readiness }, fc.address, fc.port, limits);

  return {
    submit,
    url: server?.url ?? '',
    outputs: () => outputs.map((o) => ({ destination: o.destination, health: o.health() })),
    async close() {
      await server?.close();
      if (dropTimer) {
        clearTimeout(dropTimer);
        reportDrops(); // the drops since the last report, before the outputs close
      }
      await Promise.all(outputs.map((o) => o.close(DRAIN_MS)));
    },
  };
}
