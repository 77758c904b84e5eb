// The webhook output (falcosidekick's `webhook`): each alert's JSON line to `address` with
// `method` (POST or PUT), `customheaders`, TLS (`checkcert`, `mutualtls` with the client
// certificate), optionally gzipped (`Content-Encoding: gzip`, our addition). One alert per
// request, as Falco's http_output posts to falcosidekick.
import { createHttpPoster } from './http.js';
import type { OutputSettings } from './settings.js';
import type { Delivery, OutputContext, Sender } from './types.js';

/** The webhook transport. */
export function createWebhookSender(s: OutputSettings, _ctx: OutputContext): Sender {
  const http = createHttpPoster(s, s.string('address'), { method: s.string('method'), headers: s.map('customheaders'), gzip: s.bool('gzip') });
  return {
    send: (batch, signal) => http.post((batch[0] as Delivery).json, signal),
    close: () => http.close(),
  };
}
