// The API's fastify instance: body parsers (JSON, form, multipart; parsed after the guard so
// 401/404/403 come first), the REST routes under /api/v4, the Sentry ingestion routes, GitLab's
// catch-all 404, CORS and security headers (headers.ts), the HTTP limits (limits.ts) and an error
// handler that turns every failure into a registered ApiError (never a stack; PostgreSQL out of
// reach is a 503 with Retry-After, routes/common.ts). Before anything
// else, a URL over api.maxUrlBytes is 414, and a path or query parameter holding a string
// PostgreSQL cannot store (a null byte, a lone surrogate) or an escape that is not UTF-8 is
// refused with GitLab's 400 "Bad Request", and so is such a string in a parsed REST body
// (storable.ts); Sentry bodies are checked where they are parsed.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { type BodyError, malformedQuery, parseFormBody, parseJsonBody, parseMultipartBody } from './body.js';
import type { Db } from './db/index.js';
import type { DsnBase } from './entities.js';
import { apiError, type ApiError } from './errors.js';
import { answerPreflight, isPreflight, registerResponseHeaders, SECURITY_HEADERS } from './headers.js';
import { clientErrorHandler, limitConnectionsPerClient, serverOptionsOf, type ApiLimits } from './limits.js';
import { registerAlertRoutes } from './routes/alerts.js';
import { registerClientKeyRoutes } from './routes/client-keys.js';
import { registerCollectorRoutes } from './routes/collector.js';
import { databaseUnreachableAnswer, sendError, storageGoneAnswer } from './routes/common.js';
import { registerErrorDetailRoutes } from './routes/error-detail.js';
import { registerErrorListRoutes } from './routes/error-list.js';
import { registerSettingsRoutes } from './routes/settings.js';
import { unstorableText, unstorableValue } from './storable.js';

/** What buildServer needs. */
export interface ServerOptions {
  db: Db;
  /** Where DSNs and pagination links point (the configured api.externalScheme and externalHost). */
  dsnBase: DsnBase;
  limits: ApiLimits;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: Buffer; key: Buffer };
  log: (msg: string) => void;
}

function errorFor(err: { code?: string; statusCode?: number }): ApiError | undefined {
  switch (err.code) {
    case 'RAE_INVALID_BODY':
      return apiError('INVALID_BODY');
    case 'RAE_MALFORMED_BODY':
      return apiError('BAD_REQUEST');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return apiError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return apiError('REQUEST_TOO_LARGE');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return apiError('INVALID_BODY');
  return undefined;
}

/** Builds the server with every route registered (not listening yet). */
export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  const { limits } = opts;
  const nodeOptions = serverOptionsOf(limits);
  const fastifyOpts: FastifyServerOptions & { https?: object; http?: object } = {
    logger: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    bodyLimit: limits.maxBodyBytes,
    requestTimeout: limits.requestTimeoutMs,
    http: nodeOptions,
    clientErrorHandler: clientErrorHandler(limits.maxUrlBytes),
    // errors of the router, before any route or hook runs
    frameworkErrors: (err, _request, reply) => sendError(reply.headers(SECURITY_HEADERS), apiError(err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'URI_TOO_LONG' : 'BAD_URL')),
  };
  // On HTTPS the headers timeout starts after the handshake: the handshake gets the same bound from the connection (Node's default is 120 s).
  if (opts.tls) fastifyOpts.https = { ...nodeOptions, handshakeTimeout: limits.headersTimeoutMs, ...opts.tls };
  const app = Fastify(fastifyOpts) as unknown as FastifyInstance;
  app.decorateRequest('caller', null);
  limitConnectionsPerClient(app.server, limits.maxConnectionsPerClient, (address) => opts.log(`api: refused a connection from ${address}: over api.maxConnectionsPerClient (${limits.maxConnectionsPerClient})`));

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (err) {
      done(err as BodyError, undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseFormBody(body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      done(null, parseMultipartBody(body as Buffer, String(req.headers['content-type'])));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  registerResponseHeaders(app);

  const storageGone = storageGoneAnswer(opts.db, opts.log, 'api');
  // Hooks of the root scope: they run for every route (the collector's too) and the 404 handler.
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?', 1)[0]!;
    let decoded = path;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      // a malformed escape: the router's BAD_URL, or a path no route takes
    }
    if (request.url.length > limits.maxUrlBytes) return sendError(reply, apiError('URI_TOO_LONG'));
    const gone = storageGone(reply);
    if (gone) return gone;
    if (unstorableText(decoded) || unstorableValue(request.query) || malformedQuery(request.url)) return sendError(reply, apiError('BAD_REQUEST'));
  });
  app.addHook('preValidation', async (request, reply) => {
    if (unstorableValue(request.body)) return sendError(reply, apiError('BAD_REQUEST'));
  });

  app.options('/api/*', async (request, reply) => (isPreflight(request) ? answerPreflight(request, reply) : sendError(reply, apiError('ROUTE_NOT_FOUND'))));
  app.setNotFoundHandler((_request, reply) => sendError(reply, apiError('ROUTE_NOT_FOUND')));
  const unreachable = databaseUnreachableAnswer(opts.db, opts.log, 'api');
  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    const known = errorFor(err);
    if (known) return sendError(reply, known);
    const down = unreachable(err, reply);
    if (down) return down;
    opts.log(`api: ${request.method} ${request.url.split('?')[0]}: ${err.message}`);
    return sendError(reply, apiError('INTERNAL'));
  });

  const ctx = { db: opts.db, dsnBase: opts.dsnBase, limits, log: opts.log };
  registerSettingsRoutes(app, ctx);
  registerClientKeyRoutes(app, ctx);
  registerErrorListRoutes(app, ctx);
  registerErrorDetailRoutes(app, ctx);
  registerAlertRoutes(app, ctx);
  await registerCollectorRoutes(app, ctx);
  return app;
}
