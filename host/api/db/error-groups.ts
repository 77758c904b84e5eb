// Queries on ingested errors: an error group per (project, fingerprint) (collector/fingerprint.ts),
// each event stored with its full payload and the user it names. A new event of a resolved group
// reopens it (GitLab, as Sentry: a regression); an ignored group stays ignored.
import type { Queryable } from './open.js';

/** What the collector extracted from one Sentry event. */
export interface ErrorEventInput {
  projectId: number;
  /** SHA-1 hex of the grouping components (collector/fingerprint.ts). */
  fingerprint: string;
  name: string;
  description: string;
  actor: string;
  platform: string;
  /** Who the event affected ("id:42", "email:a@b"), or null. */
  userKey: string | null;
  eventId: string | null;
  environment: string | null;
  level: string | null;
  occurredAt: Date;
  payload: unknown;
}

/** An error group as the list endpoint shows it. */
export interface ErrorGroup {
  id: number;
  name: string;
  description: string;
  actor: string;
  platform: string | null;
  status: string;
  event_count: number;
  first_seen_at: string;
  last_seen_at: string;
}

/** Listing order (GitLab's error sort values). */
export const ERROR_SORTS = {
  last_seen_desc: 'last_seen_at DESC, id DESC',
  first_seen_desc: 'first_seen_at DESC, id DESC',
  frequency_desc: 'events_count DESC, id DESC',
} as const;
export type ErrorSort = keyof typeof ERROR_SORTS;
export const ERROR_STATUSES = ['unresolved', 'resolved', 'ignored'] as const;

/** Stores one event: creates or updates its group, then the event row. Returns the group id. */
export async function recordErrorEvent(q: Queryable, e: ErrorEventInput): Promise<number> {
  const at = e.occurredAt.toISOString();
  const groups = await q.query<{ id: number }>(
    `INSERT INTO error_tracking_errors (project_id, fingerprint, name, description, actor, platform, events_count, first_seen_at, last_seen_at)
     VALUES ($1, $7, $2, $3, $4, $5, 1, $6, $6)
     ON CONFLICT (project_id, fingerprint) DO UPDATE SET
       name = EXCLUDED.name,
       description = EXCLUDED.description,
       actor = EXCLUDED.actor,
       status = CASE WHEN error_tracking_errors.status = 'resolved' THEN 'unresolved' ELSE error_tracking_errors.status END,
       events_count = error_tracking_errors.events_count + 1,
       first_seen_at = LEAST(error_tracking_errors.first_seen_at, EXCLUDED.first_seen_at),
       last_seen_at = GREATEST(error_tracking_errors.last_seen_at, EXCLUDED.last_seen_at)
     RETURNING id`,
    [e.projectId, e.name, e.description, e.actor, e.platform, at, e.fingerprint],
  );
  const id = groups[0]!.id;
  await q.query('INSERT INTO error_tracking_error_events (error_id, event_id, environment, level, occurred_at, payload, user_key) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)', [
    id,
    e.eventId,
    e.environment,
    e.level,
    at,
    JSON.stringify(e.payload),
    e.userKey,
  ]);
  return id;
}

/** An error group as stored. */
export interface ErrorGroupRow {
  id: number;
  name: string;
  description: string;
  actor: string;
  platform: string;
  status: string;
  events_count: number;
  first_seen_at: Date;
  last_seen_at: Date;
}

/** One page of a project's error groups with a status, matching `search` when given, and the total. */
export async function listErrorGroups(q: Queryable, f: { projectId: number; status: string; sort: ErrorSort; search: string | null; limit: number; offset: number }): Promise<{ rows: ErrorGroup[]; total: number }> {
  const where = `project_id = $1 AND status = $2 AND ($3::text IS NULL OR strpos(lower(name || ' ' || description), lower($3::text)) > 0)`;
  const params = [f.projectId, f.status, f.search];
  const rows = await q.query<ErrorGroupRow>(
    `SELECT id, name, description, actor, platform, status, events_count, first_seen_at, last_seen_at
     FROM error_tracking_errors WHERE ${where} ORDER BY ${ERROR_SORTS[f.sort]} LIMIT $4 OFFSET $5`,
    [...params, f.limit, f.offset],
  );
  const count = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM error_tracking_errors WHERE ${where}`, params);
  return {
    total: count[0]!.n,
    rows: rows.map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      actor: r.actor,
      platform: r.platform === '' ? null : r.platform,
      status: r.status,
      event_count: r.events_count,
      first_seen_at: new Date(r.first_seen_at).toISOString(),
      last_seen_at: new Date(r.last_seen_at).toISOString(),
    })),
  };
}
