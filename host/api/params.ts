// Declared parameters, validated the way GitLab's Grape endpoints do: every parameter is checked
// in declaration order and all messages are joined ("active is missing, active is empty").
// Consumes the merged query and body parameters; produces typed values or an ApiError.
import { invalidParams, type ApiError } from './errors.js';

/** One declared parameter. */
export type ParamSpec =
  /** allowBlank false: Grape's `allow_blank: false` (also reported when missing); nullable false: only '' and null are "is empty". */
  { name: string; type: 'boolean'; required?: boolean; allowBlank?: boolean; nullable?: boolean } | { name: string; type: 'integer'; required?: boolean } | { name: string; type: 'string'; required?: boolean; values?: readonly string[] };

export type ParamValue = boolean | number | string | null;

// dry-types Params::Bool, as Grape coerces `type: Boolean` (reference §1.6).
const TRUE_VALUES = new Set(['1', 'on', 'On', 'ON', 't', 'true', 'True', 'TRUE', 'T', 'y', 'yes', 'Yes', 'YES', 'Y']);
const FALSE_VALUES = new Set(['0', 'off', 'Off', 'OFF', 'f', 'false', 'False', 'FALSE', 'F', 'n', 'no', 'No', 'NO', 'N']);

/** Coerces a boolean parameter; undefined when the value is invalid, null for '' and null. */
export function coerceBoolean(v: unknown): boolean | null | undefined {
  if (v === null || v === '') return null; // Grape treats '' as nil for non-String types
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number' || typeof v === 'string') {
    const s = String(v);
    if (TRUE_VALUES.has(s)) return true;
    if (FALSE_VALUES.has(s)) return false;
  }
  return undefined;
}

function coerceInteger(v: unknown): number | null | undefined {
  if (v === null || v === '') return null;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v === 'string' && /^[+-]?\d{1,15}$/.test(v.trim())) return Number(v.trim());
  return undefined;
}

/** Validates `input` against `specs`; returns the coerced values (null when absent) or a 400. */
export function validateParams(specs: readonly ParamSpec[], input: Record<string, unknown>): { ok: true; values: Record<string, ParamValue> } | { ok: false; error: ApiError } {
  const messages: string[] = [];
  const values: Record<string, ParamValue> = {};
  for (const spec of specs) {
    const present = Object.prototype.hasOwnProperty.call(input, spec.name) && input[spec.name] !== undefined;
    const blankNotAllowed = spec.type === 'boolean' && spec.allowBlank === false;
    const nullNotAllowed = blankNotAllowed || (spec.type === 'boolean' && spec.nullable === false);
    values[spec.name] = null;
    if (!present) {
      if (spec.required) messages.push(`${spec.name} is missing`);
      // Grape's allow_blank validator also fires on an absent value
      if (spec.required && blankNotAllowed) messages.push(`${spec.name} is empty`);
      continue;
    }
    const raw = input[spec.name];
    let v: ParamValue | undefined;
    if (spec.type === 'boolean') v = coerceBoolean(raw);
    else if (spec.type === 'integer') v = coerceInteger(raw);
    else v = typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : raw === null ? null : undefined;
    if (v === undefined) {
      messages.push(`${spec.name} is invalid`);
      continue;
    }
    if (v === null && nullNotAllowed) {
      messages.push(`${spec.name} is empty`);
      continue;
    }
    if (spec.type === 'string' && spec.values && v !== null && !spec.values.includes(v as string)) {
      messages.push(`${spec.name} does not have a valid value`);
      continue;
    }
    values[spec.name] = v;
  }
  return messages.length > 0 ? { ok: false, error: invalidParams(messages) } : { ok: true, values };
}

/** Query parameters overlaid with a JSON or form body's (GitLab merges both; the body wins). */
export function mergeParams(query: unknown, body: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const src of [query, body]) {
    if (src === null || typeof src !== 'object' || Array.isArray(src)) continue;
    for (const [k, v] of Object.entries(src as Record<string, unknown>)) out[k] = v;
  }
  return out;
}
