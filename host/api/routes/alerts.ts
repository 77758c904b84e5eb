// The alert store's query API (docs/console.md), on falcosidekick-ui's paths and shapes where it
// has them (its internal/api/api.go, v2.3): GET /api/v1/events/search (results newest first,
// `statistics.returned` and `.all`, counted up to a cap, and ours: `.all_capped`), /api/v1/events/count (`statistics.all`),
// /api/v1/events/count/:groupby (priority, rule, source, tags, hostname; ours: time, by
// `interval`), plus ours: GET /api/v1/events/:id (one alert) and /api/v1/events/stream (new
// alerts as Server-Sent Events). Authentication is the API's (a personal access token, any
// user; read_api suffices); falcosidekick-ui's basic auth is not taken. Alerts are returned as
// stored: their Falco JSON with the store's `id` first.
import type { FastifyInstance, FastifyReply, onRequestHookHandler } from 'fastify';
import { PRIORITIES } from '../../engine/priority.js';
import { rfc3339Nano } from '../../output/time.js';
import { authenticate } from '../auth.js';
import { ALERT_GROUPS, alertById, alertsAfter, countAlerts, countAlertsBy, lastAlertId, searchAlerts, type AlertGroup } from '../db/index.js';
import { apiError, invalidParams, isApiError } from '../errors.js';
import { SECURITY_HEADERS } from '../headers.js';
import { alertQueryOf } from './alert-params.js';
import { sendError, type RouteContext } from './common.js';

/** How often a live stream looks for new alerts (the store may be written by another process: a poll, not an in-process signal). */
const STREAM_POLL_MS = 500;
/** A comment line this often keeps proxies from closing a quiet stream. */
const STREAM_KEEPALIVE_MS = 15_000;
/** Most alerts one poll sends. */
const STREAM_BATCH = 500;

/** onRequest hook: the caller must present a valid token. */
function authHook(ctx: RouteContext): onRequestHookHandler {
  return async (request, reply) => {
    const user = await authenticate(ctx.db, { method: request.method, headers: request.headers, query: (request.query ?? {}) as Record<string, unknown> });
    if ('code' in user) return sendError(reply, user);
  };
}

function sendJson(reply: FastifyReply, text: string): FastifyReply {
  return reply.code(200).type('application/json; charset=utf-8').send(text);
}

/** Registers the alert routes; live streams end when the server closes. */
export function registerAlertRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const onRequest = authHook(ctx);
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of streams) end();
  });

  app.get('/api/v1/events/search', { onRequest }, async (request, reply) => {
    const q = alertQueryOf(request.query, ['page', 'limit']);
    if (isApiError(q)) return sendError(reply, q);
    const { rows, total, capped } = await searchAlerts(ctx.db, q.filter, { limit: q.limit, offset: (q.page - 1) * q.limit });
    return sendJson(reply, `{"results":[${rows.map((r) => r.json).join(',')}],"statistics":{"returned":${rows.length},"all":${total},"all_capped":${capped}}}`);
  });

  app.get('/api/v1/events/count', { onRequest }, async (request, reply) => {
    const q = alertQueryOf(request.query);
    if (isApiError(q)) return sendError(reply, q);
    return reply.code(200).send({ statistics: { all: await countAlerts(ctx.db, q.filter) } });
  });

  app.get('/api/v1/events/count/:groupby', { onRequest }, async (request, reply) => {
    const by = (request.params as { groupby: string }).groupby;
    if (!(ALERT_GROUPS as readonly string[]).includes(by)) return sendError(reply, invalidParams([`cannot count by ${JSON.stringify(by)}: expected one of ${ALERT_GROUPS.join(', ')}`]));
    const q = alertQueryOf(request.query, by === 'time' ? ['interval'] : []);
    if (isApiError(q)) return sendError(reply, q);
    const groups = await countAlertsBy(ctx.db, q.filter, by as AlertGroup, q.bucketNs);
    const results: Record<string, number> = {};
    let all = 0;
    for (const g of groups) {
      const key = by === 'priority' ? (PRIORITIES[Number(g.key)] ?? g.key) : by === 'time' ? rfc3339Nano(BigInt(g.key)) : g.key;
      Object.defineProperty(results, key, { value: g.count, enumerable: true, writable: true, configurable: true });
      all += g.count;
    }
    return reply.code(200).send({ results, statistics: { all, distincts: groups.length } });
  });

  app.get('/api/v1/events/stream', { onRequest }, async (request, reply) => {
    const q = alertQueryOf(request.query);
    if (isApiError(q)) return sendError(reply, q);
    const from = request.headers['last-event-id'];
    if (from !== undefined && (typeof from !== 'string' || !/^\d{1,18}$/.test(from))) return sendError(reply, invalidParams([`Last-Event-ID ${JSON.stringify(from)} must be an alert id (a whole number)`]));
    let last = from ?? (await lastAlertId(ctx.db));
    stream(reply, streams, async () => {
      const rows = await alertsAfter(ctx.db, q.filter, last, STREAM_BATCH);
      const last0 = rows.at(-1);
      if (last0) last = last0.id;
      return rows.map((r) => `id: ${r.id}\nevent: alert\ndata: ${r.json}\n\n`).join('');
    });
  });

  app.get('/api/v1/events/:id', { onRequest }, async (request, reply) => {
    const id = (request.params as { id: string }).id;
    if (!/^\d{1,18}$/.test(id)) return sendError(reply, invalidParams([`id ${JSON.stringify(id)} must be an alert id (a whole number)`]));
    const alert = await alertById(ctx.db, id);
    return alert ? sendJson(reply, alert.json) : sendError(reply, apiError('NOT_FOUND'));
  });
}

/** Answers with a Server-Sent Events stream that writes what `next` returns every STREAM_POLL_MS, until the client leaves or the server closes. */
function stream(reply: FastifyReply, streams: Set<() => void>, next: () => Promise<string>): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.write(': stream of new alerts\n\n');
  let timer: NodeJS.Timeout | undefined;
  let lastWrite = performance.now();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    streams.delete(end);
    res.end();
  };
  streams.add(end);
  res.on('close', end);
  const poll = async () => {
    try {
      const text = await next();
      if (ended) return;
      if (text !== '') res.write(text);
      else if (performance.now() - lastWrite >= STREAM_KEEPALIVE_MS) res.write(': keep-alive\n\n');
      else return void (timer = setTimeout(poll, STREAM_POLL_MS));
      lastWrite = performance.now();
    } catch {
      // the database failed (PostgreSQL down): the client's EventSource reconnects with Last-Event-ID
      return end();
    }
    timer = setTimeout(poll, STREAM_POLL_MS);
  };
  timer = setTimeout(poll, STREAM_POLL_MS);
}
