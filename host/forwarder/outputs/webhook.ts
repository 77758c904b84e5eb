// The HTTP webhook output: POSTs each alert's JSON line to a URL through undici, as Falco's
// http_output posts to falcosidekick (`Content-Type: application/json`, one alert per request).
// Any 2xx is a delivery; another status, a connection error or the timeout is a failed attempt,
// retried with backoff by the shared queue, and counted once every retry has failed.
import { Agent, request } from 'undici';
import type { Metrics } from '../../metrics/index.js';
import { createQueuedOutput } from './queue.js';
import type { AttemptResult, Output } from './types.js';

/** Options of the webhook output. */
export interface WebhookOutputOptions {
  url: string;
  timeoutMs: number;
  retries: number;
  capacity: number;
  backoffMs?: (attempt: number) => number;
  metrics: Metrics;
  log: (message: string) => void;
}

/** Checks a webhook URL: undefined if usable, else the reason. */
export function checkWebhookUrl(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `forwarder.webhookUrl ${JSON.stringify(url)} is not a URL`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `forwarder.webhookUrl must be http:// or https://, not ${u.protocol}`;
  return undefined;
}

/** An output posting alerts to `opts.url`. */
export function createWebhookOutput(opts: WebhookOutputOptions): Output {
  const agent = new Agent({ connections: 4, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs });

  async function deliver(json: string, closing: AbortSignal): Promise<AttemptResult> {
    try {
      const res = await request(opts.url, {
        method: 'POST',
        body: json,
        headers: { 'content-type': 'application/json', 'user-agent': 'runtime-audit-engine' },
        dispatcher: agent,
        signal: AbortSignal.any([closing, AbortSignal.timeout(opts.timeoutMs)]),
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300 ? undefined : `HTTP ${res.statusCode}`;
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string } };
      if (e.name === 'TimeoutError') return `no answer within ${opts.timeoutMs} ms`;
      return e.cause?.code ?? e.code ?? e.message;
    }
  }

  return createQueuedOutput({
    destination: 'webhook',
    capacity: opts.capacity,
    retries: opts.retries,
    backoffMs: opts.backoffMs,
    deliver: (d, signal) => deliver(d.json, signal),
    dispose: () => agent.close(),
    metrics: opts.metrics,
    log: opts.log,
  });
}
