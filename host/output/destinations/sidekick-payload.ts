// falcosidekick's view of an alert (its types.FalcoPayload) and the ways its outputs print it:
// the payload JSON Go's encoding/json writes (struct fields in declaration order, map keys sorted,
// `<>&` and U+2028/9 escaped, `time` in RFC 3339 with trailing zeros of the fraction trimmed), the
// %v text of a field value, and time.Time's String(). Consumes an Alert; produces strings.
import { randomUUID } from 'node:crypto';
import { alertText, sortedTags, type Alert, type OutputFieldValue } from '../alert.js';
import { compareCodePoints, toWellFormed } from '../json-write.js';
import type { Delivery } from './types.js';

const uuids = new WeakMap<Delivery, string>();

/** The alert's uuid, as falcosidekick gives each event one on receipt; the same for every output. */
export function deliveryUuid(d: Delivery): string {
  let id = uuids.get(d);
  if (id === undefined) uuids.set(d, (id = randomUUID()));
  return id;
}

/** The output fields falcosidekick receives from Falco: the alert's, plus `evt.time` in ns. */
export function sidekickFields(a: Alert): Record<string, OutputFieldValue> {
  return { ...a.outputFields, 'evt.time': a.timeNs };
}

const GO_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** A JSON string literal as Go's encoding/json writes it (HTML-safe: `<`, `>`, `&` as \u escapes). */
export function goJsonString(s: string): string {
  const escaped = toWellFormed(s).replace(/["\\\u0000-\u001f<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `"${escaped}"`;
}

function goJsonValue(v: OutputFieldValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return goJsonString(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return String(v);
  return `[${v.map(goJsonValue).join(',')}]`;
}

function goJsonObject(fields: Record<string, OutputFieldValue>): string {
  const keys = Object.keys(fields).sort(compareCodePoints);
  return `{${keys.map((k) => `${goJsonString(k)}:${goJsonValue(fields[k] as OutputFieldValue)}`).join(',')}}`;
}

/** RFC 3339 in UTC with the fraction's trailing zeros trimmed (Go's time.RFC3339Nano). */
export function goRfc3339Nano(ns: bigint): string {
  const { date, frac } = utcParts(ns);
  return `${date}T${clock(ns)}${frac === '' ? '' : `.${frac}`}Z`;
}

/** Go's time.Time.String() of a UTC time: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
export function goTimeString(ns: bigint): string {
  const { date, frac } = utcParts(ns);
  return `${date} ${clock(ns)}${frac === '' ? '' : `.${frac}`} +0000 UTC`;
}

function utcParts(ns: bigint): { date: string; frac: string } {
  const s = ns / 1_000_000_000n - (ns % 1_000_000_000n < 0n ? 1n : 0n);
  const fracNs = ns - s * 1_000_000_000n;
  const d = new Date(Number(s) * 1000);
  const date = `${String(d.getUTCFullYear()).padStart(4, '0')}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
  return { date, frac: fracNs.toString().padStart(9, '0').replace(/0+$/, '') };
}

function clock(ns: bigint): string {
  const d = new Date(Number(ns / 1_000_000n));
  return `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** A field value as Go's fmt %v prints what encoding/json decoded (with UseNumber). */
export function goValueText(v: OutputFieldValue): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return `[${v.map((x) => goValueText(x)).join(' ')}]`;
  return String(v);
}

/** falcosidekick's payload JSON (json.Marshal of types.FalcoPayload), e.g. what NATS, Redis, MQTT and syslog carry. */
export function sidekickJson(a: Alert, uuid: string): string {
  const parts = [
    `"uuid":${goJsonString(uuid)}`,
    `"output":${goJsonString(alertText(a))}`,
    `"priority":${goJsonString(a.priority)}`,
    `"rule":${goJsonString(a.rule)}`,
    `"time":"${goRfc3339Nano(a.timeNs)}"`,
    `"output_fields":${goJsonObject(sidekickFields(a))}`,
    `"source":${goJsonString(a.source)}`,
  ];
  if (a.tags.length > 0) parts.push(`"tags":[${sortedTags(a.tags).map(goJsonString).join(',')}]`);
  if (a.hostname !== '') parts.push(`"hostname":${goJsonString(a.hostname)}`);
  return `{${parts.join(',')}}`;
}
