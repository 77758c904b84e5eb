// The forwarder's HTTP server (fastify), answering as falcosidekick 2.30 does
// (reference/module-and-forwarder.md §4):
//   POST /test     creates the test event; 200, empty body
//   POST /         a Falco JSON alert; 200 empty, or 400 "Please send a valid request body: <why>"
//   /healthz       200 {"status": "ok"} (any method) while the engine is ready; 503
//                  {"status": "not ready", "components": [...]} while a component is starting,
//                  failed, or off while required (falcosidekick always answers 200: it has no
//                  sources to be blind without)
//   /readyz        the same status with every component's state, 200 or 503 (any method)
//   /ping          200 "pong\n" (any method)
//   /metrics       Prometheus text exposition
//   any other path falls into POST / (Go's ServeMux sends unknown paths to "/"); a method other
//   than POST on / or /test is 400 "Please send with post http method".
// Bodies are read as text whatever the Content-Type (falcosidekick checks none), then parsed by
// parseAlertJson. Consumes accepted alerts into `accept`; produces HTTP answers.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { parseAlertJson, type Alert } from '../output/alert.js';
import type { Metrics } from '../metrics/index.js';
import { guardConnections, timeoutOptions, type ClientLimits } from '../net/connections.js';
import { normalizePayload, testAlert } from './normalize.js';

/** One part of the engine as /readyz shows it. */
export interface ComponentStatus {
  name: string;
  /** `off`: not running on purpose (disabled, unsupported); `failed`: retried until it is up. */
  state: 'starting' | 'up' | 'off' | 'failed';
  /** Why it is off. */
  reason?: string;
  /**
   * Off, yet the configuration needs it: an enabled source that cannot run here and is not marked
   * optional (`syscall.optional: false`). Such a component keeps the engine from being ready.
   */
  required?: boolean;
  /** Why the last start failed. */
  error?: string;
  attempts?: number;
  retryInMs?: number;
}

/** The engine's readiness: ready when no component is starting, failed, or off while required. */
export interface Readiness {
  ready: boolean;
  components: ComponentStatus[];
}

/** What the server needs from the forwarder. */
export interface ServerDeps {
  metrics: Metrics;
  /** The engine's readiness (/healthz, /readyz); always ready when absent. */
  readiness?: () => Readiness;
  /** Hands an accepted alert to the forwarder (never waits). */
  accept(alert: Alert): void;
  hostname: string;
  log: (message: string) => void;
}

/** A listening server. */
export interface ForwarderServer {
  /** `http://address:port` as bound (port 0 resolved). */
  url: string;
  close(): Promise<void>;
}

const TEXT = 'text/plain; charset=utf-8';
const BAD_METHOD = 'Please send with post http method\n';
const BAD_BODY = 'Please send a valid request body';
const HEALTHZ = Buffer.from('{"status": "ok"}');
/** The default of forwarder.maxBodyBytes: larger bodies are refused with 413 before parsing. */
export const BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/** The server's bounds (Config.forwarder) and, when both PEMs are given, TLS. */
export interface ServerLimits extends ClientLimits {
  maxBodyBytes: number;
  tls?: { certPem: string; keyPem: string };
}

const DEFAULT_LIMITS: ServerLimits = { maxBodyBytes: BODY_LIMIT_BYTES, maxConnectionsPerClient: 64, handshakeTimeoutSeconds: 5, headersTimeoutSeconds: 10, requestTimeoutSeconds: 30 };

function refuse(reply: FastifyReply, metrics: Metrics, text: string) {
  metrics.input(false);
  return reply.code(400).type(TEXT).header('x-content-type-options', 'nosniff').send(text);
}

/** Starts the server on `address:port` (port 0 picks a free port). */
export async function startServer(deps: ServerDeps, address: string, port: number, limits: ServerLimits = DEFAULT_LIMITS): Promise<ForwarderServer> {
  const { metrics } = deps;
  const timeouts = timeoutOptions(limits);
  // one instance type for both: the routes below use nothing that differs between http and https
  const app = (limits.tls
    ? Fastify({ logger: false, bodyLimit: limits.maxBodyBytes, requestTimeout: timeouts.requestTimeout, https: { cert: limits.tls.certPem, key: limits.tls.keyPem, ...timeouts } })
    : Fastify({ logger: false, bodyLimit: limits.maxBodyBytes, requestTimeout: timeouts.requestTimeout, http: timeouts })) as unknown as FastifyInstance;
  // No client certificates here (falcosidekick has none): every connection is unauthenticated.
  guardConnections(app.server, 'forwarder', limits.tls !== undefined, { perClient: limits.maxConnectionsPerClient, unauthenticated: 0, authenticated: 0 }, deps.log);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) deps.log(`forwarder: internal error: ${err.message}`);
    return reply
      .code(status)
      .type(TEXT)
      .send(`${status === 500 ? 'internal error' : err.message}\n`);
  });

  async function input(req: FastifyRequest, reply: FastifyReply) {
    if (req.method !== 'POST') return refuse(reply, metrics, BAD_METHOD);
    const text = typeof req.body === 'string' ? req.body : '';
    const parsed = parseAlertJson(text);
    if (!parsed.ok) return refuse(reply, metrics, `${BAD_BODY}: ${parsed.error}\n`);
    metrics.input(true);
    deps.accept(normalizePayload(parsed.alert, text.length));
    return reply.code(200).send();
  }

  app.all('/test', async (req, reply) => {
    if (req.method !== 'POST') return refuse(reply, metrics, BAD_METHOD);
    metrics.input(true);
    deps.accept(testAlert(deps.hostname));
    return reply.code(200).send();
  });
  app.all('/', input);
  app.setNotFoundHandler(input);
  app.all('/ping', async (_req, reply) => reply.type(TEXT).send('pong\n'));
  const readiness = deps.readiness ?? ((): Readiness => ({ ready: true, components: [] }));
  const status = (r: Readiness) => ({ status: r.ready ? 'ok' : 'not ready', components: r.components });
  // A Buffer, so fastify leaves the Content-Type exactly as falcosidekick's (no charset).
  app.all('/healthz', async (_req, reply) => {
    const r = readiness();
    return reply
      .code(r.ready ? 200 : 503)
      .header('content-type', 'application/json')
      .send(r.ready ? HEALTHZ : Buffer.from(JSON.stringify(status(r))));
  });
  app.all('/readyz', async (_req, reply) => {
    const r = readiness();
    return reply
      .code(r.ready ? 200 : 503)
      .header('content-type', 'application/json')
      .send(Buffer.from(JSON.stringify(status(r))));
  });
  app.all('/metrics', async (_req, reply) => {
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).send(body);
  });

  try {
    await app.listen({ host: address, port });
  } catch (err) {
    await app.close();
    throw new Error(`forwarder: cannot listen on ${address}:${port} (forwarder.address, forwarder.port): ${(err as Error).message}`);
  }
  const bound = app.server.address();
  const actualPort = typeof bound === 'object' && bound ? bound.port : port;
  const host = address.includes(':') ? `[${address}]` : address;
  return { url: `${limits.tls ? 'https' : 'http'}://${host}:${actualPort}`, close: () => app.close() };
}
