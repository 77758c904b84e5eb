// The offline unit-test runner (kind 'unit'): each test's recorded events judged by both engines,
// the compiled WebAssembly evaluator and the reference interpreter, off the node (no root, no
// kernel). A test passes when both engines raise the same alerts and those are the expected ones;
// engines that disagree fail it. The format is in format.ts and docs/rule-tests.md.
// Consumes a plain document from readTestDocuments; produces TestOutcomes (outcome.ts).
import { readFileSync } from 'node:fs';
import { defaultConfig } from '../../config/config.js';
import { readRulesFiles } from '../../config/rules-files.js';
import { builtinRulesFiles, loadRules, renderDiagnostic, type LoadResult, type SourceEvent } from '../../engine/index.js';
import { type Alert, alertJson } from '../../output/alert.js';
import { alertFor } from '../../output/from-match.js';
import { readReplayInput } from '../../sources/replay.js';
import { testFileError, TestFileError } from '../documents.js';
import { compiledJudge, interpreterMatches, type MatchOptions } from '../engines.js';
import type { TestFileRunner, TestOutcome, TestRunOptions } from '../outcome.js';
import { alertDiff, describeAlert } from './expect.js';
import { isUnitDocument, readUnitFile, type UnitFile, type UnitTest } from './format.js';

/** The hostname alerts carry here (no expectation reads it). */
const HOSTNAME = 'rae-test';

/** A test's events, read and checked before anything runs: a bad input is a located error. */
function eventsOf(test: UnitTest): SourceEvent[] {
  const what = `${test.where}: test '${test.name}'`;
  let text: string;
  let origin: string;
  if (test.input.kind === 'file') {
    origin = test.input.path;
    try {
      text = readFileSync(test.input.path, 'utf8');
    } catch (err) {
      throw new TestFileError(`${what}: cannot read the events file ${test.input.path}: ${(err as Error).message}`);
    }
  } else {
    origin = test.input.format === 'audit' ? 'auditEvent' : 'event';
    text = JSON.stringify(test.input.value);
  }
  const input = readReplayInput(text, test.input.format);
  const bad = input.rejected[0];
  if (bad) throw new TestFileError(`${what}: ${origin}${test.input.kind === 'file' ? `:${bad.line}` : ''}: rejected: ${bad.reason}`);
  if (input.events.length === 0) throw new TestFileError(`${what}: ${origin} holds no event`);
  return input.events;
}

/** The rules a file's tests run against: its own `rules`, else the command's -r, else the built-in sets `rae run` loads. */
function rulesOf(file: string, doc: unknown, unit: UnitFile, options: TestRunOptions): LoadResult['ruleset'] {
  const paths = unit.rules ?? options.rulesFiles;
  const read = paths.length > 0 ? readRulesFiles(paths) : { ...builtinRulesFiles(defaultConfig().rules.builtIn), problems: [] };
  const where = unit.rules ? testFileError(file, doc, 'rules', '').message : `${file}: `;
  if (read.problems.length > 0) throw new TestFileError(`${where}cannot read the rules: ${read.problems.join('; ')}`);
  const loaded = loadRules(read.files);
  if (!loaded.ok) {
    const errors = loaded.diagnostics.filter((d) => d.severity === 'error').map((d) => renderDiagnostic(d, loaded.sources));
    throw new TestFileError(`${where}the rules are invalid:\n${errors.join('\n')}`);
  }
  return loaded.ruleset;
}

/** The alerts of a test's events (their per-event matches, in order). */
function alertsOf(matches: ReturnType<typeof interpreterMatches>, events: readonly SourceEvent[]): Alert[] {
  return matches.flatMap((rules, i) => rules.map((rule) => alertFor(rule, events[i]!, HOSTNAME)));
}

function listed(alerts: readonly Alert[]): string {
  return alerts.length === 0 ? 'no alert' : alerts.map(describeAlert).join('; ');
}

function expectedText(test: UnitTest): string {
  if (test.expect.length === 0) return 'no alert';
  return test.expect.map((e) => [e.rule, e.priority && `priority ${e.priority}`, e.source && `source ${e.source}`, ...Object.entries(e.outputFields ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`)].filter(Boolean).join(', ')).join('; ');
}

/** One test judged by both engines: its outcome. */
function judgeTest(file: string, test: UnitTest, events: SourceEvent[], ruleset: LoadResult['ruleset'], judge: Awaited<ReturnType<typeof compiledJudge>>, options: MatchOptions): TestOutcome {
  const started = performance.now();
  const end = (status: TestOutcome['status'], detail?: string): TestOutcome => ({ file, name: test.name, rule: test.rule, status, detail, durationMs: performance.now() - started });
  if (!judge.ok) return end('failed', `the compiled evaluator failed: ${judge.message}`);
  const wasm = judge.judge(events);
  if (!wasm.ok) return end('failed', `the compiled evaluator failed: ${wasm.message}`);
  const interpreted = alertsOf(interpreterMatches(ruleset, events, options), events);
  const compiled = alertsOf(wasm.matches, events);
  if (compiled.map(alertJson).join('\n') !== interpreted.map(alertJson).join('\n')) {
    return end(
      'failed',
      [`the engines disagree:`, `  compiled (WASM): ${compiled.map(alertJson).join('\n                   ') || 'no alert'}`, `  interpreter:     ${interpreted.map(alertJson).join('\n                   ') || 'no alert'}`].join('\n'),
    );
  }
  const diff = alertDiff(test.expect, compiled);
  if (diff.length === 0) return end('passed');
  return end('failed', [`expected: ${expectedText(test)}`, `got:      ${listed(compiled)}`, ...diff].join('\n'));
}

/** Checks a document and reads every test's events: all of its input problems throw before any test runs. */
function prepare(file: string, doc: unknown): { unit: UnitFile; events: SourceEvent[][] } {
  const unit = readUnitFile(file, doc as Record<string, unknown>);
  return { unit, events: unit.tests.map(eventsOf) };
}

function explainInput(test: UnitTest): string {
  if (test.input.kind === 'file') return `the ${test.input.format === 'audit' ? 'audit' : 'field'} events of ${test.input.path}`;
  if (test.input.format === 'audit') return 'one inline audit event';
  const fields = (test.input.value as { fields?: Record<string, unknown> }).fields ?? {};
  return `one inline field event (${String((test.input.value as { source?: unknown }).source ?? 'syscall')}${fields['evt.type'] ? ` ${String(fields['evt.type'])}` : ''})`;
}

/** The offline unit-test runner. */
export const unitRunner: TestFileRunner = {
  kind: 'unit',
  accepts: isUnitDocument,
  list(file, doc) {
    return readUnitFile(file, doc as Record<string, unknown>).tests.map((t) => ({ file, name: t.name, rule: t.rule }));
  },
  explain(file, doc) {
    const unit = readUnitFile(file, doc as Record<string, unknown>);
    const rules = unit.rules ? unit.rules.join(', ') : 'the rules given with -r, else the built-in rules';
    return [
      `${file}: ${unit.tests.length} offline unit tests against ${rules} (rule matching: ${unit.ruleMatching}), each judged by the compiled evaluator and the reference interpreter, which must agree:`,
      ...unit.tests.map((t) => `  ${t.name}: replays ${explainInput(t)}; expects ${expectedText(t)}`),
    ].join('\n');
  },
  async *run(file, doc, options) {
    const { unit, events } = prepare(file, doc);
    const chosen = unit.tests.map((t, i) => ({ t, i })).filter(({ t }) => !options.filter || options.filter.test(t.name));
    if (chosen.length === 0) return;
    const ruleset = rulesOf(file, doc, unit, options);
    const matchOptions: MatchOptions = { ruleMatching: unit.ruleMatching, minPriority: 'Debug' };
    options.log(`${file}: compiling the rules for ${chosen.length} unit tests`);
    const judge = await compiledJudge(ruleset, matchOptions);
    for (const { t, i } of chosen) yield judgeTest(file, t, events[i]!, ruleset, judge, matchOptions);
  },
};
