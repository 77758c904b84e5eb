// Queries on a project's error tracking setting and client keys (GitLab's
// ProjectErrorTrackingSetting and ErrorTracking::ClientKey models).
import { randomBytes } from 'node:crypto';
import type { Queryable } from './open.js';

/** A stored setting. */
export interface SettingRow {
  project_id: number;
  enabled: boolean;
  integrated: boolean;
  api_url: string | null;
  project_name: string | null;
}

/** A stored client key. */
export interface ClientKeyRow {
  id: number;
  project_id: number;
  active: boolean;
  public_key: string;
}

const SETTING_COLUMNS = 'project_id, enabled, integrated, api_url, project_name';
const KEY_COLUMNS = 'id, project_id, active, public_key';

/** A new public key: `glet_` and 32 lower-case hex characters (GitLab: "glet_#{SecureRandom.hex}"). */
function generatePublicKey(): string {
  return `glet_${randomBytes(16).toString('hex')}`;
}

/** The project's setting, or undefined. */
export async function getSetting(q: Queryable, projectId: number): Promise<SettingRow | undefined> {
  const rows = await q.query<SettingRow>(`SELECT ${SETTING_COLUMNS} FROM error_tracking_settings WHERE project_id = $1`, [projectId]);
  return rows[0];
}

/** PUT: creates the setting or updates `enabled` and `integrated` only. */
export async function upsertSetting(q: Queryable, projectId: number, enabled: boolean, integrated: boolean): Promise<SettingRow> {
  const rows = await q.query<SettingRow>(
    `INSERT INTO error_tracking_settings (project_id, enabled, integrated) VALUES ($1, $2, $3)
     ON CONFLICT (project_id) DO UPDATE SET enabled = EXCLUDED.enabled, integrated = EXCLUDED.integrated, updated_at = now()
     RETURNING ${SETTING_COLUMNS}`,
    [projectId, enabled, integrated],
  );
  return rows[0]!;
}

/** PATCH: updates an existing setting (`integrated` kept when null); undefined when none exists. */
export async function patchSetting(q: Queryable, projectId: number, enabled: boolean, integrated: boolean | null): Promise<SettingRow | undefined> {
  const rows = await q.query<SettingRow>(
    `UPDATE error_tracking_settings SET enabled = $2, integrated = COALESCE($3::boolean, integrated), updated_at = now()
     WHERE project_id = $1 RETURNING ${SETTING_COLUMNS}`,
    [projectId, enabled, integrated],
  );
  return rows[0];
}

/**
 * GitLab's `after_save :create_client_key!`: a setting that is enabled and integrated gets a key
 * when the project has no active one, so the user has a working DSN at once.
 */
export async function ensureActiveKey(q: Queryable, setting: SettingRow): Promise<void> {
  if (!setting.enabled || !setting.integrated) return;
  await q.query(
    `INSERT INTO error_tracking_client_keys (project_id, public_key)
     SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM error_tracking_client_keys WHERE project_id = $1 AND active)`,
    [setting.project_id, generatePublicKey()],
  );
}

/** One page of a project's keys (all of them, active or not) by id, and the total. */
export async function listKeys(q: Queryable, projectId: number, limit: number, offset: number): Promise<{ rows: ClientKeyRow[]; total: number }> {
  const rows = await q.query<ClientKeyRow>(`SELECT ${KEY_COLUMNS} FROM error_tracking_client_keys WHERE project_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, [projectId, limit, offset]);
  const count = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM error_tracking_client_keys WHERE project_id = $1', [projectId]);
  return { rows, total: count[0]!.n };
}

/** Creates an active key. */
export async function createKey(q: Queryable, projectId: number): Promise<ClientKeyRow> {
  const rows = await q.query<ClientKeyRow>(`INSERT INTO error_tracking_client_keys (project_id, public_key) VALUES ($1, $2) RETURNING ${KEY_COLUMNS}`, [projectId, generatePublicKey()]);
  return rows[0]!;
}

/** Deletes a key of this project; returns it, or undefined when the project has no such key. */
export async function deleteKey(q: Queryable, projectId: number, keyId: number): Promise<ClientKeyRow | undefined> {
  const rows = await q.query<ClientKeyRow>(`DELETE FROM error_tracking_client_keys WHERE id = $1 AND project_id = $2 RETURNING ${KEY_COLUMNS}`, [keyId, projectId]);
  return rows[0];
}

/** True when `publicKey` is an active key of the project (exact match). */
export async function isActiveKey(q: Queryable, projectId: number, publicKey: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM error_tracking_client_keys WHERE project_id = $1 AND public_key = $2 AND active', [projectId, publicKey]);
  return rows.length > 0;
}
