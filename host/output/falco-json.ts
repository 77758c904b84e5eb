// Falco's JSON switches (falco.yaml; userspace/engine/formats.cpp format_event) applied to the
// alert line every Falco-side output writes (stdout, file, program, webhook):
//   json_include_output_property  (default true)  the "output" member (the full alert line)
//   json_include_tags_property    (default true)  the "tags" member
//   json_include_message_property (default false) a "message" member: the rule output without
//                                                 the time/priority prefix
//   time_format_iso_8601          (default false) the prefix time as ISO 8601 UTC
//                                                 (%evt.time.iso8601), whose field then replaces
//                                                 evt.time in output_fields
//   append_output                 (default [])    per match (source, tags, rule): extra_output
//                                                 appended to the message and extra_fields added
//                                                 to output_fields (see appendOutput; the engine
//                                                 extracts their fields from the event, from-match.ts)
// With the defaults the line is alertJson's, byte for byte.
import { alertJson, alertText, type Alert, type OutputFieldValue } from './alert.js';
import { compareCodePoints, jsonString, writeJson, type JsonOut } from './json-write.js';
import { rfc3339Nano } from './time.js';
import type { ConfigProblem } from '../config/problem.js';

/** One append_output entry. */
export interface AppendOutput {
  match: { source?: string; tags?: string[]; rule?: string };
  extra_output?: string;
  /** Field names (value from output_fields) or {name: text} pairs. */
  extra_fields?: Array<string | Record<string, string>>;
}

/** The switches, under forwarder.falco in the config file (Falco's names). */
export interface FalcoJsonConfig {
  json_include_output_property: boolean;
  json_include_tags_property: boolean;
  json_include_message_property: boolean;
  time_format_iso_8601: boolean;
  append_output: AppendOutput[];
}

export const FALCO_JSON_DEFAULTS: FalcoJsonConfig = {
  json_include_output_property: true,
  json_include_tags_property: true,
  json_include_message_property: false,
  time_format_iso_8601: false,
  append_output: [],
};

/** Checks forwarder.falco.append_output's shape; problems name the entry. */
export function checkAppendOutput(list: unknown, problems: ConfigProblem[]): void {
  const at = 'forwarder.falco.append_output';
  if (!Array.isArray(list)) return void problems.push({ key: at, message: 'expected a list' });
  list.forEach((e, i) => {
    const key = `${at}[${i}]`;
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return void problems.push({ key, message: 'expected a mapping with match, extra_output, extra_fields' });
    for (const k of Object.keys(e)) if (!['match', 'extra_output', 'extra_fields'].includes(k)) problems.push({ key: `${key}.${k}`, message: 'unknown key' });
    const m = (e as AppendOutput).match ?? {};
    if (typeof m !== 'object' || Array.isArray(m)) problems.push({ key: `${key}.match`, message: 'expected a mapping with source, tags, rule' });
    else for (const k of Object.keys(m)) if (!['source', 'tags', 'rule'].includes(k)) problems.push({ key: `${key}.match.${k}`, message: 'unknown key' });
    const ef = (e as AppendOutput).extra_fields;
    if (ef !== undefined && (!Array.isArray(ef) || !ef.every((x) => typeof x === 'string' || (typeof x === 'object' && x !== null))))
      problems.push({ key: `${key}.extra_fields`, message: 'expected a list of field names or {name: value} mappings' });
    const eo = (e as AppendOutput).extra_output;
    if (eo !== undefined && typeof eo !== 'string') problems.push({ key: `${key}.extra_output`, message: 'expected a string' });
  });
}

/** Whether an append_output entry's match selects the alerts of a rule (its source, name and tags). */
export function appendMatches(m: AppendOutput['match'], a: Pick<Alert, 'source' | 'rule' | 'tags'>): boolean {
  if (m.source !== undefined && m.source !== a.source) return false;
  if (m.rule !== undefined && m.rule !== a.rule) return false;
  if (m.tags !== undefined && !m.tags.every((t) => a.tags.includes(t))) return false;
  return true;
}

/**
 * append_output applied to an alert that is already rendered: `%field` in extra_output and a
 * plain extra field name take their value from the alert's output fields, where the engine put
 * them from the event (from-match.ts appendedFields: `rae run` passes append_output to it); an
 * alert from elsewhere (the forwarder's HTTP input) without them gets `<NA>` / null, as there is
 * no event to extract them from; `{name: text}` extra fields are added as that text.
 */
function appendOutput(entries: readonly AppendOutput[], a: Alert): Alert {
  let out = a;
  for (const e of entries) {
    if (!appendMatches(e.match ?? {}, out)) continue;
    const fields = { ...out.outputFields };
    const set = (k: string, v: OutputFieldValue) => Object.defineProperty(fields, k, { value: v, enumerable: true, writable: true, configurable: true });
    let message = out.message;
    if (e.extra_output) {
      const extra = e.extra_output.replace(/%([A-Za-z_][\w.[\]-]*)/g, (_m, f: string) => {
        const v = out.outputFields[f];
        return v === undefined || v === null ? '<NA>' : String(v);
      });
      message = `${message} ${extra}`;
    }
    for (const f of e.extra_fields ?? []) {
      if (typeof f === 'string') set(f, Object.hasOwn(out.outputFields, f) ? (out.outputFields[f] as OutputFieldValue) : null);
      else for (const [k, v] of Object.entries(f)) set(k, String(v));
    }
    out = { ...out, message, outputFields: fields };
  }
  return out;
}

function isDefault(c: FalcoJsonConfig): boolean {
  return c.json_include_output_property && c.json_include_tags_property && !c.json_include_message_property && !c.time_format_iso_8601 && c.append_output.length === 0;
}

/** The alert-line writer for `c`: alertJson itself with the defaults. */
export function falcoJsonWriter(c: FalcoJsonConfig): (a: Alert) => string {
  if (isDefault(c)) return alertJson;
  return (a0) => {
    const a = c.append_output.length > 0 ? appendOutput(c.append_output, a0) : a0;
    const fields: Record<string, JsonOut> = { ...a.outputFields, 'evt.time': a.timeNs };
    let output = alertText(a);
    if (c.time_format_iso_8601) {
      const iso = rfc3339Nano(a.timeNs);
      delete fields['evt.time'];
      fields['evt.time.iso8601'] = iso;
      output = `${iso}: ${jsonString(`${a.priority} ${a.message}`).slice(1, -1)}`;
    }
    const event: Record<string, JsonOut | undefined> = {
      hostname: a.hostname,
      message: c.json_include_message_property ? a.message : undefined,
      output: c.json_include_output_property ? output : undefined,
      output_fields: fields,
      priority: a.priority,
      rule: a.rule,
      source: a.source,
      tags: c.json_include_tags_property ? [...new Set(a.tags)].sort(compareCodePoints) : undefined,
      time: rfc3339Nano(a.timeNs),
    };
    return writeJson(event);
  };
}
