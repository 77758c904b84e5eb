// The orchestrator audit webhook: an HTTPS server (fastify) taking audit.k8s.io/v1 EventList
// batches and single Events from the API server's webhook backend on POST <path>
// (reference/module-and-forwarder.md §5). Unlike the k8saudit plugin, which answers 200 before
// parsing and drops bad bodies with a log line, every answer says what happened:
//   200  queued for evaluation: {"accepted":N,"skipped":[{"index","code","reason"}],"truncated":[...]}
//   400  invalid JSON, or neither an EventList nor an Event   404  another path
//   405  another method (Allow: POST)   413  body over maxBodyBytes   415  not application/json
//   429  the queue is full (Retry-After: 1; the API server sends the batch again)
//   503  the engine is stopping (Retry-After: 1)
//   408  (Node's) headers or the whole request not sent within headersTimeoutSeconds/requestTimeoutSeconds
// Connections (net/connections.ts): the TLS server asks for a client certificate and verifies it
// against the engine's CA (tls.clientCaPem); a connection is unauthenticated until its handshake
// completes with a verified one. Unauthenticated connections are bounded per address
// (maxConnectionsPerClient) and in total (maxUnauthenticatedConnections), the oldest closed past
// a bound; verified ones only by maxAuthenticatedConnections, so a client holding the API
// server's certificate always gets in however many others are open. A handshake not finished
// within handshakeTimeoutSeconds of the connection is aborted. With requireClientCert (the default) a client
// without a verified certificate fails the handshake. Every such close is counted in
// enginesecurity_engine_webhook_connections_closed_total{reason}.
// Refusals carry {"code","message"}; every answer is counted in
// enginesecurity_engine_webhook_requests_total{status,reason}. Items over maxEventBytes and items
// that are not events are skipped, reported in the 200 body and counted as dropped events; events
// nested past maxEventDepth are evaluated with the deep values cut, reported in `truncated` and
// counted in enginesecurity_engine_events_truncated_total{reason="too_deep"}.
// Consumes Config.webhook, TLS PEMs and an evaluate function; produces a listening AuditWebhook.
import type { TLSSocket } from 'node:tls';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.js';
import { guardConnections, timeoutOptions } from '../../net/connections.js';
import type { Metrics, WebhookReason } from '../../metrics/index.js';
import type { SourceEvent } from '../../engine/index.js';
import { decodeAuditEvents } from './batch-bytes.js';
import { WASM_MISSING } from './list-walk.js';
import { AuditQueue } from './queue.js';

/** HTTP status of each answer reason (one place; codes are never reused for another meaning). */
const WEBHOOK_STATUS: Record<WebhookReason, number> = {
  accepted: 200,
  bad_request: 400,
  invalid_json: 400,
  not_audit_events: 400,
  not_found: 404,
  method_not_allowed: 405,
  body_too_large: 413,
  unsupported_media_type: 415,
  queue_full: 429,
  internal: 500,
  stopping: 503,
};

/** What startWebhook needs. */
export interface WebhookOptions {
  webhook: Pick<Config['webhook'], 'address' | 'port' | 'path' | 'maxBodyBytes' | 'maxEventBytes' | 'maxEventDepth' | 'queueSize' | 'queueBytes'> &
    Partial<
      Pick<Config['webhook'], 'decoder' | 'requireClientCert' | 'maxConnectionsPerClient' | 'maxUnauthenticatedConnections' | 'maxAuthenticatedConnections' | 'handshakeTimeoutSeconds' | 'headersTimeoutSeconds' | 'requestTimeoutSeconds'>
    >;
  /** The server's certificate and key; clientCaPem verifies client certificates (without it none is asked for). */
  tls: { certPem: string; keyPem: string; clientCaPem?: string };
  /** Evaluates one batch (DetectionEngine.evaluate); a returned promise is awaited before the next. */
  evaluate(events: readonly SourceEvent[]): number | Promise<number>;
  metrics: Metrics;
  /** Log lines (stderr); never stdout. */
  log: (message: string) => void;
}

/** A listening webhook. */
export interface AuditWebhook {
  /** `https://address:port/path` as bound (port 0 resolved). */
  readonly url: string;
  readonly port: number;
  /** Events waiting for evaluation. */
  readonly queueLength: number;
  /** Resolves once every accepted event has been evaluated. */
  idle(): Promise<void>;
  /**
   * Refuses new requests (503), finishes those in flight, evaluates everything queued; after
   * `drainMs` (default: no bound) it closes the connections left and drops what is still queued.
   */
  close(drainMs?: number): Promise<WebhookDrain>;
}

/** What a close drained: events evaluated after the close began, events given up, time taken. */
interface WebhookDrain {
  drained: number;
  abandoned: number;
  ms: number;
}

/** `https://host:port/path`, with IPv6 hosts in brackets and a wildcard address shown as loopback. */
export function webhookUrl(address: string, port: number, path: string): string {
  const host = address === '0.0.0.0' || address === '' ? '127.0.0.1' : address === '::' ? '::1' : address;
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
}

const isJsonMediaType = (ct: string | undefined) => ct !== undefined && ct.split(';')[0]!.trim().toLowerCase() === 'application/json';

/** Starts the HTTPS server on address:port (port 0 picks a free port). */
export async function startWebhook(opts: WebhookOptions): Promise<AuditWebhook> {
  const { webhook: w, metrics, log } = opts;
  const queue = new AuditQueue({ capacity: w.queueSize, capacityBytes: w.queueBytes, evaluate: opts.evaluate, metrics, log });
  let stopping = false;
  let num = 0n;
  // The bytes decoder walks EventLists in WebAssembly; without the module (not built) it walks them in JavaScript, slower.
  if ((w.decoder ?? 'bytes') === 'bytes' && WASM_MISSING !== undefined) log(`webhook: ${WASM_MISSING}`);

  function answer(reply: FastifyReply, reason: WebhookReason, message: string) {
    const status = WEBHOOK_STATUS[reason];
    metrics.webhookRequest(status, reason);
    if (status === 429 || status === 503) reply.header('retry-after', '1');
    if (status === 405) reply.header('allow', 'POST');
    return reply
      .code(status)
      .type('application/json')
      .send(JSON.stringify({ code: reason, message }));
  }

  const timeouts = timeoutOptions({ maxConnectionsPerClient: 0, handshakeTimeoutSeconds: w.handshakeTimeoutSeconds ?? 5, headersTimeoutSeconds: w.headersTimeoutSeconds ?? 10, requestTimeoutSeconds: w.requestTimeoutSeconds ?? 30 });
  const { clientCaPem } = opts.tls;
  const clientAuth = clientCaPem ? { requestCert: true, rejectUnauthorized: w.requireClientCert ?? true, ca: [clientCaPem] } : {};
  const app = Fastify({ logger: false, https: { cert: opts.tls.certPem, key: opts.tls.keyPem, ...clientAuth, ...timeouts }, bodyLimit: w.maxBodyBytes, requestTimeout: timeouts.requestTimeout, return503OnClosing: false });
  const bounds = { perClient: w.maxConnectionsPerClient ?? 64, unauthenticated: w.maxUnauthenticatedConnections ?? 256, authenticated: w.maxAuthenticatedConnections ?? 64 };
  guardConnections(app.server, 'webhook', true, bounds, log, (reason) => metrics.webhookConnectionClosed(reason));
  // A failed or timed-out handshake (Node closes the socket; a missing certificate under requireClientCert lands here too).
  // ECONNRESET is a hang-up: the client's own, or the guard's close (counted under its reason),
  // unless the socket has an authorizationError: Node closes a certificate it cannot verify that way.
  app.server.on('tlsClientError', (err: Error & { code?: string }, socket: TLSSocket) => {
    if (err.code !== 'ECONNRESET' || socket.authorizationError) metrics.webhookConnectionClosed('handshake');
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: w.maxBodyBytes }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, _req, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return answer(reply, 'body_too_large', `request body larger than ${w.maxBodyBytes} bytes`);
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) return answer(reply, 'bad_request', err.message);
    log(`webhook: internal error: ${err.message}`);
    return answer(reply, 'internal', 'internal error');
  });
  app.setNotFoundHandler((req, reply) => answer(reply, 'not_found', `no audit endpoint at ${req.url.split('?')[0]}; POST audit events to ${w.path}`));

  /** Refusals decided from the request line and headers alone, before the body is read. */
  async function guard(req: FastifyRequest, reply: FastifyReply) {
    if (req.method !== 'POST') return answer(reply, 'method_not_allowed', `${req.method} method not allowed; POST an audit.k8s.io EventList`);
    if (!isJsonMediaType(req.headers['content-type'])) {
      return answer(reply, 'unsupported_media_type', `Content-Type must be application/json, not ${req.headers['content-type'] ?? '(none)'}`);
    }
    if (stopping) return answer(reply, 'stopping', 'the engine is stopping; send the batch again');
    if (queue.full) return answer(reply, 'queue_full', `the evaluation queue is full (${queue.length} events); send the batch again`);
    return undefined;
  }

  async function accept(req: FastifyRequest, reply: FastifyReply) {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const decoded = decodeAuditEvents(body, w, w.decoder ?? 'bytes', num + 1n);
    if (!decoded.ok) return answer(reply, decoded.code, decoded.message);
    const { events, skipped, truncated } = decoded;
    if (!queue.fits(events.length, body.length)) {
      return answer(reply, 'queue_full', `the evaluation queue has no room for ${events.length} events (${queue.length} waiting); send the batch again`);
    }
    // Byte events read the body while queued: it is never reused (fastify gives each request its own).
    num += BigInt(events.length);
    queue.offer(events, body.length);
    metrics.eventsReceived('k8s_audit', events.length + skipped.length);
    const tooLarge = skipped.filter((s) => s.code === 'too_large').length;
    if (tooLarge > 0) metrics.eventsDropped('k8s_audit', 'too_large', tooLarge);
    if (skipped.length > tooLarge) metrics.eventsDropped('k8s_audit', 'decode_error', skipped.length - tooLarge);
    if (skipped.length > 0) log(`webhook: skipped ${skipped.length} of ${events.length + skipped.length} items: ${skipped.map((s) => `#${s.index} ${s.reason}`).join('; ')}`);
    if (truncated.length > 0) {
      metrics.eventsTruncated('k8s_audit', 'too_deep', truncated.length);
      log(`webhook: cut deep values of ${truncated.length} of ${events.length + skipped.length} items: ${truncated.map((t) => `#${t.index} ${t.reason}`).join('; ')}`);
    }
    metrics.webhookRequest(200, 'accepted');
    return reply
      .code(200)
      .type('application/json')
      .send(JSON.stringify({ accepted: events.length, skipped, ...(truncated.length > 0 ? { truncated } : {}) }));
  }

  app.all(w.path, { onRequest: guard }, accept);
  await app.listen({ host: w.address, port: w.port });
  const bound = app.server.address();
  const port = typeof bound === 'object' && bound ? bound.port : w.port;
  return {
    url: webhookUrl(w.address, port, w.path),
    port,
    get queueLength() {
      return queue.length;
    },
    idle: () => queue.idle(),
    async close(drainMs?: number) {
      stopping = true;
      const t0 = performance.now();
      const before = queue.handled;
      const drain = (async () => {
        await app.close();
        await queue.idle();
      })();
      let timer: NodeJS.Timeout | undefined;
      const late = drainMs === undefined ? undefined : new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), drainMs)));
      const outcome = await (late ? Promise.race([drain, late]) : drain);
      clearTimeout(timer);
      let abandoned = 0;
      if (outcome === 'late') {
        app.server.closeAllConnections();
        abandoned = queue.discard();
      }
      return { drained: queue.handled - before, abandoned, ms: performance.now() - t0 };
    },
  };
}
