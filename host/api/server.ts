// The API's fastify instance: body parsers (JSON, form; parsed after the guard so 401/404/403
// come first), the REST routes under /api/v4, the Sentry ingestion routes, GitLab's catch-all
// 404 and an error handler that turns every failure into a registered ApiError (never a stack).
// Before anything else, a path or query parameter holding a string PostgreSQL cannot store (a
// null byte, a lone surrogate) is refused with GitLab's 400 "Bad Request", and so is such a
// string in a parsed REST body (storable.ts); Sentry bodies are checked where they are parsed.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Db } from './db/index.js';
import type { DsnBase } from './entities.js';
import { apiError, type ApiError } from './errors.js';
import { registerClientKeyRoutes } from './routes/client-keys.js';
import { registerCollectorRoutes } from './routes/collector.js';
import { sendError } from './routes/common.js';
import { registerErrorListRoutes } from './routes/error-list.js';
import { registerSettingsRoutes } from './routes/settings.js';
import { unstorableText, unstorableValue } from './storable.js';

/** What buildServer needs. */
export interface ServerOptions {
  db: Db;
  dsnBase: DsnBase;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: Buffer; key: Buffer };
  log: (msg: string) => void;
}

class BodyError extends Error {
  readonly statusCode = 400;
  readonly code = 'RAE_INVALID_BODY';
}

function errorFor(err: { code?: string; statusCode?: number }): ApiError | undefined {
  switch (err.code) {
    case 'RAE_INVALID_BODY':
      return apiError('INVALID_BODY');
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
  const fastifyOpts: FastifyServerOptions & { https?: { cert: Buffer; key: Buffer } } = {
    logger: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    bodyLimit: 1024 * 1024,
    // errors of the router, before any route or hook runs
    frameworkErrors: (err, _request, reply) => sendError(reply, apiError(err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'URI_TOO_LONG' : 'BAD_URL')),
  };
  if (opts.tls) fastifyOpts.https = opts.tls;
  const app = Fastify(fastifyOpts) as unknown as FastifyInstance;
  app.decorateRequest('caller', null);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {}); // Grape reads no body when it is empty
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new BodyError('invalid JSON body'), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });

  // Hooks of the root scope: they run for every route (the collector's too) and the 404 handler.
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?', 1)[0]!;
    let decoded = path;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      // a malformed escape: the router's BAD_URL, or a path no route takes
    }
    if (unstorableText(decoded) || unstorableValue(request.query)) return sendError(reply, apiError('BAD_REQUEST'));
  });
  app.addHook('preValidation', async (request, reply) => {
    if (unstorableValue(request.body)) return sendError(reply, apiError('BAD_REQUEST'));
  });

  app.setNotFoundHandler((_request, reply) => sendError(reply, apiError('ROUTE_NOT_FOUND')));
  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    const known = errorFor(err);
    if (known) return sendError(reply, known);
    opts.log(`api: ${request.method} ${request.url.split('?')[0]}: ${err.message}`);
    return sendError(reply, apiError('INTERNAL'));
  });

  const ctx = { db: opts.db, dsnBase: opts.dsnBase, log: opts.log };
  registerSettingsRoutes(app, ctx);
  registerClientKeyRoutes(app, ctx);
  registerErrorListRoutes(app, ctx);
  await registerCollectorRoutes(app, ctx);
  return app;
}
