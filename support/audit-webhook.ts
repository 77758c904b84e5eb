// Shared set-up for the audit webhook tests: TLS material generated into a temporary state
// directory, a real HTTPS webhook on 127.0.0.1 port 0 with its own metrics, an undici client that
// verifies the server with the generated ca.crt and presents client.crt (as the API server), and counter reads from the metrics registry.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { defaultConfig, type Config } from '../host/config/config.js';
import { createMetrics, type Metrics } from '../host/metrics/index.js';
import { ensureWebhookTls, startWebhook, type AuditWebhook, type WebhookTls } from '../host/sources/audit/index.js';
import type { SourceEvent } from '../host/engine/source-event.js';

/** An HTTP answer. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A running test webhook. */
export interface TestWebhook {
  webhook: AuditWebhook;
  tls: WebhookTls;
  metrics: Metrics;
  logs: string[];
  /** Sends a request verified against the generated CA; the body defaults to none. */
  send(opts?: { method?: string; path?: string; contentType?: string | null; body?: string | Buffer | Readable; headers?: Record<string, string> }): Promise<Answer>;
  /** POSTs a JSON document as application/json. */
  post(doc: unknown): Promise<Answer>;
  close(): Promise<void>;
}

/** Starts a webhook with `patch` over the default webhook settings; `evaluate` receives the batches. */
export async function startTestWebhook(evaluate: (events: readonly SourceEvent[]) => number | Promise<number>, patch: Partial<Config['webhook']> = {}): Promise<TestWebhook> {
  const stateDir = mkdtempSync(join(tmpdir(), 'rae-webhook-'));
  const config = defaultConfig({});
  const settings = { ...config.webhook, address: '127.0.0.1', port: 0, ...patch };
  const material = ensureWebhookTls({ stateDir, webhook: settings });
  if (!material.ok) throw new Error(material.error);
  const metrics = createMetrics({ processMetrics: false });
  const logs: string[] = [];
  const webhook = await startWebhook({ webhook: settings, tls: material.tls, evaluate, metrics, log: (m) => logs.push(m) });
  const agent = new Agent({ connect: { ca: material.tls.caPem, cert: material.tls.clientCertPem, key: material.tls.clientKeyPem } });
  const base = new URL(webhook.url);
  const send: TestWebhook['send'] = async (o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.contentType !== null) headers['content-type'] = o.contentType ?? 'application/json';
    const res = await request(new URL(o.path ?? base.pathname, base.origin), { method: (o.method ?? 'POST') as 'POST', headers, body: o.body, dispatcher: agent });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  };
  return {
    webhook,
    tls: material.tls,
    metrics,
    logs,
    send,
    post: (doc) => send({ body: JSON.stringify(doc) }),
    async close() {
      await webhook.close();
      await agent.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** The value of one counter or gauge series (0 when the series does not exist). */
export async function metricValue(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const m = metrics.registry.getSingleMetric(name);
  if (!m) throw new Error(`no metric ${name}`);
  const { values } = await m.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, val]) => String(v.labels[k]) === val));
  return hit?.value ?? 0;
}

/** An EventList document holding `items`. */
export function eventList(items: unknown[]): Record<string, unknown> {
  return { kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items };
}
