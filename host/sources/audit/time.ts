// Audit event time: the event's `stageTimestamp` parsed as Go's time.RFC3339Nano
// ("2006-01-02T15:04:05.999999999Z07:00"), as the k8saudit plugin stamps events
// (plugins:plugins/k8saudit/pkg/k8saudit/source.go parseSingleAuditEventJSON).
import { getPath, type Json } from './json-value.js';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** The decimal value of b[at, at+n) when every byte is a digit 0-9, else -1. */
function digits(b: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = b[i]! - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

const DASH = 0x2d;
const COLON = 0x3a;
const PLUS = 0x2b;

/**
 * Nanoseconds since the epoch of the RFC 3339 timestamp in b[from, to) (its UTF-8 bytes), or
 * undefined: `YYYY-MM-DDTHH:MM:SS[.digits](Z|+HH:MM|-HH:MM)` read byte by byte (one per event on
 * the webhook path, where it is read from the body without a string in between).
 */
export function parseRfc3339NanoBytes(b: Uint8Array, from: number, to: number): bigint | undefined {
  if (to - from < 20 || b[from + 4] !== DASH || b[from + 7] !== DASH || b[from + 10] !== 0x54 || b[from + 13] !== COLON || b[from + 16] !== COLON) return undefined;
  const y = digits(b, from, 4);
  const mo = digits(b, from + 5, 2);
  const d = digits(b, from + 8, 2);
  const h = digits(b, from + 11, 2);
  const mi = digits(b, from + 14, 2);
  const s = digits(b, from + 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) return undefined;
  const dim = mo === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[mo - 1]!;
  if (d > dim) return undefined;
  let i = from + 19;
  // Go keeps the first nine fractional digits.
  let frac = 0;
  if (b[i] === 0x2e) {
    const start = ++i;
    while (i < to && b[i]! >= 0x30 && b[i]! <= 0x39) {
      if (i - start < 9) frac = frac * 10 + (b[i]! - 0x30);
      i++;
    }
    if (i === start) return undefined;
    for (let k = Math.min(i - start, 9); k < 9; k++) frac *= 10;
  }
  let offset = 0;
  const c = b[i];
  if (c === 0x5a && i + 1 === to) {
    // UTC
  } else if ((c === PLUS || c === DASH) && i + 6 === to && b[i + 3] === COLON) {
    const oh = digits(b, i + 1, 2);
    const om = digits(b, i + 4, 2);
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return undefined;
    offset = (c === DASH ? -1 : 1) * (oh * 3600 + om * 60);
  } else {
    return undefined;
  }
  const seconds = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset;
  return BigInt(seconds) * 1_000_000_000n + BigInt(frac);
}

/** Bytes of the texts parseRfc3339Nano reads (a timestamp is some 30 characters; a longer text gets its own). */
const scratch = new Uint8Array(64);

/** parseRfc3339NanoBytes of a text: every character of a timestamp is ASCII, so any other makes it none. */
export function parseRfc3339Nano(text: string): bigint | undefined {
  const n = text.length;
  const b = n <= scratch.length ? scratch : new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return undefined;
    b[i] = c;
  }
  return parseRfc3339NanoBytes(b, 0, n);
}

/** The `stageTimestamp` of an audit event in nanoseconds since the epoch, or undefined. */
export function stageTimestampNs(json: Json): bigint | undefined {
  const ts = getPath(json, 'stageTimestamp');
  return typeof ts === 'string' ? parseRfc3339Nano(ts) : undefined;
}
