// Turns one Sentry event payload into the error group it belongs to, as GitLab's collector did
// (reference §5.3, §5.6): the exception is the first entry with a stacktrace (else the first),
// name = its type, description = its value, actor = the event's transaction or
// "function(module)" of the last frame; the group is the fingerprint of the type and frames
// (fingerprint.ts). Beyond GitLab (whose old collector refused them), events with only a message
// are accepted, as GitLab's newer backend does.
import { apiError, sentryInvalidField, type ApiError } from '../errors.js';
import type { ErrorEventInput } from '../db/index.js';
import { fingerprintOf, userKeyOf } from './fingerprint.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

// Frame fields typed by GitLab's error_tracking_event_payload.json (all optional).
const FRAME_TYPES: Record<string, (v: unknown) => boolean> = {
  abs_path: (v) => typeof v === 'string',
  function: (v) => typeof v === 'string' || v === null,
  module: (v) => typeof v === 'string' || v === null,
  lineno: (v) => typeof v === 'number',
  colno: (v) => typeof v === 'number',
  in_app: (v) => typeof v === 'boolean',
  filename: (v) => typeof v === 'string',
  pre_context: Array.isArray,
  post_context: Array.isArray,
  context_line: (v) => typeof v === 'string' || v === null,
};

function exceptions(event: Obj): Obj[] | null | undefined {
  const e = event.exception;
  if (e === undefined || e === null) return undefined;
  const list = Array.isArray(e) ? e : isObj(e) && Array.isArray(e.values) ? e.values : null;
  if (!list?.every(isObj)) return null;
  return list;
}

function frames(exc: Obj): Obj[] | null {
  const st = exc.stacktrace;
  if (st === undefined || st === null) return [];
  if (!isObj(st) || (st.frames !== undefined && !Array.isArray(st.frames))) return null;
  const list = (st.frames ?? []) as unknown[];
  for (const f of list) {
    if (!isObj(f)) return null;
    for (const [k, check] of Object.entries(FRAME_TYPES)) if (f[k] !== undefined && !check(f[k])) return null;
  }
  return list as Obj[];
}

function messageOf(event: Obj): string | undefined {
  for (const m of [event.message, event.logentry]) {
    if (typeof m === 'string' && m !== '') return m;
    if (isObj(m)) {
      const text = m.formatted ?? m.message;
      if (typeof text === 'string' && text !== '') return text;
    }
  }
  return undefined;
}

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** When the event happened: ISO text, or seconds (number or numeric text), else now. */
export function occurredAt(ts: unknown, now = new Date()): Date {
  let d: Date | undefined;
  if (typeof ts === 'number' && Number.isFinite(ts)) d = new Date(ts * 1000);
  else if (typeof ts === 'string' && /^\d+(\.\d+)?$/.test(ts)) d = new Date(Number(ts) * 1000);
  else if (typeof ts === 'string') d = new Date(ts);
  return d && !Number.isNaN(d.getTime()) ? d : now;
}

// PostgreSQL text and jsonb cannot hold U+0000; GitLab accepts payloads with null bytes, so they are dropped.
function withoutNul(v: unknown): unknown {
  if (typeof v === 'string') return v.includes('\u0000') ? v.replaceAll('\u0000', '') : v;
  if (Array.isArray(v)) return v.map(withoutNul);
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [withoutNul(k) as string, withoutNul(x)]));
  return v;
}

/** The group fields and event row of one event payload, or the 400 to answer. */
export function eventToError(input: unknown, projectId: number, now = new Date()): ErrorEventInput | ApiError {
  const event = withoutNul(input);
  if (!isObj(event)) return apiError('SENTRY_UNSUPPORTED');
  const list = exceptions(event);
  if (list === null) return apiError('SENTRY_UNSUPPORTED');
  const platform = typeof event.platform === 'string' ? event.platform : '';
  if (platform.length > 255) return sentryInvalidField('platform is too long (maximum is 255 characters)');
  const transaction = str(event.transaction);
  let name: string;
  let description: string;
  let actor: string;
  let groupFrames: Obj[] = [];
  if (list && list.length > 0) {
    const allFrames = list.map(frames);
    if (allFrames.some((f) => f === null)) return apiError('SENTRY_UNSUPPORTED');
    const index = Math.max(
      0,
      list.findIndex((e) => isObj(e.stacktrace)),
    );
    const exc = list[index]!;
    groupFrames = allFrames[index]!;
    const last = groupFrames.at(-1);
    name = str(exc.type) ?? 'Error';
    description = typeof exc.value === 'string' ? exc.value : '';
    actor = transaction ?? (last ? `${str(last.function) ?? ''}(${str(last.module) ?? ''})` : (str(event.culprit) ?? 'unknown'));
  } else {
    const message = messageOf(event);
    if (message === undefined) return apiError('SENTRY_UNSUPPORTED');
    name = message.split('\n', 1)[0]!;
    description = message;
    actor = transaction ?? str(event.culprit) ?? str(event.logger) ?? 'message';
  }
  const exception = list !== undefined && list.length > 0;
  return {
    projectId,
    fingerprint: fingerprintOf(event, { platform, name, actor, frames: groupFrames, exception }),
    name: cut(name, 255),
    description: cut(description, 1024),
    actor: cut(actor, 255),
    platform,
    userKey: userKeyOf(event),
    eventId: str(event.event_id),
    environment: str(event.environment),
    level: str(event.level),
    occurredAt: occurredAt(event.timestamp, now),
    payload: event,
  };
}
