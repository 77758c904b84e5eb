// The alert every detection becomes, and its two printed forms (reference/falco-language.md D.3,
// D.4): the text line `HH:MM:SS.nnnnnnnnn: <Priority> <message>` and the one-line JSON object
// Falco writes with `json_output: true`. parseAlertJson is the reverse, with the checks
// falcosidekick applies to a `POST /` body (reference/module-and-forwarder.md §4).
import { PRIORITIES, parsePriority, type Priority } from '../engine/priority.js';
import { jsonString, toWellFormed, writeJson, compareCodePoints, type JsonOut } from './json-write.js';
import { readJson, type JsonIn } from './json-read.js';
import { GO_ZERO_TIME_NS, localClock, parseRfc3339, rfc3339Nano } from './time.js';

/** A value of one output field (typed as Falco's rawval_to_json gives it). */
export type OutputFieldValue = string | number | bigint | boolean | null | Array<string | number | boolean>;

/** One detection (or internal event) on its way to the outputs. */
export interface Alert {
  /** Event time, ns since the epoch. */
  timeNs: bigint;
  rule: string;
  priority: Priority;
  /** 'syscall' | 'k8s_audit' | 'internal' (falcosidekick passes other strings through). */
  source: string;
  tags: string[];
  hostname: string;
  /** The rendered rule output, without the time/priority prefix. */
  message: string;
  /** Every %field of the output by its canonical name; alertJson adds `evt.time`. */
  outputFields: Record<string, OutputFieldValue>;
}

/** The rule name of the forwarder's POST /test event (falcosidekick's): it passes every destination's minimum priority. */
export const TEST_RULE = 'Test rule';

/** An alert of the engine itself (source `internal`: drops, rejections, failures); its message starts with the rule's name. */
export function internalAlert(rule: string, priority: Priority, tags: string[], hostname: string, text: string, outputFields: Alert['outputFields'], now: bigint = BigInt(Date.now()) * 1_000_000n): Alert {
  return { timeNs: now, rule, priority, source: 'internal', tags, hostname, message: `${rule}: ${text}`, outputFields };
}

/** The text alert line (D.3), passed through a JSON string encoder with the quotes stripped. */
export function alertText(a: Alert): string {
  const line = `${localClock(a.timeNs)}: ${a.priority} ${a.message}`;
  return jsonString(line).slice(1, -1);
}

/** Tags as Falco prints them: distinct, sorted by code point. */
export function sortedTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map(toWellFormed))].sort(compareCodePoints);
}

/** The JSON alert line (D.4): compact, keys sorted, `evt.time` as integer ns, no trailing newline. */
export function alertJson(a: Alert): string {
  const fields: Record<string, JsonOut> = { ...a.outputFields, 'evt.time': a.timeNs };
  return writeJson({
    hostname: a.hostname,
    output: alertText(a),
    output_fields: fields,
    priority: a.priority,
    rule: a.rule,
    source: a.source,
    tags: sortedTags(a.tags),
    time: rfc3339Nano(a.timeNs),
  });
}

/** The result of parseAlertJson: an alert, or the reason the body was refused. */
export type ParsedAlert = { ok: true; alert: Alert } | { ok: false; error: string };

const TEXT_PREFIX = new RegExp(`^(?:\\d{2}:\\d{2}:\\d{2}\\.\\d{9}|\\d{4}-\\d{2}-\\d{2}T\\S+): (?:${PRIORITIES.join('|')}) `);

type JsonObject = { [key: string]: JsonIn };

function isObject(v: JsonIn | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An optional string member: null and absent read as '' (Go's zero value). */
function optString(body: JsonObject, key: string): string | { error: string } {
  const v = body[key];
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : { error: `${key} must be a string` };
}

function fieldValue(v: JsonIn): OutputFieldValue {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')) {
    return v as Array<string | number | boolean>;
  }
  return writeJson(v as JsonOut); // nested structures are kept as their JSON text
}

/**
 * Parses and checks a Falco JSON alert as falcosidekick does: the first JSON value must be an
 * object with a known `priority`, a non-empty `rule`, an RFC 3339 `time` (not Go's zero time)
 * and a non-empty `output_fields`; `output`, `source`, `hostname`, `tags`, `uuid` are optional
 * and unknown keys are ignored. `message` is `output` without its time/priority prefix, and an
 * integer `evt.time` output field is dropped (alertJson writes it back from `time`).
 */
export function parseAlertJson(text: string): ParsedAlert {
  const read = readJson(text);
  if (!read.ok) return read;
  const body = read.value;
  if (!isObject(body)) return { ok: false, error: 'body must be a JSON object' };
  const strings: Record<string, string> = {};
  for (const key of ['uuid', 'output', 'rule', 'source', 'hostname']) {
    const s = optString(body, key);
    if (typeof s !== 'string') return { ok: false, error: s.error };
    strings[key] = s;
  }
  const p = body.priority;
  if (p === undefined || p === null || p === '') return { ok: false, error: 'priority is missing' };
  if (typeof p !== 'string') return { ok: false, error: 'priority must be a string' };
  const priority = parsePriority(p);
  if (!priority) return { ok: false, error: `priority ${JSON.stringify(p)} is not one of ${PRIORITIES.join(', ')}` };
  if (strings.rule === '') return { ok: false, error: 'rule is missing' };
  const t = body.time;
  if (t === undefined || t === null) return { ok: false, error: 'time is missing' };
  if (typeof t !== 'string') return { ok: false, error: 'time must be a string' };
  const timeNs = parseRfc3339(t);
  if (timeNs === undefined) return { ok: false, error: `time ${JSON.stringify(t)} is not an RFC 3339 date-time with a zone` };
  if (timeNs === GO_ZERO_TIME_NS) return { ok: false, error: 'time is missing' };
  const of = body.output_fields;
  if (of !== undefined && of !== null && !isObject(of)) return { ok: false, error: 'output_fields must be an object' };
  if (!of || Object.keys(of).length === 0) return { ok: false, error: 'output_fields is missing or empty' };
  const tags = body.tags ?? [];
  if (!Array.isArray(tags) || !tags.every((x) => typeof x === 'string')) return { ok: false, error: 'tags must be a list of strings' };
  const outputFields: Record<string, OutputFieldValue> = {};
  for (const [k, v] of Object.entries(of)) {
    if (k === 'evt.time' && (typeof v === 'bigint' || Number.isInteger(v))) continue;
    Object.defineProperty(outputFields, k, { value: fieldValue(v), enumerable: true, writable: true, configurable: true });
  }
  const output = strings.output as string;
  return {
    ok: true,
    alert: {
      timeNs,
      rule: strings.rule as string,
      priority,
      source: strings.source as string,
      tags: sortedTags(tags as string[]),
      hostname: strings.hostname as string,
      message: output.replace(TEXT_PREFIX, ''),
      outputFields,
    },
  };
}
