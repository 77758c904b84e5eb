// Helpers shared by the REST routes: the guard as an onRequest hook (so 401/404/403 come before
// body parsing and parameter validation, GitLab's order), sending ApiError values, the 503s of a
// database that is gone or out of reach, and GitLab's offset pagination headers.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { guard, type Caller } from '../auth.js';
import { isDatabaseUnreachable, type Db } from '../db/index.js';
import type { DsnBase } from '../entities.js';
import type { ApiLimits } from '../limits.js';
import { mergeParams, validateParams, type ParamSpec, type ParamValue } from '../params.js';
import { apiError, type ApiError } from '../errors.js';

/** What every route needs. */
export interface RouteContext {
  db: Db;
  /** The configured external scheme and host: DSNs and pagination links (never the request's Host). */
  dsnBase: DsnBase;
  limits: ApiLimits;
  /** Log lines (stderr); never request bodies or tokens. */
  log: (msg: string) => void;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the guard hook on routes under /projects/:id. */
    caller: Caller | null;
  }
}

/** Sends an ApiError value. */
export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  if (typeof err.body === 'string') return reply.code(err.status).type('text/plain; charset=utf-8').send(err.body);
  return reply.code(err.status).type('application/json; charset=utf-8').send(err.body);
}

/**
 * What answers every request while the database is gone (`db.unavailable()`: PGlite's directory
 * removed under the process): 503 with Retry-After, and one log line naming why, prefixed by
 * `who` (`api`, `console`). Returns the reply it answered, or undefined while the database is there.
 */
export function storageGoneAnswer(db: Db, log: (msg: string) => void, who: string): (reply: FastifyReply) => FastifyReply | undefined {
  let logged = false;
  return (reply) => {
    const gone = db.unavailable();
    if (!gone) return undefined;
    if (!logged) log(`${who}: ${gone}: every request is answered 503 until a restart (which starts an empty database)`);
    logged = true;
    return sendError(reply.header('retry-after', '60'), apiError('STORAGE_UNAVAILABLE'));
  };
}

/** What a client is told to wait (Retry-After, seconds) while PostgreSQL cannot be reached: a restart takes a few. */
const UNREACHABLE_RETRY_AFTER_S = 10;
/** Least time between two log lines saying so. */
const UNREACHABLE_LOG_EVERY_MS = 60_000;

/**
 * What answers a request whose query failed because PostgreSQL cannot be reached (stopped,
 * restarting: isDatabaseUnreachable): 503 with Retry-After and a message saying to try again,
 * not a 500, and a log line prefixed by `who` at most once a minute. For an error handler:
 * returns the reply it answered, or undefined for any other error.
 */
export function databaseUnreachableAnswer(db: Db, log: (msg: string) => void, who: string): (err: unknown, reply: FastifyReply) => FastifyReply | undefined {
  let loggedAt = Number.NEGATIVE_INFINITY;
  return (err, reply) => {
    if (!isDatabaseUnreachable(err)) return undefined;
    if (performance.now() - loggedAt >= UNREACHABLE_LOG_EVERY_MS) {
      loggedAt = performance.now();
      log(`${who}: PostgreSQL at ${db.location} cannot be reached (${(err as Error).message}): requests that need it are answered 503 until it is back`);
    }
    return sendError(reply.header('retry-after', String(UNREACHABLE_RETRY_AFTER_S)), apiError('DATABASE_UNREACHABLE'));
  };
}

/** onRequest hook: authenticate, find the project, check the role; answers the error itself. */
export function guardHook(ctx: RouteContext, minAccess: number): onRequestHookHandler {
  return async (request, reply) => {
    const result = await guard(
      ctx.db,
      {
        method: request.method,
        headers: request.headers,
        query: (request.query ?? {}) as Record<string, unknown>,
        projectId: (request.params as { id: string }).id,
      },
      minAccess,
    );
    if ('code' in result) return sendError(reply, result);
    request.caller = result;
  };
}

/** The guarded caller (the hook has run). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route without guard hook');
  return request.caller;
}

/** Validates the merged query and body parameters of a request. */
export function paramsOf(request: FastifyRequest, specs: readonly ParamSpec[]): { ok: true; values: Record<string, ParamValue> } | { ok: false; error: ApiError } {
  return validateParams(specs, mergeParams(request.query, request.body));
}

/** GitLab's pagination parameters. */
export const PAGE_PARAMS: readonly ParamSpec[] = [
  { name: 'page', type: 'integer' },
  { name: 'per_page', type: 'integer' },
];

/** page (from 1) and per_page (1..100, default 20) from validated values. */
export function pageOf(values: Record<string, ParamValue>): { page: number; perPage: number } {
  const page = typeof values.page === 'number' && values.page >= 1 ? values.page : 1;
  const per = typeof values.per_page === 'number' && values.per_page >= 1 ? Math.min(values.per_page, 100) : 20;
  return { page, perPage: per };
}

/**
 * Sets X-Page, X-Per-Page, X-Next-Page, X-Prev-Page, X-Total, X-Total-Pages and Link, as GitLab's
 * OffsetHeaderBuilder with Kaminari: a page past the end has neither a next nor a previous page.
 * Links point at the configured external host: a request's Host header is the client's to choose.
 */
export function setPaginationHeaders(request: FastifyRequest, reply: FastifyReply, base: DsnBase, paging: { page: number; perPage: number; total: number }): void {
  const { page, perPage, total } = paging;
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  const inRange = page <= totalPages;
  const next = inRange && page < totalPages ? page + 1 : null;
  const prev = inRange && page > 1 ? page - 1 : null;
  // The path and query are set on the base, never resolved against it (`//host/...` would win).
  const url = new URL(`${base.scheme}://${base.host}`);
  const q = request.url.indexOf('?');
  url.pathname = q === -1 ? request.url : request.url.slice(0, q);
  url.search = q === -1 ? '' : request.url.slice(q);
  for (const secret of ['private_token', 'access_token']) url.searchParams.delete(secret); // never echo credentials
  const link = (p: number, rel: string): string => {
    const u = new URL(url);
    u.searchParams.delete('page');
    u.searchParams.delete('per_page');
    u.searchParams.set('page', String(p));
    u.searchParams.set('per_page', String(perPage));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const links = [prev && link(prev, 'prev'), next && link(next, 'next'), link(1, 'first'), link(totalPages, 'last')].filter(Boolean);
  reply.headers({
    'x-page': String(page),
    'x-per-page': String(perPage),
    'x-next-page': next ? String(next) : '',
    'x-prev-page': prev ? String(prev) : '',
    'x-total': String(total),
    'x-total-pages': String(totalPages),
    link: links.join(', '),
  });
}
