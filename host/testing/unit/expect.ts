// Expected alerts against the alerts a test's events raised: a list of readable differences
// (empty: the test passed). Consumes ExpectedAlerts and Alerts; produces the diff lines.
import { parsePriority } from '../../engine/priority.js';
import type { Alert } from '../../output/alert.js';
import type { ExpectedAlert } from './format.js';

/** A value as the diff prints it and compares it: JSON, bigint as its digits. */
function shown(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x)) ?? 'undefined';
}

/** Whether an output field holds the expected value: equal JSON, or equal text for two scalars (`"3"` and 3). */
function sameValue(expected: unknown, got: unknown): boolean {
  if (shown(expected) === shown(got)) return true;
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean';
  return scalar(expected) && scalar(got) && String(expected) === String(got);
}

/** One alert as the diff lists it. */
export function describeAlert(a: Alert): string {
  return `${a.rule} (${a.priority}, ${a.source}): ${a.message}`;
}

/** What differs between one expected alert and the alert in its place. */
function alertDifferences(e: ExpectedAlert, a: Alert): string[] {
  const out: string[] = [];
  if (e.rule !== a.rule) out.push(`rule: expected '${e.rule}', got '${a.rule}'`);
  if (e.priority !== undefined && parsePriority(e.priority) !== a.priority) out.push(`priority: expected ${e.priority}, got ${a.priority}`);
  if (e.source !== undefined && e.source !== a.source) out.push(`source: expected ${e.source}, got ${a.source}`);
  for (const [field, value] of Object.entries(e.outputFields ?? {})) {
    if (!(field in a.outputFields)) out.push(`output field ${field}: expected ${shown(value)}, but the rule's output has no such field`);
    else if (!sameValue(value, a.outputFields[field])) out.push(`output field ${field}: expected ${shown(value)}, got ${shown(a.outputFields[field])}`);
  }
  return out;
}

/** The differences between the expected alerts and those raised, in order; [] when they agree. */
export function alertDiff(expected: readonly ExpectedAlert[], got: readonly Alert[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < Math.max(expected.length, got.length); i++) {
    const e = expected[i];
    const a = got[i];
    if (e && !a) out.push(`alert ${i + 1}: expected '${e.rule}'${e.priority ? ` (${e.priority})` : ''}, got no alert`);
    else if (!e && a) out.push(`alert ${i + 1}: not expected, got ${describeAlert(a)}`);
    else if (e && a) {
      const d = alertDifferences(e, a);
      if (d.length > 0) out.push(`alert ${i + 1} (${describeAlert(a)}):`, ...d.map((x) => `  ${x}`));
    }
  }
  return out;
}
