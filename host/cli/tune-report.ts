// The analysis behind `rae tune` (tune.ts). Consumes alerts (Falco's JSON layout, parsed) and
// produces, for the noisiest rules, their alerts per hour, the combinations of output-field values
// that repeat most, and a Falco rules snippet: per rule an `exceptions:` entry with
// `override: exceptions: append` (selective overrides, Falco 0.37 on: falco#2981; the layout 0.45 documents) whose one row of
// values is the top combination, so the rule stops matching exactly that combination.
//
// Which fields make a combination: the rule's output fields that an exception can compare with
// `=` (a known, non-list field of the rule's source taking no argument, not a time or a buffer)
// and that hold a scalar in every alert of the rule; fields whose value is different in more than
// half the alerts (a pid, a port) are left out, since no exception on them would repeat. Alerts
// are grouped on the same fields the exception compares, so the exception matches the
// combination's alerts and no other alert of the input.
import { lookupField, SOURCES, type Source } from '../engine/index.js';
import type { Alert, OutputFieldValue } from '../output/alert.js';

/** One repeating combination of a rule's output-field values. */
interface Combination {
  values: Array<string | number | boolean>;
  count: number;
}

/** One rule of the report. */
interface RuleNoise {
  rule: string;
  source: string;
  alerts: number;
  /** Alerts per hour over the input's time span; undefined when the span is unknown (one instant). */
  perHour: number | undefined;
  /** The fields of every combination, in the order of the first alert's output_fields (sorted in Falco JSON); [] when none fits an exception. */
  fields: string[];
  /** Most repeated first. */
  combinations: Combination[];
}

/** The whole report. */
export interface TuneReport {
  alerts: number;
  /** From the first to the last alert's time, in seconds. */
  spanSeconds: number;
  rules: RuleNoise[];
}

/** Field types an exception's `=` compares by their printed value. */
const COMPARABLE = /^PT_(CHARBUF|FSPATH|FSRELPATH|BOOL|U?INT\d+|PORT|IPADDR)$/;
const TRUNCATED = '…(truncated';

function exceptionField(source: string, name: string): boolean {
  if (!(SOURCES as readonly string[]).includes(source)) return false;
  const d = lookupField(source as Source, name);
  return d !== undefined && !d.isList && d.arg !== 'required' && COMPARABLE.test(d.type);
}

function scalar(v: OutputFieldValue | undefined): v is string | number | boolean {
  return (typeof v === 'string' && !v.includes(TRUNCATED)) || typeof v === 'number' || typeof v === 'boolean';
}

/** The fields a rule's combinations are made of (see the file header). */
function combinationFields(alerts: readonly Alert[]): string[] {
  const first = alerts[0]!;
  return Object.keys(first.outputFields).filter((f) => {
    if (!exceptionField(first.source, f)) return false;
    const seen = new Set<string | number | boolean>();
    for (const a of alerts) {
      const v = a.outputFields[f];
      if (!scalar(v)) return false;
      seen.add(v);
    }
    return seen.size === 1 || seen.size * 2 <= alerts.length;
  });
}

/** Ranks the rules of `alerts` by alert count (the same order as alerts per hour) and finds their repeating combinations. */
export function tuneReport(alerts: readonly Alert[], opts: { top: number; combinations: number }): TuneReport {
  const byRule = new Map<string, Alert[]>();
  let min = 0n;
  let max = 0n;
  for (const a of alerts) {
    if (min === 0n || a.timeNs < min) min = a.timeNs;
    if (a.timeNs > max) max = a.timeNs;
    if (a.source === 'internal') continue; // the engine's own alerts: no rule to tune
    const list = byRule.get(a.rule);
    if (list) list.push(a);
    else byRule.set(a.rule, [a]);
  }
  const spanSeconds = Number(max - min) / 1e9;
  const ranked = [...byRule.values()].sort((x, y) => y.length - x.length || (x[0]!.rule < y[0]!.rule ? -1 : 1)).slice(0, opts.top);
  const rules = ranked.map((list): RuleNoise => {
    const fields = combinationFields(list);
    const groups = new Map<string, Combination>();
    for (const a of list) {
      const values = fields.map((f) => a.outputFields[f] as string | number | boolean);
      const id = JSON.stringify(values);
      const g = groups.get(id);
      if (g) g.count++;
      else groups.set(id, { values, count: 1 });
    }
    const combinations = [...groups.values()].sort((x, y) => y.count - x.count).slice(0, opts.combinations);
    return { rule: list[0]!.rule, source: list[0]!.source, alerts: list.length, perHour: spanSeconds > 0 ? (list.length * 3600) / spanSeconds : undefined, fields, combinations };
  });
  return { alerts: alerts.length, spanSeconds, rules };
}

/** A YAML double-quoted scalar (JSON's string syntax is YAML's). */
const q = (v: string | number | boolean) => JSON.stringify(String(v));

/** The exception's name: its fields, so a second run on the same fields appends to the same exception. */
function exceptionName(fields: readonly string[]): string {
  return `rae_tune_${fields.map((f) => f.replace(/[^A-Za-z0-9]+/g, '_')).join('__')}`;
}

/** The rules snippet that silences each rule's top combination (only combinations that repeat). */
export function exceptionsSnippet(report: TuneReport): string {
  const blocks: string[] = [];
  for (const r of report.rules) {
    const top = r.combinations[0];
    if (!top || top.count < 2 || r.fields.length === 0) continue;
    blocks.push(
      [
        `# ${r.rule}: silences ${top.count} of its ${r.alerts} alerts`,
        `- rule: ${q(r.rule)}`,
        '  exceptions:',
        `    - name: ${exceptionName(r.fields)}`,
        `      fields: [${r.fields.join(', ')}]`,
        `      comps: [${r.fields.map(() => '=').join(', ')}]`,
        '      values:',
        `        - [${top.values.map(q).join(', ')}]`,
        '  override:',
        '    exceptions: append',
      ].join('\n'),
    );
  }
  return blocks.join('\n\n');
}

const rate = (perHour: number | undefined) => (perHour === undefined ? 'n/a' : perHour >= 10 ? perHour.toFixed(0) : perHour.toPrecision(2));

/** The report as `#` comment lines (so the whole output of `rae tune` is a rules file). */
export function reportComments(report: TuneReport): string {
  const lines = [`# rae tune: ${report.alerts} alerts over ${report.spanSeconds.toFixed(1)} s; the ${report.rules.length} noisiest rules:`];
  for (const r of report.rules) {
    lines.push('#', `# ${r.rule} (${r.source}): ${r.alerts} alerts, ${rate(r.perHour)} per hour`);
    if (r.fields.length === 0) {
      lines.push('#   no output field an exception can compare repeats across its alerts');
      continue;
    }
    lines.push(`#   repeating combinations of ${r.fields.join(', ')}:`);
    for (const c of r.combinations) lines.push(`#   ${String(c.count).padStart(7)}  ${c.values.map((v, i) => `${r.fields[i]}=${String(v)}`).join(' ')}`);
  }
  return lines.join('\n');
}
