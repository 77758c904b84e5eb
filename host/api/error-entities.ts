// Response entities of one error (our design, docs/api.md; the fields of GitLab's DetailedError
// and ErrorEvent): the detail, an event with its stack trace, and the status change answer.
// Stack trace entries are built from the stored payload as GitLab's ErrorTracking::StacktraceBuilder
// does (the first exception with a stacktrace, frames in the SDK's order, the crash frame last,
// context lines numbered around the frame's line), with the file, module and in-app flag added.
import type { ErrorDetailRow, ErrorEventRow } from './db/index.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** One stack frame as the detail pages show it. */
export interface StackTraceEntry {
  filename: string | null;
  abs_path: string | null;
  module: string | null;
  function: string | null;
  lineNo: number | null;
  colNo: number | null;
  in_app: boolean | null;
  /** [line number, text] around lineNo: pre-context, the line, post-context. */
  context: Array<[number, string]>;
}

/** The exceptions of a payload (an array, as the Go SDK sends, or `{values}`). */
function exceptionValues(payload: Obj): Obj[] {
  const e = payload.exception;
  const list = Array.isArray(e) ? e : isObj(e) && Array.isArray(e.values) ? e.values : [];
  return list.filter(isObj);
}

function contextOf(frame: Obj, lineNo: number | null): Array<[number, string]> {
  if (lineNo === null) return [];
  const lines = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  const pre = lines(frame.pre_context);
  const out: Array<[number, string]> = [];
  const add = (list: unknown[], first: number): void => {
    list.forEach((line, i) => {
      if (typeof line === 'string') out.push([first + i, line]);
    });
  };
  add(pre, lineNo - pre.length);
  add([frame.context_line], lineNo);
  add(lines(frame.post_context), lineNo + 1);
  return out;
}

/** The stack trace of a stored payload: the frames of its first exception with a stacktrace ([] when none). */
function stackTraceOf(payload: Obj): StackTraceEntry[] {
  const exc = exceptionValues(payload).find((e) => isObj(e.stacktrace));
  const frames = isObj(exc?.stacktrace) && Array.isArray(exc.stacktrace.frames) ? exc.stacktrace.frames.filter(isObj) : [];
  return frames.map((f) => {
    const lineNo = num(f.lineno);
    return {
      filename: str(f.filename),
      abs_path: str(f.abs_path),
      module: str(f.module),
      function: str(f.function),
      lineNo,
      colNo: num(f.colno),
      in_app: typeof f.in_app === 'boolean' ? f.in_app : null,
      context: contextOf(f, lineNo),
    };
  });
}

/** Tags of a payload: `tags` as an object or as [key, value] pairs, values as text. */
function tagsOf(payload: Obj | null): Record<string, string> {
  const out: Record<string, string> = {};
  const tags = payload?.tags;
  const pairs = Array.isArray(tags) ? tags.filter((t): t is unknown[] => Array.isArray(t) && t.length === 2) : isObj(tags) ? Object.entries(tags) : [];
  for (const [k, v] of pairs) if (typeof k === 'string' && v !== null && v !== undefined && typeof v !== 'object') out[k] = String(v);
  return out;
}

/** The error detail (GET …/errors/:error_id). */
export function errorDetailEntity(g: ErrorDetailRow) {
  const last = g.last_payload;
  return {
    id: g.id,
    fingerprint: g.fingerprint,
    title: g.description === '' ? g.name : `${g.name}: ${g.description}`,
    name: g.name,
    description: g.description,
    culprit: g.actor,
    platform: g.platform === '' ? null : g.platform,
    status: g.status,
    event_count: g.events_count,
    user_count: g.user_count,
    first_seen_at: new Date(g.first_seen_at).toISOString(),
    last_seen_at: new Date(g.last_seen_at).toISOString(),
    environment: g.last_environment,
    first_release: str(g.first_payload?.release),
    last_release: str(last?.release),
    // GitLab's detail tags are level and logger; the latest event's own tags come with them.
    tags: { level: str(last?.level), logger: str(last?.logger), ...tagsOf(last) },
  };
}

/** One event (GET …/errors/:error_id/events, …/latest_event) with its stack trace. */
export function errorEventEntity(e: ErrorEventRow) {
  const p = e.payload;
  const exc = exceptionValues(p).find((x) => isObj(x.stacktrace)) ?? exceptionValues(p)[0];
  return {
    id: e.id,
    error_id: e.error_id,
    event_id: e.event_id,
    occurred_at: new Date(e.occurred_at).toISOString(),
    environment: e.environment,
    level: e.level,
    release: str(p.release),
    platform: str(p.platform),
    user: isObj(p.user) ? p.user : null,
    tags: tagsOf(p),
    exception: exc ? { type: str(exc.type), value: typeof exc.value === 'string' ? exc.value : null } : null,
    stack_trace_entries: stackTraceOf(p),
    payload: p,
  };
}

/** GitLab's answer to a status change (Projects::ErrorTrackingController#update: IssueUpdateService's result). */
export function statusChangeEntity() {
  return { result: { updated: true, closed_issue_iid: null, status: 'success' } };
}
