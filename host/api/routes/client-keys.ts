// GET and POST /api/v4/projects/:id/error_tracking/client_keys and
// DELETE .../client_keys/:key_id (Maintainer and above). GitLab: lib/api/error_tracking/client_keys.rb;
// reference §3. POST ignores any body and answers 201; DELETE answers 200 with the deleted key,
// and 404 "Not found" (lower-case f) for unknown keys, other projects' keys and non-numeric ids.
import type { FastifyInstance } from 'fastify';
import { createKey, deleteKey, listKeys, ROLES } from '../db/index.js';
import { clientKeyEntity } from '../entities.js';
import { apiError } from '../errors.js';
import { callerOf, guardHook, PAGE_PARAMS, pageOf, paramsOf, sendError, setPaginationHeaders, type RouteContext } from './common.js';

const PATH = '/api/v4/projects/:id/error_tracking/client_keys';
const MAX_ID = 2_147_483_647;

/** Registers the three client key routes. */
export function registerClientKeyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const onRequest = guardHook(ctx, ROLES.maintainer);

  app.get(PATH, { onRequest }, async (request, reply) => {
    const p = paramsOf(request, PAGE_PARAMS);
    if (!p.ok) return sendError(reply, p.error);
    const { page, perPage } = pageOf(p.values);
    const { rows, total } = await listKeys(ctx.db, callerOf(request).project.id, perPage, (page - 1) * perPage);
    setPaginationHeaders(request, reply, ctx.dsnBase, { page, perPage, total });
    return reply.code(200).send(rows.map((k) => clientKeyEntity(ctx.dsnBase, k)));
  });

  app.post(PATH, { onRequest }, async (request, reply) => {
    const key = await createKey(ctx.db, callerOf(request).project.id);
    return reply.code(201).send(clientKeyEntity(ctx.dsnBase, key));
  });

  app.delete(`${PATH}/:key_id`, { onRequest }, async (request, reply) => {
    const raw = (request.params as { key_id: string }).key_id;
    const keyId = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
    const deleted = keyId <= MAX_ID ? await deleteKey(ctx.db, callerOf(request).project.id, keyId) : undefined;
    if (!deleted) return sendError(reply, apiError('RECORD_NOT_FOUND'));
    return reply.code(200).send(clientKeyEntity(ctx.dsnBase, deleted));
  });
}
