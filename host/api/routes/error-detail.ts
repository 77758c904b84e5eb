// One error of a project (our design, docs/api.md; GitLab's Projects::ErrorTrackingController
// details/update and Projects::ErrorTracking::StackTracesController over its integrated
// backend): GET …/errors/:error_id (detail), GET …/errors/:error_id/latest_event (the newest
// event with its stack trace), GET …/errors/:error_id/events (paginated) for Reporter and above
// (read_sentry_issue), and PUT …/errors/:error_id {status} for Developer and above
// (update_sentry_issue). Checks in GitLab's API order: 401, project 404, role 403, parameters
// 400, then 404 "Not found" for an unknown id, another project's error or a non-numeric id.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERROR_STATUSES, EVENT_SORTS, findErrorDetail, latestErrorEvent, listErrorEvents, ROLES, setErrorStatus, type EventSort } from '../db/index.js';
import { errorDetailEntity, errorEventEntity, statusChangeEntity } from '../error-entities.js';
import { apiError } from '../errors.js';
import type { ParamSpec } from '../params.js';
import { callerOf, guardHook, PAGE_PARAMS, pageOf, paramsOf, sendError, setPaginationHeaders, type RouteContext } from './common.js';

const PATH = '/api/v4/projects/:id/error_tracking/errors/:error_id';
const MAX_ID = 2_147_483_647;
const EVENTS_PARAMS: readonly ParamSpec[] = [{ name: 'sort', type: 'string', values: Object.keys(EVENT_SORTS) }, ...PAGE_PARAMS];
const UPDATE_PARAMS: readonly ParamSpec[] = [{ name: 'status', type: 'string', required: true, values: ERROR_STATUSES }];

/** The numeric :error_id, or NaN (no row has it) when it is not a database id. */
function errorIdOf(request: FastifyRequest): number {
  const raw = (request.params as { error_id: string }).error_id;
  const id = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  return id <= MAX_ID ? id : NaN;
}

/** Registers the detail, latest event, events and status routes. */
export function registerErrorDetailRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const read = guardHook(ctx, ROLES.reporter);

  app.get(PATH, { onRequest: read }, async (request, reply) => {
    const id = errorIdOf(request);
    const row = Number.isNaN(id) ? undefined : await findErrorDetail(ctx.db, callerOf(request).project.id, id);
    if (!row) return sendError(reply, apiError('RECORD_NOT_FOUND'));
    return reply.code(200).send(errorDetailEntity(row));
  });

  app.get(`${PATH}/latest_event`, { onRequest: read }, async (request, reply) => {
    const id = errorIdOf(request);
    const row = Number.isNaN(id) ? undefined : await latestErrorEvent(ctx.db, callerOf(request).project.id, id);
    if (!row) return sendError(reply, apiError('RECORD_NOT_FOUND'));
    return reply.code(200).send(errorEventEntity(row));
  });

  app.get(`${PATH}/events`, { onRequest: read }, async (request, reply) => {
    const p = paramsOf(request, EVENTS_PARAMS);
    if (!p.ok) return sendError(reply, p.error);
    const { page, perPage } = pageOf(p.values);
    const id = errorIdOf(request);
    const sort = ((p.values.sort as string | null) ?? 'occurred_at_desc') as EventSort;
    const found = Number.isNaN(id) ? undefined : await listErrorEvents(ctx.db, { projectId: callerOf(request).project.id, errorId: id, sort, limit: perPage, offset: (page - 1) * perPage });
    if (!found) return sendError(reply, apiError('RECORD_NOT_FOUND'));
    setPaginationHeaders(request, reply, ctx.dsnBase, { page, perPage, total: found.total });
    return reply.code(200).send(found.rows.map(errorEventEntity));
  });

  app.put(PATH, { onRequest: guardHook(ctx, ROLES.developer) }, async (request, reply) => {
    const p = paramsOf(request, UPDATE_PARAMS);
    if (!p.ok) return sendError(reply, p.error);
    const id = errorIdOf(request);
    const updated = !Number.isNaN(id) && (await setErrorStatus(ctx.db, callerOf(request).project.id, id, p.values.status as string));
    if (!updated) return sendError(reply, apiError('RECORD_NOT_FOUND'));
    return reply.code(200).send(statusChangeEntity());
  });
}
