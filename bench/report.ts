// Shared by the scenarios: print one figure as a JSON line on stdout, progress on stderr.

/** Prints one benchmark figure. */
export function figure(scenario: string, name: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ scenario, name, value: Number(value.toPrecision(6)), unit, ...extra })}\n`);
}

/** Prints a progress line on stderr. */
export function progress(msg: string): void {
  process.stderr.write(`  ${msg}\n`);
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The q-quantile (0..1) of a list of numbers, the nearest rank below. */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(q * (s.length - 1))]!;
}
