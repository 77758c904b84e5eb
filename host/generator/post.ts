// Sends audit events to the engine's webhook the way the API server's webhook backend does: one
// POST of an audit.k8s.io/v1 EventList, application/json, over HTTPS verified with the
// webhook's CA, presenting the client certificate the engine's CA issued (client.crt and
// client.key in <stateDir>/webhook-tls/, which the webhook requires unless
// webhook.requireClientCert is false). Anything but a 200 is an error with the webhook's answer.
// Like the API server's webhook backend (k8s.io/apiserver util/webhook DefaultShouldRetry), a
// connection reset and the answers 429, 500 and 504 are transient: the batch is sent again with
// exponential backoff (factor 1.5, jitter 0.2, 5 tries in all). The first wait is 1 s where
// --audit-webhook-initial-backoff defaults to 10 s. A reset is what a loaded webhook gives a
// client whose TLS handshake outlived webhook.handshakeTimeoutSeconds.
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

/** How the poster retries a transient failure; the defaults follow the API server's webhook backend (first wait shortened). */
interface RetryPolicy {
  tries: number;
  firstWaitMs: number;
}

const RETRY: RetryPolicy = { tries: 5, firstWaitMs: 1_000 };
const TRANSIENT_STATUS = new Set([429, 500, 504]);

/** Why one POST failed, and whether the API server would send the batch again. */
class PostError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** A poster for `url` trusting `client.caPem` and presenting its certificate. */
export function auditPoster(url: string, client: WebhookClient, timeoutMs = 10_000, retry: RetryPolicy = RETRY): AuditPoster {
  return async (events) => {
    const body = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: events });
    for (let attempt = 1; ; attempt++) {
      try {
        return await postOnce(url, client, body, timeoutMs);
      } catch (err) {
        if (!(err instanceof PostError) || !err.transient || attempt >= retry.tries) throw new Error(attempt > 1 ? `${(err as Error).message} (try ${attempt} of ${retry.tries})` : (err as Error).message);
        const wait = retry.firstWaitMs * 1.5 ** (attempt - 1) * (1 + 0.2 * Math.random());
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  };
}

/** One POST of `body`; rejects with a PostError that says whether the failure is transient. */
function postOnce(url: string, client: WebhookClient, body: string, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = request(url, { method: 'POST', ca: client.caPem, cert: client.certPem, key: client.keyPem, timeout: timeoutMs, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let answer = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (answer.length < 2000) answer += c;
      });
      res.on('end', () => {
        if (res.statusCode === 200) resolve();
        else reject(new PostError(`the webhook answered ${res.statusCode}: ${answer.trim()}`, TRANSIENT_STATUS.has(res.statusCode ?? 0)));
      });
    });
    req.on('timeout', () => req.destroy(new PostError(`no answer from ${url} in ${timeoutMs} ms`, false)));
    req.on('error', (err: NodeJS.ErrnoException) => reject(err instanceof PostError ? err : new PostError(`cannot POST to ${url}: ${err.message}`, err.code === 'ECONNRESET')));
    req.end(body);
  });
}
