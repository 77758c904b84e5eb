// Runs one boundary's fuzz property with fast-check and reports it as data: the tests run each
// target with a fixed seed and a few runs (npm test), the `fuzz` bench scenario the same targets
// for longer. A target's property returns nothing and throws on a violation, with what was sent.
import fc from 'fast-check';

/** What one fuzz run found. */
export interface FuzzReport {
  target: string;
  seed: number;
  /** Cases tried (fast-check's runs, the failing one included). */
  cases: number;
  /** Cases that broke the property (fast-check stops at the first). */
  failures: number;
  /** Events (alerts, records, resources) the boundary accepted over all cases: the property is not vacuous. */
  accepted?: number;
  /** The first failing case and why, cut to a readable length. */
  counterexample?: string;
}

/** Bounds of one run: a seed, at most `numRuns` cases, and at most `timeMs` of wall time. */
export interface FuzzBounds {
  seed: number;
  numRuns: number;
  timeMs?: number;
}

const cut = (s: string, n = 600) => (s.length > n ? `${s.slice(0, n)}... (${s.length} chars)` : s);

/** Checks `property` over `arbitrary` within the bounds; never throws for a failing case. */
export async function runFuzz<T>(target: string, arbitrary: fc.Arbitrary<T>, property: (value: T) => Promise<void>, bounds: FuzzBounds): Promise<FuzzReport> {
  const details = await fc.check(fc.asyncProperty(arbitrary, property), {
    seed: bounds.seed,
    numRuns: bounds.numRuns,
    endOnFailure: true,
    ...(bounds.timeMs !== undefined ? { plugins: [fc.interruptAfterTimeLimit(bounds.timeMs)] } : {}),
  });
  const report: FuzzReport = { target, seed: bounds.seed, cases: details.numRuns, failures: details.failed ? 1 : 0 };
  if (details.failed) {
    const why = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    report.counterexample = cut(`${why} <- ${fc.stringify(details.counterexample)}`);
  }
  return report;
}

/** Bytes that are not UTF-8 (a lone continuation byte, a truncated sequence, a surrogate, an overlong form). */
export const INVALID_UTF8: readonly number[][] = [[0xff], [0x80], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80]];
