// The orchestrator audit source, as `rae run` starts it: TLS material (configured or generated
// into the state directory, with the Secret manifest) and the HTTPS webhook feeding the detection
// engine. Consumes Config, an evaluate function and Metrics; produces a running webhook.
import type { Config } from '../../config/config.js';
import type { Metrics } from '../../metrics/index.js';
import type { SourceEvent } from '../../engine/index.js';
import { ensureWebhookTls, type WebhookTls } from './tls.js';
import { startWebhook, type AuditWebhook } from './webhook.js';

export { clientCredentials, ensureWebhookTls, type WebhookTls } from './tls.js';
export { startWebhook, webhookUrl, type AuditWebhook } from './webhook.js';

/** Ensures the TLS material and starts the webhook; a TLS problem is a rejected promise with the reason. */
export async function startAuditWebhook(opts: { config: Config; evaluate(events: readonly SourceEvent[]): number | Promise<number>; metrics: Metrics; log: (message: string) => void }): Promise<{ webhook: AuditWebhook; tls: WebhookTls }> {
  const material = ensureWebhookTls({ stateDir: opts.config.stateDir, webhook: opts.config.webhook });
  if (!material.ok) throw new Error(material.error);
  const { tls } = material;
  if (tls.generated !== 'none') opts.log(`webhook: generated ${tls.generated === 'server' ? 'a new server certificate' : 'a new CA and server certificate'} in ${tls.dir}`);
  const webhook = await startWebhook({ webhook: opts.config.webhook, tls, evaluate: opts.evaluate, metrics: opts.metrics, log: opts.log });
  return { webhook, tls };
}
