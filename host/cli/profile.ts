// `rae profile`: which rule costs what. Replays recorded events through the detection engine with
// rule figures on (every evaluate call timed rule by rule) and prints the rules ranked by their
// share of the evaluation cost, with evaluations and matches; or reads the same figures from a
// running engine's /metrics (`--url`). Consumes rules files and events, or a URL; produces a
// table (or JSON) on stdout.
import { readFileSync } from 'node:fs';
import { rankByCost, renderDiagnostic, type RuleFigure, type RuleMatching } from '../engine/index.js';
import type { Priority } from '../engine/priority.js';
import { DetectionEngine } from '../runtime/index.js';
import { readReplayInput, type ReplayFormat } from '../sources/replay.js';
import { parseCommandArgs, UsageError, type Command } from './command.js';
import { RULE_FLAG_HELP, RULE_FLAG_OPTIONS, rulesCommandStart } from './rule-flags.js';
import { fetchFigures, figuresTable } from './rule-figures.js';
import { readRulesFiles } from '../config/rules-files.js';
import { replaySettings } from './replay.js';
import { expandLimitsOf, ruleSelection } from './run-config.js';

const HELP = `Usage: rae profile -r FILE [-r FILE ...] --input FILE [options]
       rae profile --url URL [--json]

Ranks the rules by their share of the evaluation cost, with the events that reached each rule
(after the event-type index) and its matches. With -r/--input, replays the events through the
engine (compiled WebAssembly unless --engine interpreter) with every evaluate call timed rule
by rule; with --url, reads the figures a running engine exports on its forwarder's /metrics
(enginesecurity_engine_rule_*; docs/rule-cost.md says how cost is measured and its error).

Options:
  -r, --rules FILE            a rules file or directory (repeatable)
  -i, --input FILE            the events to replay ('-' for standard input)
      --format fields|audit   input format (default: fields; see rae replay --help)
      --rule-matching first|all
                              as rae replay (default: first)
      --min-priority NAME     skip rules less severe than NAME (default: Debug)
      --engine wasm|interpreter
                              the evaluator to profile (default: wasm)
      --url URL               a running engine's forwarder (e.g. http://127.0.0.1:2801)
      --json                  print the figures as JSON (rule, source, evaluations, matches,
                              cost_seconds, cost_share), most costly first
${RULE_FLAG_HELP}
  -h, --help                  show this help

Exit status: 0 printed, 1 invalid rules, unreadable input or an unreachable URL, 2 bad usage.`;

/** Events per evaluate call, as the sources batch them. */
const BATCH = 1024;

/** The figures of replaying `input` through a fresh engine, or why not. */
async function replayFigures(
  files: Parameters<DetectionEngine['load']>[0],
  text: string,
  format: ReplayFormat,
  opts: { ruleMatching: RuleMatching; minPriority: Priority; engine: 'wasm' | 'interpreter'; expandLimits: ReturnType<typeof expandLimitsOf> },
): Promise<{ ok: true; figures: RuleFigure[]; events: number; rejected: string[] } | { ok: false; message: string }> {
  const engine = new DetectionEngine({ ruleMatching: opts.ruleMatching, minPriority: opts.minPriority, hostname: 'profile', engine: opts.engine, expandLimits: opts.expandLimits, costSampleEvery: 1, onAlert: () => undefined });
  try {
    const loaded = await engine.load(files);
    if (!loaded.result.ok)
      return {
        ok: false,
        message: loaded.result.diagnostics
          .filter((d) => d.severity === 'error')
          .map((d) => renderDiagnostic(d, loaded.result.sources))
          .join('\n'),
      };
    if (!loaded.swapped) return { ok: false, message: (loaded.errors ?? []).map((e) => `${e.code}: ${e.message}`).join('\n') };
    const input = readReplayInput(text, format);
    for (let i = 0; i < input.events.length; i += BATCH) engine.evaluate(input.events.slice(i, i + BATCH));
    return { ok: true, figures: engine.ruleFigures, events: input.events.length, rejected: input.rejected.map((r) => `${r.line}: rejected: ${r.reason}`) };
  } finally {
    await engine.close();
  }
}

function print(figures: readonly RuleFigure[], json: boolean): void {
  if (json) {
    const rows = rankByCost(figures).map((f) => ({ rule: f.rule, source: f.source, evaluations: f.evaluations, matches: f.matches, cost_seconds: f.costSeconds, cost_share: f.share }));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  } else process.stdout.write(`${figuresTable(figures)}\n`);
}

export const profileCommand: Command = {
  name: 'profile',
  help: HELP,
  async run(argv) {
    const { values } = parseCommandArgs(argv, {
      ...RULE_FLAG_OPTIONS,
      rules: { type: 'string', short: 'r', multiple: true },
      input: { type: 'string', short: 'i' },
      format: { type: 'string' },
      'rule-matching': { type: 'string' },
      'min-priority': { type: 'string' },
      engine: { type: 'string' },
      url: { type: 'string' },
      json: { type: 'boolean' },
    });
    const json = values.json ?? false;
    if (values.url !== undefined) {
      if (values.rules || values.input) throw new UsageError('--url reads a running engine: not with -r/--input');
      const got = await fetchFigures(values.url);
      if (!got.ok) {
        process.stderr.write(`profile: ${got.message}\n`);
        return 1;
      }
      if (got.figures.length === 0) process.stderr.write('profile: the engine exports no rule figures (rules.ruleCounters false, or an engine without them)\n');
      print(got.figures, json);
      return 0;
    }
    if ((values.rules ?? []).length === 0 || !values.input) throw new UsageError('-r FILE and --input FILE are required (or --url URL)');
    const start = rulesCommandStart('profile', values);
    if ('exit' in start) return start.exit;
    const { paths, config } = start;
    const { format, ruleMatching, engine, minPriority } = replaySettings(values, config);
    const { files, problems } = readRulesFiles(paths);
    for (const p of problems) process.stderr.write(`${p}\n`);
    if (problems.length > 0) return 1;
    const selection = ruleSelection(files, config.rules);
    let text: string;
    try {
      text = readFileSync(values.input === '-' ? 0 : values.input, 'utf8');
    } catch (err) {
      process.stderr.write(`profile: cannot read ${values.input}: ${(err as Error).message}\n`);
      return 1;
    }
    const r = await replayFigures(selection ? [...files, selection] : files, text, format, { ruleMatching, minPriority, engine, expandLimits: expandLimitsOf(config) });
    if (!r.ok) {
      process.stderr.write(`${r.message}\nprofile: the rules are invalid or did not compile; nothing profiled\n`);
      return 1;
    }
    for (const line of r.rejected) process.stderr.write(`profile: ${values.input}:${line}\n`);
    print(r.figures, json);
    process.stderr.write(`profile: ${r.events} events through ${r.figures.length} rules (${engine})\n`);
    return 0;
  },
};
