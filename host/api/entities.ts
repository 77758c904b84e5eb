// Response entities with GitLab's key order and derivations (API::Entities::ErrorTracking), using
// our names `errtrack_external_url` and `errtrack_dsn` (reference/errortracking-api.md §2.1, §3.1).
import type { ClientKeyRow, SettingRow } from './db/index.js';

/** GET/PUT/PATCH settings body. */
export interface SettingEntity {
  active: boolean;
  project_name: string | null;
  errtrack_external_url: string | null;
  api_url: string | null;
  integrated: boolean;
}

/** Client key body. */
export interface ClientKeyEntity {
  id: number;
  active: boolean;
  public_key: string;
  errtrack_dsn: string;
}

/** Where DSNs point: `<scheme>://<key>@<host>/errortracking/api/v1/projects/<id>`. */
export interface DsnBase {
  scheme: string;
  host: string;
}

// ProjectErrorTrackingSetting::API_URL_PATH_REGEXP
const API_URL_PATH = /^(\/api\/0\/projects\/+)(?:([^/]+)\/+([^/]+)\/*)?$/;

/** Rails' `titleize` for a slug: "my-proj" -> "My Proj", "backendApi_v2" -> "Backend Api V2". */
export function titleize(slug: string): string {
  return slug
    .replace(/([a-z\d])([A-Z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toLowerCase()
    .replace(/_id$/, '')
    .replace(/_/g, ' ')
    .trim()
    .replace(/(^|[^\w'’`()])([a-z])/g, (_m, pre: string, c: string) => pre + c.toUpperCase());
}

/** The project slug of a Sentry `api_url`, titleized; null when it has none. */
export function projectNameFromApiUrl(apiUrl: string | null): string | null {
  if (!apiUrl) return null;
  let path: string;
  try {
    path = new URL(apiUrl).pathname;
  } catch {
    return null;
  }
  const m = API_URL_PATH.exec(path);
  return m?.[3] ? titleize(decodeURIComponent(m[3])) : null;
}

/** The setting entity: stored name else derived from api_url; external URL = api_url without `api/0/projects/`. */
export function settingEntity(s: SettingRow): SettingEntity {
  return {
    active: s.enabled,
    project_name: s.project_name ?? projectNameFromApiUrl(s.api_url),
    errtrack_external_url: s.api_url === null ? null : s.api_url.replace('api/0/projects/', ''),
    api_url: s.api_url,
    integrated: s.integrated,
  };
}

/** The DSN of a key: always the numeric project id. */
export function dsn(base: DsnBase, publicKey: string, projectId: number): string {
  return `${base.scheme}://${publicKey}@${base.host}/errortracking/api/v1/projects/${projectId}`;
}

/** The client key entity. */
export function clientKeyEntity(base: DsnBase, k: ClientKeyRow): ClientKeyEntity {
  return { id: k.id, active: k.active, public_key: k.public_key, errtrack_dsn: dsn(base, k.public_key, k.project_id) };
}
