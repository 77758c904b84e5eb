// `rae replay`: evaluates recorded events against rules files with the reference interpreter and
// prints one Falco JSON alert line per detection on stdout, and a summary on stderr.
import { readFileSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { type LoadedRule, type LoadResult, loadRules, renderDiagnostic, type RuleMatching, type SourceEvent } from '../engine/index.js';
import { parsePriority, type Priority } from '../engine/priority.js';
import { alertJson } from '../output/alert.js';
import { alertFor } from '../output/from-match.js';
import { readReplayInput, type ReplayFormat } from '../sources/replay.js';
import { parseCommandArgs, UsageError, type Command } from './command.js';
import { LIST_FLAG_HELP, RULE_FLAG_HELP, RULE_FLAG_OPTIONS, rulesCommandStart, withListValue } from './rule-flags.js';
import type { Config } from '../config/config.js';
import { readRulesFiles } from '../config/rules-files.js';
import { expandLimitsOf, ruleSelection } from './run-config.js';
import { compiledJudge, interpreterMatches, type MatchOptions } from '../testing/engines.js';

/** The replay flags of `rae replay` and `rae profile` (--format, --rule-matching, --engine, --min-priority), checked, with the configuration's defaults; a bad value is a usage error. */
export function replaySettings(
  values: { format?: string; 'rule-matching'?: string; engine?: string; 'min-priority'?: string },
  config: Config,
): { format: ReplayFormat; ruleMatching: RuleMatching; engine: 'wasm' | 'interpreter'; minPriority: Priority } {
  const format = (values.format ?? 'fields') as ReplayFormat;
  if (format !== 'fields' && format !== 'audit') throw new UsageError(`--format must be fields or audit, not '${values.format}'`);
  const ruleMatching = (values['rule-matching'] ?? config.rules.ruleMatching) as RuleMatching;
  if (ruleMatching !== 'first' && ruleMatching !== 'all') throw new UsageError(`--rule-matching must be first or all, not '${ruleMatching}'`);
  const engine = values.engine ?? 'wasm';
  if (engine !== 'wasm' && engine !== 'interpreter') throw new UsageError(`--engine must be wasm or interpreter, not '${engine}'`);
  const minPriority = parsePriority(values['min-priority'] ?? config.rules.minPriority);
  if (!minPriority) throw new UsageError(`--min-priority: unknown priority '${values['min-priority'] ?? config.rules.minPriority}'`);
  return { format, ruleMatching, engine, minPriority };
}

const HELP = `Usage: rae replay -r FILE [-r FILE ...] --input FILE [options]
       rae replay --list[=SOURCE] [--json]

Evaluates recorded events against the rules and prints one alert JSON line (Falco's layout) per
detection on stdout; a summary and any rejected input lines go to stderr.

Input formats:
  fields   JSON lines: {"source":"syscall","time":"<RFC3339>","fields":{"evt.type":"openat",...}}
           (source defaults to syscall; fields are keyed by their canonical text, e.g. proc.aname[2])
  audit    orchestrator audit events: JSON lines as the API server's log backend writes them, or
           one audit.k8s.io/v1 EventList or Event document

Options:
  -r, --rules FILE            a rules file or directory (repeatable, required)
  -i, --input FILE            the events to replay ('-' for standard input; required)
      --format fields|audit   input format (default: fields)
      --rule-matching first|all
                              alert on the first matching rule of an event, or on all (default: first)
      --min-priority NAME     skip rules less severe than NAME (default: Debug)
      --hostname NAME         hostname in alerts (default: $RAE_HOSTNAME, $FALCO_HOSTNAME, or the host's name)
      --engine wasm|interpreter
                              evaluate with the compiled WebAssembly rules (default) or the
                              reference interpreter (the oracle, for comparison)
${RULE_FLAG_HELP}
                        (the rules.* keys apply: rules.minPriority, rules.ruleMatching, the
                        expansion bounds, the rule selection; the flags above win over -o)
${LIST_FLAG_HELP}
      --json            with --list: print the fields as JSON
  -h, --help                  show this help

Exit status: 0 every input line replayed; 1 input lines rejected (each reported on stderr; the
events of the other lines are still replayed and their alerts printed), invalid rules or
unreadable input; 2 bad usage. So a CI job fails on input it could not read.`;

type ReplayOptions = MatchOptions & { hostname: string; maxOutputFieldBytes?: number };

/** Alert JSON lines for per-event matches, in event order, with a count per rule. */
function alertLines(matches: readonly LoadedRule[][], events: readonly SourceEvent[], options: ReplayOptions): { lines: string[]; byRule: Map<string, number> } {
  const lines: string[] = [];
  const byRule = new Map<string, number>();
  matches.forEach((rules, i) => {
    for (const rule of rules) {
      lines.push(alertJson(alertFor(rule, events[i]!, options.hostname, options.maxOutputFieldBytes)));
      byRule.set(rule.name, (byRule.get(rule.name) ?? 0) + 1);
    }
  });
  return { lines, byRule };
}

/** Alert JSON lines for replayed events (the reference interpreter), with a count per rule. */
export function replayAlerts(ruleset: LoadResult['ruleset'], events: readonly SourceEvent[], options: ReplayOptions): { lines: string[]; byRule: Map<string, number> } {
  return alertLines(interpreterMatches(ruleset, events, options), events, options);
}

/** The same alert lines through the compiled evaluator (compiled in the compile worker); `referred`: events it handed to the reference interpreter. */
export async function replayAlertsWasm(
  ruleset: LoadResult['ruleset'],
  events: readonly SourceEvent[],
  options: ReplayOptions,
): Promise<{ ok: true; lines: string[]; byRule: Map<string, number>; referred: number } | { ok: false; message: string }> {
  const compiled = await compiledJudge(ruleset, options);
  if (!compiled.ok) return compiled;
  const r = compiled.judge(events);
  return r.ok ? { ok: true, ...alertLines(r.matches, events, options), referred: r.referred } : r;
}

export const replayCommand: Command = {
  name: 'replay',
  help: HELP,
  async run(argv) {
    const { values } = parseCommandArgs(withListValue(argv), {
      ...RULE_FLAG_OPTIONS,
      json: { type: 'boolean' },
      rules: { type: 'string', short: 'r', multiple: true },
      input: { type: 'string', short: 'i' },
      format: { type: 'string' },
      'rule-matching': { type: 'string' },
      'min-priority': { type: 'string' },
      hostname: { type: 'string' },
      engine: { type: 'string' },
    });
    const start = rulesCommandStart('replay', values);
    if ('exit' in start) return start.exit;
    const { paths, config } = start;
    if (!values.input) throw new UsageError('--input FILE is required');
    const { format, ruleMatching, engine, minPriority } = replaySettings(values, config);

    const { files, problems } = readRulesFiles(paths);
    for (const p of problems) process.stderr.write(`${p}\n`);
    // -T/-t/-D as rae run applies them: a generated last file of `enabled` overrides
    const selection = ruleSelection(files, config.rules);
    const loaded = loadRules(selection ? [...files, selection] : files, { limits: expandLimitsOf(config) });
    if (!loaded.ok || problems.length > 0) {
      for (const d of loaded.diagnostics.filter((x) => x.severity === 'error')) process.stderr.write(`${renderDiagnostic(d, loaded.sources)}\n`);
      process.stderr.write('replay: the rules are invalid; nothing replayed\n');
      return 1;
    }
    let text: string;
    try {
      text = readFileSync(values.input === '-' ? 0 : values.input, 'utf8');
    } catch (err) {
      process.stderr.write(`replay: cannot read ${values.input}: ${(err as Error).message}\n`);
      return 1;
    }
    const input = readReplayInput(text, format);
    for (const r of input.rejected) process.stderr.write(`replay: ${values.input}:${r.line}: rejected: ${r.reason}\n`);
    const host = values.hostname ?? process.env.RAE_HOSTNAME ?? process.env.FALCO_HOSTNAME ?? osHostname();
    const opts = { ruleMatching, minPriority, hostname: host, maxOutputFieldBytes: config.rules.maxOutputFieldBytes };
    let lines: string[];
    let byRule: Map<string, number>;
    if (engine === 'interpreter') ({ lines, byRule } = replayAlerts(loaded.ruleset, input.events, opts));
    else {
      const r = await replayAlertsWasm(loaded.ruleset, input.events, opts);
      if (!r.ok) {
        process.stderr.write(`replay: the compiled evaluator failed: ${r.message}\n`);
        return 1;
      }
      ({ lines, byRule } = r);
      if (r.referred > 0) process.stderr.write(`replay: ${r.referred} events judged by the reference interpreter (too large for the compiled evaluator's memory)\n`);
    }
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
    process.stderr.write(`replay: ${input.events.length} events, ${input.rejected.length} rejected, ${lines.length} alerts` + (byRule.size > 0 ? ` (${[...byRule].map(([r, n]) => `${r}: ${n}`).join('; ')})` : '') + '\n');
    // a rejected line is input the run did not judge: not a success a CI job may pass on
    return input.rejected.length > 0 ? 1 : 0;
  },
};
