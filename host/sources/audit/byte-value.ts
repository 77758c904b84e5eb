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

/** Texts of short ASCII values decoded before, by a hash of their bytes (one per slot: a new text replaces the one there). */
const TEXTS: string[] = new Array<string>(1024).fill('');
/** Longest value kept in TEXTS: names, verbs, kinds, namespaces, codes; longer ones are rarely met twice. */
const TEXT_MAX = 48;
/** Bytes at each end of a value that its TEXTS slot is hashed from. */
const TEXT_HASHED = 8;

type Slice = (this: Buffer, from: number, to: number) => string;
/**
 * Buffer's own UTF-8 decoder of a range, called without toString's argument checks and the
 * encoding's lookup (the ranges here are known to be inside the body); toString where a
 * Node.js has no such method.
 */
const utf8Slice: Slice =
  (Buffer.prototype as unknown as { utf8Slice?: Slice }).utf8Slice ??
  function (this: Buffer, from: number, to: number) {
    return this.toString('utf8', from, to);
  };

/**
 * The text of b[from, to) (UTF-8 without escapes). Audit values repeat from event to event (the
 * user, verb, resource, namespace, a container's image): a short ASCII one is taken from TEXTS
 * when the text there has the same bytes, so it is neither decoded nor allocated again. The slot
 * is hashed from the length and the bytes at each end only, so a value met before is read once
 * (compared with the text there); a text goes into TEXTS when its decoding has as many
 * characters as bytes, which for UTF-8 means ASCII (an invalid byte decodes to U+FFFD, never
 * equal to a byte, so such a text is never taken for one).
 */
export function bodyText(b: Buffer, from: number, to: number): string {
  const n = to - from;
  if (n > TEXT_MAX) return utf8Slice.call(b, from, to);
  let h = n;
  const head = n < TEXT_HASHED ? to : from + TEXT_HASHED;
  for (let i = from; i < head; i++) h = (Math.imul(h, 31) + b[i]!) | 0;
  for (let i = Math.max(head, to - TEXT_HASHED); i < to; i++) h = (Math.imul(h, 31) + b[i]!) | 0;
  const slot = (h ^ (h >>> 12)) & (TEXTS.length - 1);
  const had = TEXTS[slot]!;
  if (had.length === n) {
    let k = 0;
    while (k < n && had.charCodeAt(k) === b[from + k]) k++;
    if (k === n) return had;
  }
  const text = utf8Slice.call(b, from, to);
  if (text.length === n) TEXTS[slot] = text;
  return text;
}

/** A string value at `at` as text, or undefined when the value there is not a string. */
export function stringAt(b: Buffer, at: number): string | undefined {
  if (b[at] !== 0x22) return undefined;
  const end = stringEnd(b, at);
  return hasEscape(b, at + 1, end - 1) ? (JSON.parse(b.toString('utf8', at, end)) as string) : bodyText(b, at + 1, end - 1);
}

/** asText of the value at `at`: a string as is, true/false/null, a number's shortest form, a container as compact JSON. */
export function textAt(b: Buffer, at: number): string {
  const c = b[at]!;
  if (c === 0x22) return stringAt(b, at)!;
  if (c === 0x74) return 'true';
  if (c === 0x66) return 'false';
  if (c === 0x6e) return 'null';
  if (c === 0x7b || c === 0x5b) return compactAt(b, at) ?? asText(parseAt(b, at));
  // An integer written as asText writes it (a response code) is its own text, met before as often as not.
  const end = plainInteger(b, at);
  if (end > 0) return bodyText(b, at, end);
  // Number() reads a JSON number token as JSON.parse does (a value past the doubles is Infinity: "null").
  const n = Number(b.toString('latin1', at, skipValue(b, at)));
  return Number.isFinite(n) ? String(n) : 'null';
}

/**
 * The end of the number at `at` when its text is what asText gives for it (String(Number(text))):
 * an integer of at most 15 digits, without a leading zero, not "-0" (a response code, a count);
 * -1 for any other number (a fraction, an exponent, a longer one), which is read as text.
 */
export function plainInteger(b: Buffer, at: number): number {
  let i = b[at] === 0x2d ? at + 1 : at;
  const first = i;
  while (b[i]! >= 0x30 && b[i]! <= 0x39) i++;
  const digits = i - first;
  if (digits === 0 || digits > 15 || (b[first] === 0x30 && (digits > 1 || first > at))) return -1;
  const next = b[i];
  return next === 0x2e || next === 0x65 || next === 0x45 ? -1 : i;
}

/**
 * asText of the object or array at `at` (JSON.stringify of what JSON.parse gives) when that is
 * its bytes as they are, which is how the API server writes its values: no blank between
 * tokens, each number an integer asText writes back the same (plainInteger), each string
 * escaped only as JSON.stringify escapes (`\"`, `\\`, `\b \f \n \r \t`), no member name met
 * twice in an object (JSON.parse keeps the last, in the first one's place) and none made of
 * digits only (an object lists those first, in numeric order). Undefined for anything else: the
 * caller decodes and writes the value then.
 */
function compactAt(b: Buffer, at: number): string | undefined {
  const end = compactEnd(b, at, 0);
  return end < 0 ? undefined : utf8Slice.call(b, at, end);
}

/** Members an object may have for compactEnd (each name is compared with the ones before it). */
const COMPACT_MEMBERS = 256;
/** Nesting compactEnd follows (deeper values are decoded). */
const COMPACT_DEPTH = 64;

/** The end of the value at `at` when asText writes it as its bytes (compactAt), or -1. */
export function compactEnd(b: Buffer, at: number, depth: number): number {
  const c = b[at];
  if (c === 0x22) return compactString(b, at);
  if (c === 0x74 || c === 0x6e) return at + 4;
  if (c === 0x66) return at + 5;
  if (c !== 0x7b && c !== 0x5b) return plainInteger(b, at);
  if (depth === COMPACT_DEPTH) return -1;
  const object = c === 0x7b;
  let i = at + 1;
  if (b[i] === (object ? 0x7d : 0x5d)) return i + 1;
  const names: number[] = [];
  for (;;) {
    if (object) {
      const nameEnd = compactString(b, i);
      if (nameEnd < 0 || b[nameEnd] !== 0x3a || digitsOnly(b, i + 1, nameEnd - 1) || names.length === 2 * COMPACT_MEMBERS || seen(b, names, i, nameEnd)) return -1;
      names.push(i, nameEnd);
      i = nameEnd + 1;
    }
    i = compactEnd(b, i, depth + 1);
    if (i < 0) return -1;
    const d = b[i];
    if (d === (object ? 0x7d : 0x5d)) return i + 1;
    if (d !== 0x2c) return -1;
    i++;
  }
}

/** The end of the string at `at` when JSON.stringify would write its value the same, or -1. */
function compactString(b: Buffer, at: number): number {
  if (b[at] !== 0x22) return -1;
  let i = at + 1;
  for (;;) {
    const c = b[i]!;
    if (c === 0x22) return i + 1;
    if (c === 0x5c) {
      const e = b[i + 1];
      // \" \\ \b \f \n \r \t; a \u escape or \/ is written otherwise by JSON.stringify (or may be).
      if (e !== 0x22 && e !== 0x5c && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return -1;
      i += 2;
    } else i++;
  }
}

/** True when the bytes [from, to) are all ASCII digits (and there is one at least). */
function digitsOnly(b: Buffer, from: number, to: number): boolean {
  if (from === to) return false;
  for (let k = from; k < to; k++) if (b[k]! < 0x30 || b[k]! > 0x39) return false;
  return true;
}

/** True when the name [at, end) is among `names` (pairs of start and end), compared as bytes. */
function seen(b: Buffer, names: readonly number[], at: number, end: number): boolean {
  const length = end - at;
  for (let k = 0; k < names.length; k += 2) {
    const from = names[k]!;
    if (names[k + 1]! - from !== length) continue;
    let j = 1;
    while (j < length && b[from + j] === b[at + j]) j++;
    if (j === length) return true;
  }
  return false;
}
