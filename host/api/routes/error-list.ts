// GET /api/v4/projects/:id/error_tracking/errors: the errors ingested for a project (Reporter and
// above, as GitLab's read_sentry_issue). Our design, since GitLab has no public REST listing
// (reference §0.11, §6.3): parameters status, sort, search, page, per_page.
import type { FastifyInstance } from 'fastify';
import { ERROR_SORTS, ERROR_STATUSES, listErrorGroups, ROLES, type ErrorSort } from '../db/index.js';
import type { ParamSpec } from '../params.js';
import { callerOf, guardHook, PAGE_PARAMS, pageOf, paramsOf, sendError, setPaginationHeaders, type RouteContext } from './common.js';

const PARAMS: readonly ParamSpec[] = [{ name: 'status', type: 'string', values: ERROR_STATUSES }, { name: 'sort', type: 'string', values: Object.keys(ERROR_SORTS) }, { name: 'search', type: 'string' }, ...PAGE_PARAMS];

/** Registers the error list route. */
export function registerErrorListRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/api/v4/projects/:id/error_tracking/errors', { onRequest: guardHook(ctx, ROLES.reporter) }, async (request, reply) => {
    const p = paramsOf(request, PARAMS);
    if (!p.ok) return sendError(reply, p.error);
    const { page, perPage } = pageOf(p.values);
    const { rows, total } = await listErrorGroups(ctx.db, {
      projectId: callerOf(request).project.id,
      status: (p.values.status as string | null) ?? 'unresolved',
      sort: ((p.values.sort as string | null) ?? 'last_seen_desc') as ErrorSort,
      search: (p.values.search as string | null) || null,
      limit: perPage,
      offset: (page - 1) * perPage,
    });
    setPaginationHeaders(request, reply, page, perPage, total);
    return reply.code(200).send(rows);
  });
}
