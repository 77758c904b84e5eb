// Queries on one error group: its detail (counts, users affected, the first and the latest
// event), its events page by page, and its status (GitLab's ErrorRepository: find_error,
// last_event_for, update_error). Every query is scoped to the project, so another project's
// error is "not found", never shown.
import type { ErrorGroupRow } from './error-groups.js';
import type { Queryable } from './open.js';

/** An error group with what its detail shows. */
export interface ErrorDetailRow extends ErrorGroupRow {
  fingerprint: string;
  user_count: number;
  /** The payloads of the oldest and the newest event (GitLab reads releases from both). */
  first_payload: Record<string, unknown> | null;
  last_payload: Record<string, unknown> | null;
  last_environment: string | null;
}

/** One stored event. */
export interface ErrorEventRow {
  id: number;
  error_id: number;
  event_id: string | null;
  environment: string | null;
  level: string | null;
  occurred_at: Date;
  payload: Record<string, unknown>;
}

/** Events order: GitLab's backend sorts by occurred_at (newest first by default). */
export const EVENT_SORTS = {
  occurred_at_desc: 'occurred_at DESC, id DESC',
  occurred_at_asc: 'occurred_at ASC, id ASC',
} as const;
export type EventSort = keyof typeof EVENT_SORTS;

const EVENT_COLUMNS = 'id, error_id, event_id, environment, level, occurred_at, payload';

/** The group with this id in the project, or undefined. */
export async function findErrorDetail(q: Queryable, projectId: number, errorId: number): Promise<ErrorDetailRow | undefined> {
  const rows = await q.query<ErrorDetailRow>(
    `SELECT g.id, g.fingerprint, g.name, g.description, g.actor, g.platform, g.status, g.events_count, g.first_seen_at, g.last_seen_at,
       (SELECT count(DISTINCT user_key)::int FROM error_tracking_error_events WHERE error_id = g.id AND user_key IS NOT NULL) AS user_count,
       (SELECT payload FROM error_tracking_error_events WHERE error_id = g.id ORDER BY ${EVENT_SORTS.occurred_at_asc} LIMIT 1) AS first_payload,
       (SELECT payload FROM error_tracking_error_events WHERE error_id = g.id ORDER BY ${EVENT_SORTS.occurred_at_desc} LIMIT 1) AS last_payload,
       (SELECT environment FROM error_tracking_error_events WHERE error_id = g.id ORDER BY ${EVENT_SORTS.occurred_at_desc} LIMIT 1) AS last_environment
     FROM error_tracking_errors g WHERE g.project_id = $1 AND g.id = $2`,
    [projectId, errorId],
  );
  return rows[0];
}

/** The newest event of the group (by occurred_at), or undefined when the project has no such group. */
export async function latestErrorEvent(q: Queryable, projectId: number, errorId: number): Promise<ErrorEventRow | undefined> {
  const rows = await q.query<ErrorEventRow>(
    `SELECT ${EVENT_COLUMNS} FROM error_tracking_error_events
     WHERE error_id = (SELECT id FROM error_tracking_errors WHERE project_id = $1 AND id = $2)
     ORDER BY ${EVENT_SORTS.occurred_at_desc} LIMIT 1`,
    [projectId, errorId],
  );
  return rows[0];
}

/** One page of the group's events and their total; undefined when the project has no such group. */
export async function listErrorEvents(q: Queryable, f: { projectId: number; errorId: number; sort: EventSort; limit: number; offset: number }): Promise<{ rows: ErrorEventRow[]; total: number } | undefined> {
  const group = await q.query<{ events_count: number }>('SELECT events_count FROM error_tracking_errors WHERE project_id = $1 AND id = $2', [f.projectId, f.errorId]);
  if (group.length === 0) return undefined;
  const rows = await q.query<ErrorEventRow>(`SELECT ${EVENT_COLUMNS} FROM error_tracking_error_events WHERE error_id = $1 ORDER BY ${EVENT_SORTS[f.sort]} LIMIT $2 OFFSET $3`, [f.errorId, f.limit, f.offset]);
  return { rows, total: group[0]!.events_count };
}

/** Sets the group's status; false when the project has no such group. */
export async function setErrorStatus(q: Queryable, projectId: number, errorId: number, status: string): Promise<boolean> {
  const rows = await q.query('UPDATE error_tracking_errors SET status = $3 WHERE project_id = $1 AND id = $2 RETURNING id', [projectId, errorId, status]);
  return rows.length > 0;
}
