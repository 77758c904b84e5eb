// Rule priorities (reference/falco-language.md C): parsing is case-insensitive with `info` as an
// alias of Informational; the printed form is the long capitalised name.

/** Most to least severe; the index is Falco's numeric value (Emergency = 0 ... Debug = 7). */
export const PRIORITIES = ['Emergency', 'Alert', 'Critical', 'Error', 'Warning', 'Notice', 'Informational', 'Debug'] as const;

export type Priority = (typeof PRIORITIES)[number];

/** Parses a priority as Falco does; undefined for anything else ("Invalid priority"). */
export function parsePriority(text: string): Priority | undefined {
  const lower = text.toLowerCase();
  if (lower === 'info') return 'Informational';
  return PRIORITIES.find((p) => p.toLowerCase() === lower);
}

/** Falco's numeric severity: 0 for Emergency ... 7 for Debug. */
export function prioritySeverity(p: Priority): number {
  return PRIORITIES.indexOf(p);
}

/** falcosidekick's priority number: Debug = 1 ... Emergency = 8. */
export function priorityNumber(p: Priority): number {
  return 8 - PRIORITIES.indexOf(p);
}
