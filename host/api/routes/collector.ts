// Sentry ingestion (beyond GitLab's REST spec): a key's errtrack_dsn
// `<scheme>://<key>@<host>/errortracking/api/v1/projects/<id>` makes SDKs POST to
// `/errortracking/api/v1/projects/api/<id>/envelope/` (or `/store/`). Checks in the order of
// GitLab's collector (reference §5.2): project (404 Project Not Found), an active and integrated
// setting (404), a key from `sentry_key` or X-Sentry-Auth (or the envelope's dsn; none: 400), an
// active key of this project (404). Bodies may be gzip/deflate/br; above 200 KiB decompressed: 413.
// A string PostgreSQL cannot store in an envelope or item header, or in the key, is a 400 "Bad
// Request" (server.ts refuses it in the path and query); in an event payload a null byte is
// dropped (GitLab's collector accepts them, event.ts) and a lone surrogate is a 400. An item whose
// type Sentry does not define (or no type) is GitLab's 400 "Bad Request"; the item types SDKs send
// besides events (transaction, session, client_report, ...) are accepted and not stored.
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { resolveProject } from '../auth.js';
import { utf8Text } from '../body.js';
import { getSetting, isActiveKey, recordErrorEvent, type ErrorEventInput } from '../db/index.js';
import { apiError, isApiError, type ApiError } from '../errors.js';
import { eventToError } from '../collector/event.js';
import { isSentryItemType, keyFromDsn, parseEnvelope } from '../collector/envelope.js';
import { unstorableText, unstorableValue } from '../storable.js';
import { sendError, type RouteContext } from './common.js';

const BASE = '/errortracking/api/v1/projects/api/:pid';

/** The body decompressed, at most `max` bytes (api.maxEventBytes; GitLab's CompressedJson::MAXIMUM_BODY_SIZE is 200 KiB). */
function decompress(body: Buffer, encoding: string | undefined, max: number): Buffer | ApiError {
  const opts = { maxOutputLength: max + 1 };
  let out: Buffer;
  try {
    const enc = (encoding ?? 'identity').trim().toLowerCase();
    if (enc === 'identity' || enc === '') out = body;
    else if (enc === 'gzip' || enc === 'x-gzip') out = gunzipSync(body, opts);
    else if (enc === 'deflate') out = inflateSync(body, opts);
    else if (enc === 'br') out = brotliDecompressSync(body, opts);
    else return apiError('SENTRY_UNPARSABLE');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? apiError('PAYLOAD_TOO_LARGE') : apiError('SENTRY_UNPARSABLE');
  }
  return out.length > max ? apiError('PAYLOAD_TOO_LARGE') : out;
}

/** The public key from `?sentry_key=` or the X-Sentry-Auth header; null = header without a key. */
function keyFromRequest(request: FastifyRequest): string | null | undefined {
  const q = (request.query ?? {}) as Record<string, unknown>;
  if (typeof q.sentry_key === 'string' && q.sentry_key !== '') return q.sentry_key;
  const auth = request.headers['x-sentry-auth'];
  if (typeof auth !== 'string') return undefined;
  return /sentry_key=(\w+)/.exec(auth)?.[1] ?? null;
}

type Parsed = { eventId: string | null; events: unknown[] };

function parseBody(kind: 'envelope' | 'store', body: Buffer): { parsed: Parsed; dsnKey?: string } | ApiError {
  if (kind === 'store') {
    try {
      const event: unknown = JSON.parse(utf8Text(body));
      if (unstorableValue(event, { allowNul: true })) return apiError('BAD_REQUEST');
      const id = (event as { event_id?: unknown } | null)?.event_id;
      return { parsed: { eventId: typeof id === 'string' ? id : null, events: [event] } };
    } catch {
      return apiError('SENTRY_UNPARSABLE');
    }
  }
  const env = parseEnvelope(body);
  if (!env) return apiError('SENTRY_UNPARSABLE');
  if (unstorableValue([env.header, ...env.items.map((i) => i.header)])) return apiError('BAD_REQUEST');
  const events: unknown[] = [];
  for (const item of env.items) {
    if (!isSentryItemType(item.header.type)) return apiError('SENTRY_UNKNOWN_ITEM');
    if (item.header.type !== 'event') continue; // transactions, sessions, client reports: accepted, not stored
    let event: unknown;
    try {
      event = JSON.parse(utf8Text(item.payload));
    } catch {
      return apiError('SENTRY_UNPARSABLE');
    }
    if (unstorableValue(event, { allowNul: true })) return apiError('BAD_REQUEST');
    events.push(event);
  }
  const id = env.header.event_id;
  return { parsed: { eventId: typeof id === 'string' ? id : null, events }, dsnKey: keyFromDsn(env.header.dsn) };
}

async function ingest(ctx: RouteContext, kind: 'envelope' | 'store', request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const project = await resolveProject(ctx.db, (request.params as { pid: string }).pid);
  if (!project) return sendError(reply, apiError('PROJECT_NOT_FOUND'));
  const setting = await getSetting(ctx.db, project.id);
  if (!setting?.enabled || !setting.integrated) return sendError(reply, apiError('NOT_FOUND'));
  let key = keyFromRequest(request);
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const body = decompress(raw, request.headers['content-encoding'] as string | undefined, ctx.limits.maxEventBytes);
  if (isApiError(body)) return sendError(reply, body);
  const result = parseBody(kind, body);
  if (isApiError(result) && result.code === 'BAD_REQUEST') return sendError(reply, result);
  if (key === undefined && !isApiError(result)) key = result.dsnKey;
  if (typeof key === 'string' && unstorableText(key)) return sendError(reply, apiError('BAD_REQUEST'));
  if (key === undefined) return sendError(reply, apiError('SENTRY_UNPARSABLE'));
  if (key === null || !(await isActiveKey(ctx.db, project.id, key))) return sendError(reply, apiError('NOT_FOUND'));
  if (isApiError(result)) return sendError(reply, result);
  const rows: ErrorEventInput[] = [];
  for (const event of result.parsed.events) {
    const row = eventToError(event, project.id);
    if (isApiError(row)) return sendError(reply, row);
    rows.push(row);
  }
  if (rows.length > 0) {
    await ctx.db.transaction(async (tx) => {
      for (const row of rows) await recordErrorEvent(tx, row);
    });
  }
  const id = result.parsed.eventId ?? rows[0]?.eventId ?? null;
  return reply.code(200).send(id ? { id } : {});
}

/** Registers the ingestion routes in their own scope (raw bodies of any content type, CORS). */
export async function registerCollectorRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ctx.limits.maxEventBytes }, (_req, body, done) => done(null, body));
    // Browser SDKs post cross-origin; the key in the query string avoids a preflight, but allow one.
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('access-control-allow-origin', '*');
    });
    scope.setErrorHandler((err: { statusCode?: number; code?: string }, request, reply) => {
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, apiError('PAYLOAD_TOO_LARGE'));
      if (err.statusCode && err.statusCode < 500) return sendError(reply, apiError('SENTRY_UNPARSABLE'));
      ctx.log(`api: ${request.method} ${request.url.split('?')[0]}: ${(err as Error).message}`);
      return sendError(reply, apiError('INTERNAL'));
    });
    for (const kind of ['envelope', 'store'] as const) {
      scope.post(`${BASE}/${kind}`, { bodyLimit: ctx.limits.maxEventBytes }, (request, reply) => ingest(ctx, kind, request, reply));
      scope.options(`${BASE}/${kind}`, async (request, reply) =>
        reply
          .code(204)
          .header('access-control-allow-methods', 'POST, OPTIONS')
          .header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? 'content-type, content-encoding, x-sentry-auth')
          .header('access-control-max-age', '86400')
          .send(),
      );
    }
  });
}
