// A matched rule and its event to an Alert: the rule output rendered with `<NA>` for missing
// values and `%N` widths, and output_fields typed as Falco's rawval_to_json does
// (reference/falco-language.md D.1, D.4): integers as numbers, booleans, strings, lists as
// arrays, missing as null. Falco's append_output adds fields to a matching rule's output_fields,
// extracted from the event as the rule's own (appendedFields). Values compared as raw bytes leave
// here as text: each invalid UTF-8 sequence becomes U+FFFD (Falco 0.45's output encoding); control
// characters stay as they are until an encoder escapes them (alertText, alertJson).
import { BoundField, type FieldRef, type LoadedRule, type OutputToken, parseOutput, type RawScalar, type RawValue, type SourceEvent, typeClass, utf8Sanitized } from '../engine/index.js';
import type { Alert, OutputFieldValue } from './alert.js';
import { type AppendOutput, appendMatches } from './falco-json.js';

type FieldToken = Extract<OutputToken, { kind: 'field' }>;

function refOf(tok: FieldToken): FieldRef {
  return { kind: 'field', def: tok.def, arg: tok.arg, canonical: tok.canonical, type: tok.def.type, isList: tok.def.isList };
}

function scalarJson(v: RawScalar, ref: FieldRef): string | number | bigint | boolean {
  const cls = typeClass(ref.type);
  if (cls === 'signed' || cls === 'unsigned' || cls === 'double') {
    if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && /^[+-]?\d+$/.test(v)) return scalarJson(BigInt(v), ref);
  }
  if (cls === 'bool') {
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
  }
  return utf8Sanitized(typeof v === 'string' ? v : String(v));
}

/** The typed JSON value of a field for output_fields. */
function fieldJson(v: RawValue | undefined, ref: FieldRef): OutputFieldValue {
  if (v === undefined) return null;
  if (Array.isArray(v))
    return v.map((x) => {
      const j = scalarJson(x, ref);
      return typeof j === 'bigint' ? Number(j) : j;
    });
  return scalarJson(v, ref);
}

/** The text of a field in a rendered output. */
function fieldText(v: RawValue | undefined, ref: FieldRef): string {
  if (v === undefined) return '<NA>';
  if (Array.isArray(v)) {
    // An un-indexed ancestor field prints its ancestors space-separated; other lists as (a,b).
    if (ref.def.name.startsWith('proc.a') && ref.arg === undefined) return utf8Sanitized(v.map(String).join(' '));
    return utf8Sanitized(`(${v.map(String).join(',')})`);
  }
  return utf8Sanitized(String(v));
}

/** Default of rules.maxOutputFieldBytes: the longest field value an alert carries, in UTF-8 bytes. */
export const DEFAULT_MAX_OUTPUT_FIELD_BYTES = 64 * 1024;

/** A value cut to `max` UTF-8 bytes (on a character boundary), marked `…(truncated N bytes)`; shorter values are returned as they are. */
function capText(s: string, max: number): string {
  if (s.length <= max / 3) return s; // at most 3 bytes per UTF-16 unit: surely short enough
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length <= max) return s;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a character
  return `${bytes.subarray(0, end).toString('utf8')}…(truncated ${bytes.length - end} bytes)`;
}

function capJson(v: OutputFieldValue, max: number): OutputFieldValue {
  if (typeof v === 'string') return capText(v, max);
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? capText(x, max) : x));
  return v;
}

/**
 * The fields append_output entries (forwarder.falco.append_output) add to the alerts of `rule`:
 * the `%field`s of each matching entry's extra_output and its extra_fields names, as Falco
 * formats them from the event. A name that is no field of the rule's source is left out (the
 * forwarder then sets it null, as before).
 */
export function appendedFields(entries: readonly AppendOutput[], rule: LoadedRule): FieldToken[] {
  const out: FieldToken[] = [];
  const add = (text: string, whole: boolean) => {
    const p = parseOutput(rule.source, text);
    if (!p.ok) return;
    for (const t of p.tokens) if (t.kind === 'field' && (!whole || `%${t.canonical}` === text)) out.push(t);
  };
  for (const e of entries) {
    if (!appendMatches(e.match ?? {}, { source: rule.source, rule: rule.name, tags: rule.tags })) continue;
    if (e.extra_output) add(e.extra_output, false);
    for (const f of e.extra_fields ?? []) if (typeof f === 'string') add(`%${f}`, true);
  }
  return out;
}

/** A field of an alert plan: its output_fields key, its read, and its place in the message. */
interface PlannedField {
  key: string;
  f: BoundField;
  /** A string value of it is one text in the message and in output_fields (not a number or a boolean type). */
  textual: boolean;
  /** In the message (a field of the rule's output), or in output_fields only (an appended field). */
  inMessage: boolean;
  /** The message's literal text just before it (the text tokens between it and the field before, joined). */
  before: string;
  /** `%N` width. */
  width: number | undefined;
}

/** An alert's output_fields from the values of its plan's fields, in the plan's order. */
type OutputFieldsMaker = (values: readonly OutputFieldValue[]) => Alert['outputFields'];

/**
 * The maker of a plan's output_fields: one object literal of its keys, each at its first place
 * (a key met again keeps that place, as when the keys are stored in turn), compiled once per
 * plan. Each alert's object is then made whole, in one shape, where storing its keys one by
 * one goes through V8's generic store for each key (one code for every rule's keys), a good
 * part of an alert's cost. Each key is written as a JSON string, so it can only be a property
 * name (`__proto__` as a computed one, which a literal makes an own key, not the prototype).
 * Without `compile`, or where code generation from strings is disallowed (node
 * --disallow-code-generation-from-strings), the keys are defined one by one.
 */
export function outputFieldsMaker(keys: readonly string[], compile = true): OutputFieldsMaker {
  const first = new Map<string, number>();
  keys.forEach((k, i) => {
    if (!first.has(k)) first.set(k, i);
  });
  if (compile) {
    try {
      const members = [...first].map(([k, i]) => `${k === '__proto__' ? '["__proto__"]' : JSON.stringify(k)}: v[${i}]`).join(', ');
      return new Function('v', `'use strict'; return { ${members} };`) as OutputFieldsMaker;
    } catch {
      // Code generation from strings is disallowed: the keys are stored in turn.
    }
  }
  const entries = [...first];
  return (values) => {
    const out: Alert['outputFields'] = {};
    for (const [k, i] of entries) {
      if (k === '__proto__') Object.defineProperty(out, k, { value: values[i], enumerable: true, writable: true, configurable: true });
      else out[k] = values[i]!;
    }
    return out;
  };
}

/**
 * A rule's output with its appended fields, resolved once for all its alerts: each field's read
 * (BoundField: no lookup by name per alert), whether it is textual, its width, and the literal
 * text around it, so an alert reads each field once and builds the message and output_fields.
 */
export class AlertPlan {
  private readonly fields: PlannedField[] = [];
  /** The message's literal text after its last field. */
  private readonly tail: string;
  /** Each field's value for output_fields, by the field's place (kept from alert to alert: alert() is not re-entered). */
  private readonly values: OutputFieldValue[];
  private readonly make: OutputFieldsMaker;

  /** `extra` (appendedFields) go to output_fields only. */
  constructor(
    readonly rule: LoadedRule,
    extra: readonly FieldToken[] = [],
  ) {
    let text = '';
    for (const t of rule.output) {
      if (t.kind === 'field') {
        this.fields.push(planned(t, true, text));
        text = '';
      } else text += t.text;
    }
    this.tail = text;
    for (const t of extra) this.fields.push(planned(t, false, ''));
    this.values = this.fields.map(() => null);
    this.make = outputFieldsMaker(this.fields.map((f) => f.key));
  }

  /** The alert for the rule matching `ev`; each field value it carries is at most `maxFieldBytes` (rules.maxOutputFieldBytes). */
  alert(ev: SourceEvent, hostname: string, maxFieldBytes = DEFAULT_MAX_OUTPUT_FIELD_BYTES): Alert {
    const values = this.values;
    const fields = this.fields;
    const evf = ev.fields;
    // One pass: each field of the output is read once, for output_fields and the message both; a
    // string value (most of them) is sanitized and cut once for both.
    let message = '';
    for (let i = 0; i < fields.length; i++) {
      const p = fields[i]!;
      const v = p.f.read(evf);
      let s: string;
      if (typeof v === 'string' && p.textual) {
        s = capText(utf8Sanitized(v), maxFieldBytes);
        values[i] = s;
        if (!p.inMessage) continue;
      } else if (v === undefined) {
        // Missing: null in output_fields, <NA> in the message (fieldJson, fieldText).
        values[i] = null;
        if (!p.inMessage) continue;
        s = capText('<NA>', maxFieldBytes);
      } else if (Array.isArray(v)) {
        values[i] = listJson(v, p.f.ref, maxFieldBytes);
        if (!p.inMessage) continue;
        s = capText(fieldText(v, p.f.ref), maxFieldBytes);
      } else {
        values[i] = capJson(fieldJson(v, p.f.ref), maxFieldBytes);
        if (!p.inMessage) continue;
        s = capText(fieldText(v, p.f.ref), maxFieldBytes);
      }
      // Each field's text is at most maxFieldBytes (capText), then padded or cut to a `%N` width.
      const w = p.width;
      if (w !== undefined) s = s.length >= w ? s.slice(0, w) : s.padEnd(w, ' ');
      message += p.before;
      message += s;
    }
    message += this.tail;
    const outputFields = this.make(values);
    const rule = this.rule;
    return {
      timeNs: ev.timeNs,
      rule: rule.name,
      priority: rule.priority,
      source: rule.source,
      tags: rule.tags,
      hostname,
      message,
      outputFields,
    };
  }
}

/** capJson(fieldJson(v, ref), max) of a list in one pass: each element typed, a bigint as a number, a string cut to `max` bytes. */
function listJson(v: readonly RawScalar[], ref: FieldRef, max: number): OutputFieldValue {
  const out: Array<string | number | boolean> = new Array(v.length);
  for (let k = 0; k < v.length; k++) {
    const j = scalarJson(v[k]!, ref);
    out[k] = typeof j === 'bigint' ? Number(j) : typeof j === 'string' ? capText(j, max) : j;
  }
  return out;
}

function planned(t: FieldToken, inMessage: boolean, before: string): PlannedField {
  const ref = refOf(t);
  const cls = typeClass(ref.type);
  const textual = cls !== 'signed' && cls !== 'unsigned' && cls !== 'double' && cls !== 'bool';
  return { key: t.canonical, f: new BoundField(ref), textual, inMessage, before, width: t.width };
}

/** Plans of rules without appended fields, by rule, for alertFor. */
const PLANS = new WeakMap<LoadedRule, AlertPlan>();

/**
 * The alert for a rule that matched an event; each field value it carries is at most
 * `maxFieldBytes` (rules.maxOutputFieldBytes). `extra` (appendedFields) go to output_fields only.
 * A caller that alerts often keeps an AlertPlan per rule instead.
 */
export function alertFor(rule: LoadedRule, ev: SourceEvent, hostname: string, maxFieldBytes = DEFAULT_MAX_OUTPUT_FIELD_BYTES, extra: readonly FieldToken[] = []): Alert {
  if (extra.length > 0) return new AlertPlan(rule, extra).alert(ev, hostname, maxFieldBytes);
  let plan = PLANS.get(rule);
  if (plan === undefined) PLANS.set(rule, (plan = new AlertPlan(rule)));
  return plan.alert(ev, hostname, maxFieldBytes);
}
