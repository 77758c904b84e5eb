// GET, PUT and PATCH /api/v4/projects/:id/error_tracking/settings (Maintainer and above).
// GitLab: lib/api/error_tracking/project_settings.rb; reference §2. PUT is an upsert answering
// 200; PATCH never creates (404); saving an enabled, integrated setting gives the project an
// active client key when it has none (after_save :create_client_key!).
import type { FastifyInstance } from 'fastify';
import { ensureActiveKey, getSetting, patchSetting, ROLES, upsertSetting } from '../db/index.js';
import { settingEntity } from '../entities.js';
import { apiError } from '../errors.js';
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
      const s = await upsertSetting(tx, projectId, p.values.active as boolean, p.values.integrated as boolean);
      await ensureActiveKey(tx, s);
      return s;
    });
    return reply.code(200).send(settingEntity(setting));
  });

  app.patch(PATH, { onRequest }, async (request, reply) => {
    const p = paramsOf(request, PATCH_PARAMS);
    if (!p.ok) return sendError(reply, p.error);
    const projectId = callerOf(request).project.id;
    const setting = await ctx.db.transaction(async (tx) => {
      const s = await patchSetting(tx, projectId, p.values.active as boolean, p.values.integrated as boolean | null);
      if (s) await ensureActiveKey(tx, s);
      return s;
    });
    if (!setting) return sendError(reply, apiError('SETTING_NOT_FOUND'));
    return reply.code(200).send(settingEntity(setting));
  });
}
