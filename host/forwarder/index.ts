// The event forwarder (our falcosidekick): every detection of the engine, every POST / payload
// and every POST /test event goes through `submit`, which counts the alert in
// enginesecurity_enginesidekick_engine_events_total and hands it to each output's bounded queue
// (stdout JSON lines by default, an optional HTTP webhook). The HTTP server runs when
// `forwarder.enabled`; the outputs run either way. Consumes Config + Metrics; produces a Forwarder.
import type { Writable } from 'node:stream';
import type { Config } from '../config/config.js';
import type { Metrics } from '../metrics/index.js';
import type { Alert } from '../output/alert.js';
import { createStdoutOutput } from './outputs/stdout.js';
import { Delivery, type Output } from './outputs/types.js';
import { checkWebhookUrl, createWebhookOutput } from './outputs/webhook.js';
import { startServer, type ForwarderServer, type Readiness } from './server.js';

export { TEST_RULE } from './normalize.js';
export type { ComponentStatus, Readiness } from './server.js';

/** The running forwarder. */
export interface Forwarder {
  /** Counts the alert and queues it on every output; never waits, drops are counted. */
  submit(alert: Alert): void;
  /** `http://address:port` of the HTTP server ('' when forwarder.enabled is false). */
  readonly url: string;
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
}

/** How long close() lets queued alerts drain. */
const DRAIN_MS = 5000;

/** Starts the outputs and, when enabled, the HTTP server. A bad webhook URL is a rejected promise with the reason. */
export async function startForwarder(opts: ForwarderOptions): Promise<Forwarder> {
  const { config, metrics, log } = opts;
  const fc = config.forwarder;
  const outputs: Output[] = [];
  if (fc.stdout) outputs.push(createStdoutOutput({ stream: opts.stdout, capacity: fc.queueSize, metrics, log }));
  if (fc.webhookUrl !== '') {
    const problem = checkWebhookUrl(fc.webhookUrl);
    if (problem) throw new Error(problem);
    outputs.push(
      createWebhookOutput({ url: fc.webhookUrl, timeoutMs: fc.webhookTimeoutMs, retries: fc.webhookRetries, capacity: fc.queueSize, metrics, log }),
    );
  }

  function submit(alert: Alert): void {
    metrics.alert(alert);
    const d = new Delivery(alert);
    if (fc.debugLogging) log(`[DEBUG] : forwarder payload : ${d.json}`);
    for (const o of outputs) o.push(d);
  }

  let server: ForwarderServer | undefined;
  if (fc.enabled) server = await startServer({ metrics, accept: submit, hostname: opts.hostname, log, readiness: opts.readiness }, fc.address, fc.port);

  return {
    submit,
    url: server?.url ?? '',
    async close() {
      await server?.close();
      await Promise.all(outputs.map((o) => o.close(DRAIN_MS)));
    },
  };
}
