// Raw field bytes carried in JS strings (Falco 0.45, libs#3051: conditions compare a field's raw
// bytes, whatever their encoding). Consumes byte strings (kernel paths, command lines, `\xHH`
// escapes) and produces JS strings that keep every byte, and back.
//
// The encoding is Python's "surrogateescape" (PEP 383): valid UTF-8 decodes as usual; each byte
// that is not part of a valid UTF-8 sequence becomes the lone low surrogate U+DC00 + byte
// (U+DC80..U+DCFF). It is a bijection between byte strings and the strings it produces, so
// string equality is byte equality, and a needle of valid UTF-8 is found in a value's string
// exactly where its bytes are found in the value's bytes (UTF-8 synchronises on every lead byte).
// Valid text (every string that has no lone surrogate) encodes as plain UTF-8: rule files,
// audit events and field events are unchanged by it.
//
// Two views for what sees text rather than bytes, both as Falco 0.45 gives them: `regex` runs on
// the value with each invalid UTF-8 sequence replaced by U+FFFD (utf8Sanitized), and output
// encodes invalid sequences as U+FFFD too (WHATWG's decoder: one U+FFFD per maximal subpart).
import { isUtf8 } from 'node:buffer';

const ESCAPE_BASE = 0xdc00;
/** A lone low surrogate of the escape range, not preceded by a high surrogate. */
const ESCAPED = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;
const ESCAPED_RUN = /(?:(?<![\uD800-\uDBFF])[\uDC80-\uDCFF])+/g;
const lenient = new TextDecoder('utf-8', { fatal: false });
/** ES2024's well-formedness methods (Node 20 has them; the TypeScript lib here predates them). */
const wellFormed = String.prototype as unknown as { isWellFormed(this: string): boolean; toWellFormed(this: string): string };
const encoder = new TextEncoder();

/** Bytes of a valid UTF-8 sequence starting at b[i] (0 when none starts there), RFC 3629's table. */
function seqLength(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf; // ED A0..BF would be a surrogate
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const lo = c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** The string of raw bytes: UTF-8 decoded, each byte outside a valid sequence as U+DC00 + byte. */
export function decodeRaw(bytes: Uint8Array): string {
  if (isUtf8(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let out = '';
  let run = 0;
  for (let i = 0; i < bytes.length; ) {
    const n = seqLength(bytes, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += Buffer.from(bytes.buffer, bytes.byteOffset + run, i - run).toString('utf8') + String.fromCharCode(ESCAPE_BASE + bytes[i]!);
    i++;
    run = i;
  }
  return out + Buffer.from(bytes.buffer, bytes.byteOffset + run, bytes.length - run).toString('utf8');
}

/** True when `s` carries raw bytes that are not valid UTF-8 (escaped by decodeRaw or a `\xHH`). */
export function hasRawBytes(s: string): boolean {
  return !wellFormed.isWellFormed.call(s) && ESCAPED.test(s);
}

/** The bytes of a string: UTF-8, each escaped byte (U+DC80..U+DCFF) as itself; other lone surrogates as U+FFFD, as TextEncoder does. */
export function encodeRaw(s: string): Uint8Array {
  if (!hasRawBytes(s)) return encoder.encode(s);
  const out: number[] = [];
  let run = 0;
  ESCAPED_RUN.lastIndex = 0;
  for (let m = ESCAPED_RUN.exec(s); m; m = ESCAPED_RUN.exec(s)) {
    for (const b of encoder.encode(s.slice(run, m.index))) out.push(b);
    for (let k = 0; k < m[0].length; k++) out.push(m[0].charCodeAt(k) - ESCAPE_BASE);
    run = m.index + m[0].length;
  }
  for (const b of encoder.encode(s.slice(run))) out.push(b);
  return Uint8Array.from(out);
}

/** A byte as its raw string: the character for ASCII, an escape for 0x80..0xFF. */
export function rawByte(b: number): string {
  return String.fromCharCode(b < 0x80 ? b : ESCAPE_BASE + b);
}

/**
 * Text for what reads characters (`regex`, output encoders): every run of escaped bytes replaced
 * as WHATWG's UTF-8 decoder replaces it (one U+FFFD per maximal invalid subpart), other lone
 * surrogates by U+FFFD. Valid text is returned as it is.
 */
export function utf8Sanitized(s: string): string {
  if (wellFormed.isWellFormed.call(s)) return s;
  return wellFormed.toWellFormed.call(s.replace(ESCAPED_RUN, (run) => lenient.decode(Uint8Array.from(run, (c) => c.charCodeAt(0) - ESCAPE_BASE))));
}
