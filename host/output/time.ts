// Event times as bigint nanoseconds since the epoch, in the three forms alerts use
// (reference/falco-language.md D.3/D.4): the text prefix `HH:MM:SS.nnnnnnnnn` in the process's
// local time zone, the JSON `time` `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` in UTC, and the RFC 3339
// parser the forwarder applies to `POST /` bodies (Go's time.Time JSON decoding: a zone is
// required, fractional seconds optional).

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

/** Go's zero time.Time (0001-01-01T00:00:00Z) in ns since the epoch; falcosidekick rejects it. */
export const GO_ZERO_TIME_NS = -62_135_596_800n * NS_PER_S;

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function split(ns: bigint): { date: Date; frac: string } {
  const ms = floorDiv(ns, NS_PER_MS);
  const fracNs = ns - floorDiv(ns, NS_PER_S) * NS_PER_S;
  return { date: new Date(Number(ms)), frac: fracNs.toString().padStart(9, '0') };
}

/** `HH:MM:SS.nnnnnnnnn` in local time (Falco's `%evt.time`). */
export function localClock(ns: bigint): string {
  const { date, frac } = split(ns);
  return `${pad(date.getHours(), 2)}:${pad(date.getMinutes(), 2)}:${pad(date.getSeconds(), 2)}.${frac}`;
}

/** `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` in UTC (Falco's JSON `time`). */
export function rfc3339Nano(ns: bigint): string {
  const { date, frac } = split(ns);
  const y = date.getUTCFullYear();
  const year = y >= 0 && y <= 9999 ? pad(y, 4) : String(y);
  return `${year}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` + `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}.${frac}Z`;
}

/** The current time in ns since the epoch (millisecond resolution). */
export function nowNs(): bigint {
  return BigInt(Date.now()) * NS_PER_MS;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/** Parses an RFC 3339 date-time with a zone into ns since the epoch; undefined if it is not one. */
export function parseRfc3339(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, min, sec] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || min > 59 || sec > 59) return undefined;
  let offsetMin = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, min, sec, 0);
  const frac = BigInt((m[7] ?? '').slice(0, 9).padEnd(9, '0'));
  return BigInt(d.getTime()) * NS_PER_MS + frac - BigInt(offsetMin) * 60n * NS_PER_S;
}

/** Seconds per unit of a duration (falcosidekick-ui's `since` and TTL: M is 30 days, y 365). */
const DURATION_UNITS: Record<string, number> = {
  s: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
  w: 604_800,
  week: 604_800,
  weeks: 604_800,
  M: 2_592_000,
  month: 2_592_000,
  months: 2_592_000,
  y: 31_536_000,
  year: 31_536_000,
  years: 31_536_000,
};

/** A duration as falcosidekick-ui writes one (`30s`, `5min`, `2d`, `1M`, `2y`, or bare seconds) in seconds; undefined if it is not one. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,9})([A-Za-z]*)$/.exec(text.trim());
  if (!m) return undefined;
  const unit = m[2] === '' ? 1 : DURATION_UNITS[m[2]!];
  return unit === undefined ? undefined : Number(m[1]) * unit;
}
