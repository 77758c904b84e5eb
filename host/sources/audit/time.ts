// Audit event time: the event's `stageTimestamp` parsed as Go's time.RFC3339Nano
// ("2006-01-02T15:04:05.999999999Z07:00"), as the k8saudit plugin stamps events
// (plugins:plugins/k8saudit/pkg/k8saudit/source.go parseSingleAuditEventJSON).
import { getPath, type Json } from './json-value.js';

const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(Z|[+-][0-9]{2}:[0-9]{2})$/;
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

/** Nanoseconds since the epoch of an RFC 3339 timestamp with optional fraction, or undefined. */
export function parseRfc3339Nano(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59) return undefined;
  const dim = mo === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[mo - 1]!;
  if (d < 1 || d > dim) return undefined;
  let offset = 0;
  const zone = m[8]!;
  if (zone !== 'Z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offset = (zone[0] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  // Go keeps the first nine fractional digits.
  const frac = BigInt((m[7] ?? '').slice(0, 9).padEnd(9, '0'));
  const seconds = BigInt(daysFromCivil(y, mo, d)) * 86400n + BigInt(h * 3600 + mi * 60 + s - offset);
  return seconds * 1_000_000_000n + frac;
}

/** The `stageTimestamp` of an audit event in nanoseconds since the epoch, or undefined. */
export function stageTimestampNs(json: Json): bigint | undefined {
  const ts = getPath(json, 'stageTimestamp');
  return typeof ts === 'string' ? parseRfc3339Nano(ts) : undefined;
}
