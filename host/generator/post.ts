// Sends audit events to the engine's webhook the way the API server's webhook backend does: one
// POST of an audit.k8s.io/v1 EventList, application/json, over HTTPS verified with the
// webhook's CA, presenting the client certificate the engine's CA issued (client.crt and
// client.key in <stateDir>/webhook-tls/, which the webhook requires unless
// webhook.requireClientCert is false). Anything but a 200 is an error with the webhook's answer.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

/** A function that POSTs one EventList; rejects with the reason when it is not accepted. */
export type AuditPoster = (events: object[]) => Promise<void>;

/** How a sender reaches the webhook: the CA it trusts and the client certificate it presents (none: only a webhook with requireClientCert false serves it). */
export interface WebhookClient {
  caPem: string;
  certPem?: string;
  keyPem?: string;
}

/** The CA and the API server's client certificate in a webhook-tls directory (<stateDir>/webhook-tls) as `rae run` writes it; throws if a file is unreadable. */
export function webhookClient(tlsDir: string): Required<WebhookClient> {
  const read = (name: string) => readFileSync(join(tlsDir, name), 'utf8');
  return { caPem: read('ca.crt'), certPem: read('client.crt'), keyPem: read('client.key') };
}

/** A poster for `url` trusting `client.caPem` and presenting its certificate. */
export function auditPoster(url: string, client: WebhookClient, timeoutMs = 10_000): AuditPoster {
  return (events) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: events });
      const req = request(url, { method: 'POST', ca: client.caPem, cert: client.certPem, key: client.keyPem, timeout: timeoutMs, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let answer = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (answer.length < 2000) answer += c;
        });
        res.on('end', () => {
          if (res.statusCode === 200) resolve();
          else reject(new Error(`the webhook answered ${res.statusCode}: ${answer.trim()}`));
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in ${timeoutMs} ms`)));
      req.on('error', (err) => reject(new Error(`cannot POST to ${url}: ${err.message}`)));
      req.end(body);
    });
}
