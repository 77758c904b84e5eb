// Orchestrator-audit field extraction: ka.* (k8saudit plugin) and json.* / jevt.* (json plugin)
// fields of one parsed audit.k8s.io Event, with the plugins' semantics
// (reference/falco-language.md E.2), and the event time. Consumed by the replay source, the
// audit webhook and the reference interpreter; the generic evt.* fields are the caller's.
import { asText, goIndent, jsonPointer, type Json } from './json-value.js';
import { extractKaField } from './ka-fields.js';
import { stageTimestampNs } from './time.js';

/** k8saudit/json fields are strings; list fields give arrays. */
export type FieldValue = string | string[];

/** One audit event: the parsed `audit.k8s.io` Event object and, if known, its JSON text. */
export interface AuditEvent {
  json: unknown;
  /** The event's own JSON text (used for json.obj / jevt.obj, which keep its number spelling). */
  raw?: string;
}

/** Event time in ns since the epoch from `stageTimestamp` (RFC 3339, fractional seconds), or undefined. */
export function auditEventTimeNs(ev: AuditEvent): bigint | undefined {
  return stageTimestampNs(ev.json);
}

/**
 * Extracts a ka.* / jevt.* / json.* field (`name` is the table name, `arg` the bracket or dotted
 * argument); undefined = missing (the field could not be extracted).
 */
export function extractAuditField(ev: AuditEvent, name: string, arg: string | undefined): FieldValue | undefined {
  if (name.startsWith('ka.')) return extractKaField(ev.json, name, arg);
  if (name.startsWith('jevt.') || name.startsWith('json.')) return jsonPluginField(ev, name.slice(name.indexOf('.') + 1), arg);
  return undefined;
}

/** The json plugin: its extractor only accepts events whose text starts with '{' or '['. */
function jsonPluginField(ev: AuditEvent, field: string, arg: string | undefined): string | undefined {
  const root: Json = ev.json;
  if (typeof root !== 'object' || root === null) return undefined;
  switch (field) {
    case 'value': {
      if (arg === undefined) return undefined;
      const v = jsonPointer(root, arg);
      return v === undefined ? undefined : asText(v);
    }
    case 'obj':
      return ev.raw !== undefined ? goIndent(ev.raw.trim()) : JSON.stringify(root, null, 2);
    case 'rawtime':
      return auditEventTimeNs(ev)?.toString();
    default:
      return undefined;
  }
}
