// The engine's own project in its integrated tracker, made at the first start when the API is
// enabled and no errorTracking.dsn is set: project SELF_PROJECT_PATH (private; an admin or a
// member added with `rae admin member add` reads it), its setting active and integrated, and an
// active client key. Later starts find it; a setting an operator turned off is left off, and the
// engine then does not report.
import { createProject, ensureActiveKey, findProjectByPath, getSetting, upsertSetting, type Db, type Project } from '../api/db/index.js';

/** The engine's project (GitLab needs a namespace: group `runtime-audit-engine`, project `runtime-audit-engine`). */
export const SELF_PROJECT_PATH = 'runtime-audit-engine/runtime-audit-engine';

/** The project and its active key, or why the engine does not report to it. */
export async function ensureSelfProject(db: Db): Promise<{ project: Project; publicKey: string } | { off: string }> {
  return db.transaction(async (q) => {
    const project = (await findProjectByPath(q, SELF_PROJECT_PATH)) ?? (await createProject(q, SELF_PROJECT_PATH));
    const setting = (await getSetting(q, project.id)) ?? (await upsertSetting(q, project.id, true, true));
    if (!setting.enabled || !setting.integrated) return { off: `project ${SELF_PROJECT_PATH} has error tracking turned off or not integrated` };
    await ensureActiveKey(q, setting);
    const key = await q.query<{ public_key: string }>('SELECT public_key FROM error_tracking_client_keys WHERE project_id = $1 AND active ORDER BY id LIMIT 1', [project.id]);
    return { project, publicKey: key[0]!.public_key };
  });
}
