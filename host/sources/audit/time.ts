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

/** The decimal value of text[at, at+n) when every character is a digit 0-9, else -1. */
function digits(text: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = text.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * Nanoseconds since the epoch of an RFC 3339 timestamp with optional fraction, or undefined:
 * `YYYY-MM-DDTHH:MM:SS[.digits](Z|+HH:MM|-HH:MM)` read character by character (one per event
 * on the webhook path, so no regular expression or substring per field).
 */
export function parseRfc3339Nano(text: string): bigint | undefined {
  const n = text.length;
  if (n < 20 || text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':') return undefined;
  const y = digits(text, 0, 4);
  const mo = digits(text, 5, 2);
  const d = digits(text, 8, 2);
  const h = digits(text, 11, 2);
  const mi = digits(text, 14, 2);
  const s = digits(text, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) return undefined;
  const dim = mo === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[mo - 1]!;
  if (d > dim) return undefined;
  let i = 19;
  // Go keeps the first nine fractional digits.
  let frac = 0;
  if (text[i] === '.') {
    const from = ++i;
    while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) {
      if (i - from < 9) frac = frac * 10 + (text.charCodeAt(i) - 0x30);
      i++;
    }
    if (i === from) return undefined;
    for (let k = Math.min(i - from, 9); k < 9; k++) frac *= 10;
  }
  let offset = 0;
  if (text[i] === 'Z' && i + 1 === n) {
    // UTC
  } else if ((text[i] === '+' || text[i] === '-') && i + 6 === n && text[i + 3] === ':') {
    const oh = digits(text, i + 1, 2);
    const om = digits(text, i + 4, 2);
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return undefined;
    offset = (text[i] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  } else {
    return undefined;
  }
  const seconds = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset;
  return BigInt(seconds) * 1_000_000_000n + BigInt(frac);
}

/** The `stageTimestamp` of an audit event in nanoseconds since the epoch, or undefined. */
export function stageTimestampNs(json: Json): bigint | undefined {
  const ts = getPath(json, 'stageTimestamp');
  return typeof ts === 'string' ? parseRfc3339Nano(ts) : undefined;
}
