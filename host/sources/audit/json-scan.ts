// JSON over bytes for the audit webhook's byte decoder (webhook.decoder: bytes): a validator that
// accepts exactly the texts JSON.parse accepts (given UTF-8 input, which the caller checks
// natively with isUtf8), whole (validJson) or one value at a time (validValue, validString, for
// the decoder's one-pass walk), and, over text it validated, the few walks the decoder needs:
// skipping a value (with its nesting depth), and the members of an object. Nothing here builds a JavaScript
// value; positions are byte offsets into the body. The walks trust their input: they are only
// called on a body validJson accepted. Iterative throughout, so no nesting overflows the stack.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isBlank = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) => c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));

/** The first index at or after `i` that is not JSON whitespace. */
export function skipBlanks(b: Uint8Array, i: number): number {
  while (isBlank(b[i])) i++;
  return i;
}

/** Whether the last string validString accepted holds an escape. */
export let stringEscaped = false;

/** Index just past the valid string whose quote is at `i`, or -1 (raw control character, bad escape, no end); sets stringEscaped. */
export function validString(b: Uint8Array, i: number): number {
  const n = b.length;
  stringEscaped = false;
  i++;
  for (;;) {
    // The plain run: most string bytes are above the quote and not a backslash (one test each).
    let c = 0;
    while (i < n && (c = b[i]!) > QUOTE && c !== BACKSLASH) i++;
    if (i >= n) return -1;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) {
      i++; // a space or '!'
      continue;
    }
    stringEscaped = true;
    const e = b[i + 1];
    if (e === 0x75 /* u */) {
      if (!isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5])) return -1;
      i += 6;
    } else if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
      i += 2;
    } else {
      return -1;
    }
  }
}

/** Index just past the valid number starting at `i` (RFC 8259 §6), or -1. */
function validNumber(b: Uint8Array, i: number): number {
  if (b[i] === 0x2d /* - */) i++;
  if (b[i] === 0x30) i++;
  else if (isDigit(b[i])) while (isDigit(b[i])) i++;
  else return -1;
  if (b[i] === 0x2e /* . */) {
    i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  if (b[i] === 0x65 || b[i] === 0x45 /* e E */) {
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  return i;
}

/** Index just past the literal `word` (its bytes) at `i`, or -1. */
function validLiteral(b: Uint8Array, i: number, word: readonly number[]): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
  return i + word.length;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

/** Index just past a valid scalar (string, number, literal) at `i`, or -1. */
function validScalar(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === QUOTE) return validString(b, i);
  if (c === 0x74) return validLiteral(b, i, TRUE);
  if (c === 0x66) return validLiteral(b, i, FALSE);
  if (c === 0x6e) return validLiteral(b, i, NULL);
  return validNumber(b, i);
}

/** Where the members of the top-level object the webhook reads start (the last of each name; -1 when absent). */
export interface TopMembers {
  kind: number;
  items: number;
  auditID: number;
  /** A top-level member name is written with escapes (the offsets above may miss it). */
  escaped: boolean;
}

/** Notes the top-level member whose name's quote is at `at` (its value starts at `valueAt`). */
function noteTop(b: Uint8Array, at: number, valueAt: number, top: TopMembers): void {
  const end = stringEnd(b, at);
  if (hasEscape(b, at + 1, end - 1)) top.escaped = true;
  else if (nameIs(b, at, end, 'kind')) top.kind = valueAt;
  else if (nameIs(b, at, end, 'items')) top.items = valueAt;
  else if (nameIs(b, at, end, 'auditID')) top.auditID = valueAt;
}

/** The deepest nesting met by the last validValue (as skippedDepth: 0 for a scalar). */
export let validDepth = 0;

/** Open containers of validValue, innermost last (1: an object), reused between calls. */
let open = new Uint8Array(64);

/**
 * Index just past the valid JSON value at `i` (what JSON.parse accepts there, given UTF-8
 * input), or -1; sets validDepth. Iterative: no nesting overflows the stack.
 */
export function validValue(b: Uint8Array, i: number): number {
  const c0 = b[i];
  if (c0 !== OPEN_OBJECT && c0 !== OPEN_ARRAY) {
    validDepth = 0;
    return validScalar(b, i);
  }
  let depth = 0;
  let deepest = 0;
  for (;;) {
    // A value at i.
    const c = b[i];
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const object = c === OPEN_OBJECT;
      i = skipBlanks(b, i + 1);
      if (depth + 1 > deepest) deepest = depth + 1;
      if (b[i] === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        i++;
      } else {
        if (depth === open.length) {
          const grown = new Uint8Array(open.length * 2);
          grown.set(open);
          open = grown;
        }
        open[depth++] = object ? 1 : 0;
        if (object && (i = memberName(b, i)) < 0) return -1;
        continue;
      }
    } else {
      i = validScalar(b, i);
      if (i < 0) return -1;
    }
    // After a value: close containers until one goes on with a comma.
    for (;;) {
      if (depth === 0) {
        validDepth = deepest;
        return i;
      }
      i = skipBlanks(b, i);
      const object = open[depth - 1] === 1;
      const c2 = b[i];
      if (c2 === COMMA) {
        i = skipBlanks(b, i + 1);
        if (object && (i = memberName(b, i)) < 0) return -1;
        break;
      }
      if (c2 !== (object ? CLOSE_OBJECT : CLOSE_ARRAY)) return -1;
      depth--;
      i++;
    }
  }
}

/**
 * True when the bytes are one JSON text: what JSON.parse accepts (the caller has checked the
 * bytes are UTF-8; a byte order mark is refused, as JSON.parse refuses U+FEFF). When the text is
 * an object, `top` gets where the members the webhook reads start, in the same walk.
 */
export function validJson(b: Uint8Array, top?: TopMembers): boolean {
  let i = skipBlanks(b, 0);
  if (top === undefined || b[i] !== OPEN_OBJECT) {
    i = validValue(b, i);
    return i >= 0 && skipBlanks(b, i) === b.length;
  }
  i = skipBlanks(b, i + 1);
  if (b[i] !== CLOSE_OBJECT) {
    for (;;) {
      const valueAt = memberName(b, i);
      if (valueAt < 0) return false;
      noteTop(b, i, valueAt, top);
      i = validValue(b, valueAt);
      if (i < 0) return false;
      i = skipBlanks(b, i);
      if (b[i] !== COMMA) break;
      i = skipBlanks(b, i + 1);
    }
    if (b[i] !== CLOSE_OBJECT) return false;
  }
  return skipBlanks(b, i + 1) === b.length;
}

/** Past a member's `"name" :` and the blanks after it (the value's start), or -1. */
export function memberName(b: Uint8Array, i: number): number {
  if (b[i] !== QUOTE) return -1;
  i = validString(b, i);
  if (i < 0) return -1;
  i = skipBlanks(b, i);
  if (b[i] !== COLON) return -1;
  return skipBlanks(b, i + 1);
}

/** Index just past the string whose quote is at `i` (valid text). */
export function stringEnd(b: Uint8Array, i: number): number {
  i++;
  for (;;) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    i += c === BACKSLASH ? 2 : 1;
  }
}

/** Index just past the value starting at `i` (valid text). */
export function skipValue(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
    // A number or literal ends at a delimiter or a blank.
    let k = i + 1;
    for (let d = b[k]; d !== undefined && d !== COMMA && d !== CLOSE_OBJECT && d !== CLOSE_ARRAY && !isBlank(d); d = b[++k]);
    return k;
  }
  let depth = 0;
  for (;;) {
    const d = b[i]!;
    if (d === QUOTE) {
      i = stringEnd(b, i);
      continue;
    }
    if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
    else if ((d === CLOSE_OBJECT || d === CLOSE_ARRAY) && --depth === 0) return i + 1;
    i++;
  }
}

/** True when the bytes [from, to) hold a backslash (a string spelled with escapes). */
export function hasEscape(b: Uint8Array, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (b[k] === BACKSLASH) return true;
  return false;
}

/** True when the string whose quote is at `at` and which ends before `end` is exactly the ASCII `name`. */
export function nameIs(b: Uint8Array, at: number, end: number, name: string): boolean {
  if (end - at - 2 !== name.length) return false;
  for (let k = 0; k < name.length; k++) if (b[at + 1 + k] !== name.charCodeAt(k)) return false;
  return true;
}
