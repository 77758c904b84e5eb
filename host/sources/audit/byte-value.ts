// Values of one audit event read from the request body's bytes (validated JSON text, json-scan.ts)
// with the semantics of the object path (json-value.ts): a key path where an object step takes
// the member's last occurrence (as JSON.parse keeps the last duplicate) and an array step a
// decimal index (getKeys), and a value's text as the plugins give it (asText: a string as is,
// any other value as JSON text). Only the value asked for is decoded; a string without escapes
// is one UTF-8 decode of its bytes.
import { asText } from './json-value.js';
import { hasEscape, nameIs, skipBlanks, skipValue, stringEnd } from './json-scan.js';

const DECIMAL = /^[+-]?[0-9]+$/;

/** Start of the last member `key` of the object at `at`, or -1 (a member spelled with escapes is compared decoded). */
function memberAt(b: Buffer, at: number, key: string): number {
  let found = -1;
  let i = skipBlanks(b, at + 1);
  if (b[i] === 0x7d) return -1;
  for (;;) {
    const nameEnd = stringEnd(b, i);
    const valueAt = skipBlanks(b, skipBlanks(b, nameEnd) + 1);
    if (nameIs(b, i, nameEnd, key) || (hasEscape(b, i + 1, nameEnd - 1) && JSON.parse(b.toString('utf8', i, nameEnd)) === key)) found = valueAt;
    i = skipBlanks(b, skipValue(b, valueAt));
    if (b[i] === 0x7d) return found;
    i = skipBlanks(b, i + 1);
  }
}

/** Keeps the members of the objects read (membersOf), by the object's offset. */
export interface MemberCache {
  membersAt(at: number): Map<string, number>;
}

/** Every member of the object at `at` by name (decoded when written with escapes), each at its last occurrence. */
export function membersOf(b: Buffer, at: number): Map<string, number> {
  const out = new Map<string, number>();
  let i = skipBlanks(b, at + 1);
  if (b[i] === 0x7d) return out;
  for (;;) {
    const nameEnd = stringEnd(b, i);
    const valueAt = skipBlanks(b, skipBlanks(b, nameEnd) + 1);
    const name = hasEscape(b, i + 1, nameEnd - 1) ? (JSON.parse(b.toString('utf8', i, nameEnd)) as string) : b.toString('utf8', i + 1, nameEnd - 1);
    out.set(name, valueAt);
    i = skipBlanks(b, skipValue(b, valueAt));
    if (b[i] === 0x7d) return out;
    i = skipBlanks(b, i + 1);
  }
}

/** Start of element `index` of the array at `at`, or -1. */
function elementAt(b: Buffer, at: number, index: number): number {
  let i = skipBlanks(b, at + 1);
  if (b[i] === 0x5d) return -1;
  for (let k = 0; ; k++) {
    if (k === index) return i;
    i = skipBlanks(b, skipValue(b, i));
    if (b[i] === 0x5d) return -1;
    i = skipBlanks(b, i + 1);
  }
}

/**
 * getKeys over bytes: the start of the value at keys[from..] from the value at `at`, or -1 when
 * missing. `members` gives an object's members when the caller keeps them (several fields read
 * the same objects of an event); without it each object step walks the object.
 */
export function valueAt(b: Buffer, at: number, keys: readonly string[], from = 0, members?: MemberCache): number {
  let cur = at;
  for (let s = from; s < keys.length; s++) {
    const k = keys[s]!;
    const c = b[cur];
    if (c === 0x7b) {
      cur = members === undefined ? memberAt(b, cur, k) : (members.membersAt(cur).get(k) ?? -1);
    } else if (c === 0x5b) {
      if (!DECIMAL.test(k)) return -1;
      const n = Number(k);
      if (!Number.isSafeInteger(n) || n < 0) return -1;
      cur = elementAt(b, cur, n);
    } else {
      return -1;
    }
    if (cur < 0) return -1;
  }
  return cur;
}

/** The JSON value at `at` (ending at `end`, or found by a walk when -1), decoded (values a field gives as a whole: lists, objects). */
export function parseAt(b: Buffer, at: number, end = -1): unknown {
  return JSON.parse(b.toString('utf8', at, end < 0 ? skipValue(b, at) : end));
}

/** A string value at `at` as text, or undefined when the value there is not a string. */
export function stringAt(b: Buffer, at: number): string | undefined {
  if (b[at] !== 0x22) return undefined;
  const end = stringEnd(b, at);
  return hasEscape(b, at + 1, end - 1) ? (JSON.parse(b.toString('utf8', at, end)) as string) : b.toString('utf8', at + 1, end - 1);
}

/** asText of the value at `at`: a string as is, true/false/null, a number's shortest form, a container as compact JSON. */
export function textAt(b: Buffer, at: number): string {
  const c = b[at]!;
  if (c === 0x22) return stringAt(b, at)!;
  if (c === 0x74) return 'true';
  if (c === 0x66) return 'false';
  if (c === 0x6e) return 'null';
  if (c === 0x7b || c === 0x5b) return asText(parseAt(b, at));
  // Number() reads a JSON number token as JSON.parse does (a value past the doubles is Infinity: "null").
  const n = Number(b.toString('latin1', at, skipValue(b, at)));
  return Number.isFinite(n) ? String(n) : 'null';
}
