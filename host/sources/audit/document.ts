// Audit documents to audit events: classifies one parsed JSON document (an audit.k8s.io
// EventList, or a single Event) and turns each audit event object into a SourceEvent with ka.* /
// jevt.* / json.* field access. Shared by `rae replay --format audit` and the audit webhook, so
// both evaluate exactly the same events. Consumes parsed JSON; produces SourceEvents and reasons.
import type { FieldRef } from '../../engine/ir.js';
import type { EventAccessor, RawValue } from '../../engine/interpreter.js';
import type { SourceEvent } from '../types.js';
import { auditEventTimeNs, extractAuditField, type AuditEvent } from './extract.js';

/** Why a document is neither an EventList nor an Event (the k8saudit plugin's log text). */
export const NOT_AUDIT_DATA = 'data not recognized as a k8s audit event';

/** Audit event field access (ka.*, jevt.*, json.* with the plugins' semantics; evt.* generic). */
export class AuditFields implements EventAccessor {
  constructor(
    private readonly ev: AuditEvent,
    private readonly generic: { timeNs: bigint; num: bigint; timeKnown?: boolean },
  ) {}
  field(ref: FieldRef): RawValue | undefined {
    const name = ref.def.name;
    // jevt.rawtime / json.rawtime: the stageTimestamp already parsed for the event time.
    if (this.generic.timeKnown && (name === 'jevt.rawtime' || name === 'json.rawtime')) return this.generic.timeNs.toString();
    if (name.startsWith('evt.')) {
      if (name === 'evt.time' || name === 'evt.rawtime') return this.generic.timeNs;
      if (name === 'evt.source') return 'k8s_audit';
      if (name === 'evt.num') return this.generic.num;
      return undefined;
    }
    return extractAuditField(this.ev, name, ref.arg);
  }
}

/** True for an object that looks like an audit.k8s.io Event (it has a string auditID). */
export function isAuditEvent(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Record<string, unknown>).auditID === 'string';
}

/** What one JSON document is: an EventList (its items, unchecked), one Event, or neither (with why). */
export type AuditDocument = { kind: 'list'; items: unknown[] } | { kind: 'event'; event: Record<string, unknown> } | { kind: 'invalid'; reason: string };

/** Classifies a parsed document. Any other object with a string auditID is an Event (as replay always took it). */
export function classifyAuditDocument(doc: unknown): AuditDocument {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { kind: 'invalid', reason: NOT_AUDIT_DATA };
  const o = doc as Record<string, unknown>;
  if (o.kind === 'EventList') {
    return Array.isArray(o.items) ? { kind: 'list', items: o.items } : { kind: 'invalid', reason: "EventList has no 'items' array" };
  }
  if (isAuditEvent(o)) return { kind: 'event', event: o };
  return { kind: 'invalid', reason: NOT_AUDIT_DATA };
}

/** Audit events of one JSON document: an EventList's items, or a single Event; `reason` tells what was left out. */
export function auditDocumentEvents(doc: unknown): { events: Record<string, unknown>[]; reason?: string } {
  const d = classifyAuditDocument(doc);
  if (d.kind === 'invalid') return { events: [], reason: d.reason };
  if (d.kind === 'event') return { events: [d.event] };
  const events = d.items.filter(isAuditEvent);
  const bad = d.items.length - events.length;
  return bad > 0 ? { events, reason: `${bad} item(s) of the EventList are not audit events` } : { events };
}

/** The SourceEvent of one audit event object; `num` is its evt.num. Time = stageTimestamp (0 if unreadable). */
export function auditSourceEvent(json: Record<string, unknown>, num: bigint): SourceEvent {
  const ev: AuditEvent = { json };
  const parsed = auditEventTimeNs(ev);
  const timeNs = parsed ?? 0n;
  return { source: 'k8s_audit', timeNs, fields: new AuditFields(ev, { timeNs, num, timeKnown: parsed !== undefined }) };
}
