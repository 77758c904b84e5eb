// GET, PUT and PATCH /api/v4/projects/:id/error_tracking/settings (Maintainer and above).
// GitLab: lib/api/error_tracking/project_settings.rb; reference §2. PUT is an upsert answering
// 200; PATCH never creates (404); saving an enabled, integrated setting gives the project an
// active client key when it has none (after_save :create_client_key!). A save that would leave the
// setting active but not integrated (Sentry mode) without an api_url is refused, as GitLab's model
// refuses it (`validates :api_url, presence`), and nothing is written: GitLab answers that with a
// 200 `{"status":"error"}` (reference §0.12), we with 400.
import type { FastifyInstance } from 'fastify';
import { ensureActiveKey, getSetting, patchSetting, ROLES, upsertSetting, type Queryable } from '../db/index.js';
import { settingEntity } from '../entities.js';
import { apiError, isApiError } from '../errors.js';
import type { ParamSpec } from '../params.js';
import { callerOf, guardHook, paramsOf, sendError, type RouteContext } from './common.js';

const PATH = '/api/v4/projects/:id/error_tracking/settings';

const PUT_PARAMS: readonly ParamSpec[] = [
  { name: 'active', type: 'boolean', required: true, allowBlank: false },
  // Our choice: '' or null is "integrated is empty" (GitLab would pass nil on to the model).
  { name: 'integrated', type: 'boolean', required: true, nullable: false },
];
const PATCH_PARAMS: readonly ParamSpec[] = [
  { name: 'active', type: 'boolean', required: true, allowBlank: false },
  { name: 'integrated', type: 'boolean' },
];

/** True when saving `enabled`/`integrated` over the stored setting (if any) leaves Sentry mode without an api_url. */
async function sentryModeWithoutUrl(q: Queryable, projectId: number, enabled: boolean, integrated: boolean | null): Promise<boolean> {
  if (!enabled || integrated === true) return false;
  const stored = await getSetting(q, projectId);
  if (integrated === null && (!stored || stored.integrated)) return false;
  return !stored?.api_url;
}

/** Registers the three settings routes. */
export function registerSettingsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const onRequest = guardHook(ctx, ROLES.maintainer);

  app.get(PATH, { onRequest }, async (request, reply) => {
    const setting = await getSetting(ctx.db, callerOf(request).project.id);
    if (!setting) return sendError(reply, apiError('SETTING_NOT_FOUND'));
    return reply.code(200).send(settingEntity(setting));
  });

  app.put(PATH, { onRequest }, async (request, reply) => {
    const p = paramsOf(request, PUT_PARAMS);
    if (!p.ok) return sendError(reply, p.error);
    const projectId = callerOf(request).project.id;
    const setting = await ctx.db.transaction(async (tx) => {
      if (await sentryModeWithoutUrl(tx, projectId, p.values.active as boolean, p.values.integrated as boolean)) return undefined;
      const s = await upsertSetting(tx, projectId, p.values.active as boolean, p.values.integrated as boolean);
      await ensureActiveKey(tx, s);
      return s;
    });
    if (!setting) return sendError(reply, apiError('SETTING_INVALID'));
    return reply.code(200).send(settingEntity(setting));
  });

  app.patch(PATH, { onRequest }, async (request, reply) => {
    const p = paramsOf(request, PATCH_PARAMS);
    if (!p.ok) return sendError(reply, p.error);
    const projectId = callerOf(request).project.id;
    const setting = await ctx.db.transaction(async (tx) => {
      if (!(await getSetting(tx, projectId))) return apiError('SETTING_NOT_FOUND');
      if (await sentryModeWithoutUrl(tx, projectId, p.values.active as boolean, p.values.integrated as boolean | null)) return apiError('SETTING_INVALID');
      const s = await patchSetting(tx, projectId, p.values.active as boolean, p.values.integrated as boolean | null);
      if (s) await ensureActiveKey(tx, s);
      return s ?? apiError('SETTING_NOT_FOUND');
    });
    if (isApiError(setting)) return sendError(reply, setting);
    return reply.code(200).send(settingEntity(setting));
  });
}
