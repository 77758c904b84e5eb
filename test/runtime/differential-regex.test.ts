// Differential test of `regex` on both engines: rules with the pattern of issue 19
// (`(a+)+b|[ab]*a[ab]{8}`, no DFA within budget: bit-parallel positions in the module) and 60
// generated patterns (fixed seed), over values from the patterns' own characters plus the
// 29-character value that made JavaScript's backtracking regex run for a second; the compiled
// WebAssembly and the reference interpreter must agree on every (event, rule) pair.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../host/engine/index.js';
import { regexArb, regexInput } from '../engine/regex-arbitrary.js';
import { compileAll, compiledMatches, oracle, toEvents } from '../../support/differential.js';

const ISSUE = '(a+)+b|[ab]*a[ab]{8}';
const EVIL = ['a'.repeat(28) + 'c', 'a'.repeat(28) + 'b', 'ab'.repeat(14) + 'a', 'a'.repeat(29), 'b'.repeat(20) + 'a' + 'b'.repeat(8)];

/** A rules file: one rule per pattern on proc.name (a backslash is `\\` in a condition string). */
function rulesFile(patterns: string[]): string {
  return patterns
    .map((p, i) => {
      const cond = `evt.type = openat and proc.name regex "${p.replaceAll('\\', '\\\\')}"`;
      return `- rule: r${i}\n  desc: d\n  condition: '${cond.replaceAll("'", "''")}'\n  output: o\n  priority: WARNING\n`;
    })
    .join('');
}

test('differential (regex): the pattern of issue 19 and 60 generated patterns agree on both engines, pathological values included', async () => {
  const patterns = [ISSUE, ...fc.sample(regexArb, { numRuns: 60, seed: 1919 })];
  const loaded = loadRules([{ name: 'regex.yaml', text: rulesFile(patterns) }]);
  assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
  const rules = loaded.ruleset.rules;
  assert.is(rules.length, patterns.length);
  const module = await compileAll(rules);
  const values = [...EVIL, ...fc.sample(regexInput, { numRuns: 400, seed: 7 })];
  const events = toEvents(
    values.map((v) => ({ 'evt.type': 'openat', 'proc.name': v })),
    'syscall',
  );
  const want = oracle(rules, events);
  assert.equal(compiledMatches(module, events), want);
  // the issue's pattern: 28 a's then b, 14 ab's then a, 29 a's and the [ab]*a[ab]{8} tail match; 28 a's then c does not
  assert.equal(
    want.filter((m) => m.endsWith(':0')),
    ['1:0', '2:0', '3:0', '4:0'],
  );
  assert.ok(want.length > 200, `only ${want.length} matches`);
});

test.run();
