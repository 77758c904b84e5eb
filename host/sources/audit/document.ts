// Audit documents to audit events: classifies one parsed JSON document (an audit.k8s.io
// EventList, or a single Event) and turns each audit event object into a SourceEvent with ka.* /
// jevt.* / json.* field access. Shared by `rae replay --format audit` and the audit webhook, so
// both evaluate exactly the same events. Consumes parsed JSON; produces SourceEvents and reasons.
import { type EventAccessor, type FieldRead, type FieldReaders, type FieldRef, type RawValue, type SourceEvent, TEXT_COPY } from '../../engine/index.js';
import { auditEventTimeNs, extractAuditField, type AuditEvent } from './extract.js';
import { getterCache } from './getter-cache.js';
import { asText, getKeys, pointerKeys } from './json-value.js';
import { hasAuditId, kaExtractor } from './ka-fields.js';

/** Why a document is neither an EventList nor an Event (the k8saudit plugin's log text). */
const NOT_AUDIT_DATA = 'data not recognized as a k8s audit event';

/** Reads one field of one event; resolved once per FieldRef (name tables, pointers, argument). */
type Getter = (f: AuditFields) => RawValue | undefined;

/** Getters by field name, then by argument (getter-cache.ts). */
const cachedGetter = getterCache(getterFor);

/** The reads of AuditFields resolved per FieldRef (BoundField): its getter. */
const OBJECT_READERS: FieldReaders = {
  read: (ref) => cachedGetter(ref.def.name, ref.arg) as unknown as FieldRead,
  copy: () => () => TEXT_COPY.other,
};

/** Audit event field access (ka.*, jevt.*, json.* with the plugins' semantics; evt.* generic). */
class AuditFields implements EventAccessor {
  readonly readers = OBJECT_READERS;
  /** Whether ka.* fields can be read (an object with an auditID key); checked on first use. */
  private kaGate: boolean | undefined;

  constructor(
    readonly ev: AuditEvent,
    readonly generic: { timeNs: bigint; num: bigint; timeKnown?: boolean },
  ) {}

  field(ref: FieldRef): RawValue | undefined {
    return cachedGetter(ref.def.name, ref.arg)(this);
  }

  /** The event's JSON object when ka.* fields can be read from it. */
  kaRoot(): Record<string, unknown> | undefined {
    if (this.kaGate === undefined) this.kaGate = hasAuditId(this.ev.json);
    return this.kaGate ? (this.ev.json as Record<string, unknown>) : undefined;
  }
}

function getterFor(name: string, arg: string | undefined): Getter {
  if (name === 'jevt.rawtime' || name === 'json.rawtime') {
    // The stageTimestamp already parsed for the event time.
    return (f) => (f.generic.timeKnown ? f.generic.timeNs.toString() : extractAuditField(f.ev, name, arg));
  }
  if (name.startsWith('evt.')) {
    if (name === 'evt.time' || name === 'evt.rawtime') return (f) => f.generic.timeNs;
    if (name === 'evt.source') return () => 'k8s_audit';
    if (name === 'evt.num') return (f) => f.generic.num;
    return () => undefined;
  }
  if (name.startsWith('ka.')) {
    const extract = kaExtractor(name);
    return (f) => {
      const root = f.kaRoot();
      return root === undefined ? undefined : extract(root, arg);
    };
  }
  if ((name === 'jevt.value' || name === 'json.value') && arg !== undefined && arg !== '') {
    const keys = pointerKeys(arg);
    return (f) => {
      const root = f.ev.json;
      if (typeof root !== 'object' || root === null) return undefined;
      const v = getKeys(root, keys);
      return v === undefined ? undefined : asText(v);
    };
  }
  return (f) => extractAuditField(f.ev, name, arg);
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
