// Durations as upstream's event-generator takes them (Go's time.ParseDuration: "100ms", "1s",
// "1m30s", "1.5h"; units ns, us/µs, ms, s, m, h), and a bare whole number as milliseconds, as
// `rae event-generator --sleep MS` always took it. Produces milliseconds.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of `text`, or undefined when it is not a duration (negative durations are refused). */
export function parseDurationMs(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  if (text === '0') return 0;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let ms = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (!m) return undefined;
    ms += Number(m[1]) * UNIT_MS[m[2]!]!;
    at = part.lastIndex;
  }
  return at === 0 ? undefined : ms;
}
