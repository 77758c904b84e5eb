// Sends audit events to the engine's webhook the way the API server's webhook backend does: one
// POST of an audit.k8s.io/v1 EventList, application/json, over HTTPS verified with the
// webhook's CA. Anything but a 200 is an error with the webhook's answer.
import { request } from 'node:https';

/** A function that POSTs one EventList; rejects with the reason when it is not accepted. */
export type AuditPoster = (events: object[]) => Promise<void>;

/** A poster for `url` trusting `caPem`. */
export function auditPoster(url: string, caPem: string, timeoutMs = 10_000): AuditPoster {
  return (events) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: events });
      const req = request(url, { method: 'POST', ca: caPem, timeout: timeoutMs, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
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
