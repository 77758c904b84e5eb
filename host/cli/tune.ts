// `rae tune`: which rules flood, and an exception that would quiet each one. Consumes alert JSON
// lines (--input: Falco's layout, as `rae run` and Falco print them, the file destination writes
// them and `rae replay` produces them) or a running engine's /metrics (--url); produces the report
// as `#` comments and, from alert lines, an exceptions snippet, together a valid rules file on
// stdout (tune-report.ts). A running engine keeps no alerts to read back: its forwarder offers
// only counters, so --url ranks rules by alerts per hour and cannot see field combinations.
import { readFileSync } from 'node:fs';
import { parseAlertJson, type Alert } from '../output/alert.js';
import { parseCommandArgs, UsageError, type Command } from './command.js';
import { exceptionsSnippet, reportComments, tuneReport } from './tune-report.js';

const HELP = `Usage: rae tune --input FILE [--top N] [--combinations N]
       rae tune --url URL [--top N]

The noisiest rules by alerts per hour, each with the combinations of output-field values that
repeat most, and a Falco rules snippet: for each rule, an exceptions: entry (override: append)
that silences its top combination. stdout is a rules file (the report as # comments, then the
snippet): check it with 'rae validate -r RULES -r FILE' and see what it removes by replaying the
events with and without it ('rae replay -r RULES [-r FILE] --input EVENTS').

Options:
  -i, --input FILE        alert JSON lines, Falco's layout ('-' for standard input): rae run's or
                          Falco's stdout, the file output, rae replay's output; other lines are
                          counted and skipped
      --url URL           a running engine's forwarder (e.g. http://127.0.0.1:2801): ranks rules by
                          its alert counter over the process's uptime; no combinations (the engine
                          keeps no alerts; use its alert lines with --input for those)
      --top N             rules to report (default 5)
      --combinations N    combinations per rule (default 3)
  -h, --help              show this help

Exit status: 0 reported, 1 unreadable input or engine, 2 bad usage.

Example:
  rae replay -r rules.yaml --input events.jsonl > alerts.jsonl
  rae tune --input alerts.jsonl > tune.yaml && rae validate -r rules.yaml -r tune.yaml`;

function count(text: string | undefined, flag: string, dflt: number): number {
  if (text === undefined) return dflt;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number above 0, not '${text}'`);
  return n;
}

/** Reads alert lines; lines that are not a Falco alert (logs, blank) are counted, not fatal. */
function readAlerts(text: string): { alerts: Alert[]; skipped: number } {
  const alerts: Alert[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const p = parseAlertJson(line);
    if (p.ok) alerts.push(p.alert);
    else skipped++;
  }
  return { alerts, skipped };
}

/** Unescapes a Prometheus text label value. */
const labelValue = (s: string) => s.replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));

/** Alert counts per rule and source from the exposition text, and the process start time (s since the epoch) when exported. */
function alertCounts(text: string): { counts: Map<string, { rule: string; source: string; n: number }>; startSeconds: number | undefined } {
  const counts = new Map<string, { rule: string; source: string; n: number }>();
  let startSeconds: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('process_start_time_seconds ')) startSeconds = Number(line.split(' ')[1]);
    if (!line.startsWith('enginesecurity_enginesidekick_engine_events_total{')) continue;
    const end = line.lastIndexOf('}');
    const labels = new Map([...line.slice(line.indexOf('{') + 1, end).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, labelValue(m[2]!)]));
    const rule = labels.get('rule') ?? '';
    const source = labels.get('source') ?? '';
    if (source === 'internal') continue;
    const key = `${source}\0${rule}`;
    const c = counts.get(key) ?? { rule, source, n: 0 };
    c.n += Number(line.slice(end + 1).trim());
    counts.set(key, c);
  }
  return { counts, startSeconds };
}

async function fromUrl(url: string, top: number): Promise<number> {
  let text: string;
  try {
    const res = await fetch(new URL('/metrics', url));
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    text = await res.text();
  } catch (err) {
    process.stderr.write(`tune: cannot read ${url}/metrics: ${(err as Error).message}\n`);
    return 1;
  }
  const { counts, startSeconds } = alertCounts(text);
  const uptime = startSeconds === undefined ? undefined : Date.now() / 1000 - startSeconds;
  const ranked = [...counts.values()].sort((a, b) => b.n - a.n).slice(0, top);
  const lines = [`# rae tune: ${url}, alerts counted since the engine started${uptime === undefined ? ' (its start time is not exported: no rate)' : ` ${(uptime / 3600).toFixed(2)} h ago`}; the ${ranked.length} noisiest rules:`];
  for (const c of ranked) lines.push(`# ${c.rule} (${c.source}): ${c.n} alerts${uptime ? `, ${((c.n * 3600) / uptime).toFixed(1)} per hour` : ''}`);
  lines.push('# combinations and exceptions need the alert lines: rae tune --input (its stdout, or the file output)');
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

export const tuneCommand: Command = {
  name: 'tune',
  help: HELP,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { input: { type: 'string', short: 'i' }, url: { type: 'string' }, top: { type: 'string' }, combinations: { type: 'string' } });
    const top = count(values.top, '--top', 5);
    const combinations = count(values.combinations, '--combinations', 3);
    if ((values.input === undefined) === (values.url === undefined)) throw new UsageError('give one of --input FILE or --url URL');
    if (values.url !== undefined) return fromUrl(values.url, top);
    let text: string;
    try {
      text = readFileSync(values.input === '-' ? 0 : values.input!, 'utf8');
    } catch (err) {
      process.stderr.write(`tune: cannot read ${values.input}: ${(err as Error).message}\n`);
      return 1;
    }
    const { alerts, skipped } = readAlerts(text);
    if (skipped > 0) process.stderr.write(`tune: ${values.input}: ${skipped} line(s) skipped: not a Falco JSON alert\n`);
    const report = tuneReport(alerts, { top, combinations });
    const snippet = exceptionsSnippet(report);
    process.stdout.write(`${reportComments(report)}\n${snippet ? `\n${snippet}\n` : '#\n# no combination repeats: no exception proposed\n'}`);
    return 0;
  },
};
