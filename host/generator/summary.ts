// The table that ends `rae event-generator run`: one row per action over every round of the run
// (a --loop run repeats them), with its rule's set, how often it was performed, whether its rule
// fired (detect.ts) and why it was not performed. Consumes outcomes; produces text.
import type { RuleMaturity } from './rule-sets.js';
import type { ActionOutcome } from './types.js';

/** One action over a whole run. */
export interface ActionTally {
  action: string;
  rule: string;
  maturity: RuleMaturity;
  performed: number;
  failed: number;
  /** Why it cannot work here (the last round's answer). */
  unavailable?: string;
  /** The last failure. */
  failure?: string;
}

/** Outcomes of a run, tallied per action in the order they first ran. */
export class RunTally {
  private readonly byAction = new Map<string, ActionTally>();
  rounds = 0;

  add(o: ActionOutcome): void {
    let t = this.byAction.get(o.action);
    if (!t) this.byAction.set(o.action, (t = { action: o.action, rule: o.rule, maturity: o.maturity, performed: 0, failed: 0 }));
    if (o.status === 'performed') t.performed++;
    else if (o.status === 'failed') {
      t.failed++;
      t.failure = o.reason;
    } else t.unavailable = o.reason;
  }

  rows(): ActionTally[] {
    return [...this.byAction.values()];
  }

  /** The rules of the actions performed at least once. */
  performedRules(): Set<string> {
    return new Set(
      this.rows()
        .filter((t) => t.performed > 0)
        .map((t) => t.rule),
    );
  }
}

/** What is known about detection: the rules that fired, or why that cannot be told. */
export type Detection = { fired: ReadonlySet<string> } | { unobservable: string };

function detectedCell(t: ActionTally, d: Detection): string {
  if (t.performed === 0) return '-';
  if ('unobservable' in d) return '?';
  return d.fired.has(t.rule) ? 'yes' : 'NO';
}

function statusCell(t: ActionTally): string {
  if (t.failed > 0) return `FAILED x${t.failed}${t.performed > 0 ? `, performed x${t.performed}` : ''}`;
  if (t.performed > 0) return `performed x${t.performed}`;
  return 'unavailable';
}

/** The table, a line per action, then the totals. */
export function renderTable(tally: RunTally, detection: Detection): string {
  const rows = tally.rows();
  const header = ['ACTION', 'SET', 'STATUS', 'DETECTED', 'RULE / REASON'];
  const cells = rows.map((t) => [t.action, t.maturity, statusCell(t), detectedCell(t, detection), t.failure ?? t.unavailable ?? t.rule]);
  const width = header.slice(0, 4).map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `${c.map((x, i) => (i < 4 ? x.padEnd(width[i]!) : x)).join('  ')}\n`;
  const performed = rows.filter((t) => t.performed > 0);
  const detected = 'fired' in detection ? performed.filter((t) => detection.fired.has(t.rule)).length : undefined;
  const unavailable = rows.filter((t) => t.performed === 0 && t.failed === 0);
  const failed = rows.filter((t) => t.failed > 0);
  let out = line(header) + cells.map(line).join('');
  out += `${rows.length} action(s) in ${tally.rounds} round(s): ${performed.length} performed, `;
  out += detected === undefined ? `detection unknown (${'unobservable' in detection ? detection.unobservable : ''}), ` : `${detected} detected, `;
  out += `${unavailable.length} unavailable, ${failed.length} failed\n`;
  return out;
}
