// The offline unit tests of the built-in rules (rules/tests/, issue 29 item 3): `rae test` passes
// them on both engines, and every k8s audit rule (rules/orchestrator-audit/) and every stable
// syscall rule (rules/syscall/) has a firing case (a unit test expecting its alert, or a test of
// the event-generator suite there naming it) and a non-firing one (a unit test naming the rule
// with `rule:` and expecting no alert of it). Rules without a case yet would be listed in
// NOT_YET_COVERED, which must be exact (today every rule has both): a rule added without its
// cases fails here. The event-generator suites there (syscall-suite.yaml on the node,
// syscall-container-suite.yaml in containers: test/testing/suite-run.test.ts and
// suite-container.test.ts run them as root) trigger every stable syscall rule by a real action
// but those the container suite's header names with the reason no harmless action can.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { builtinRulesFiles, loadRules } from '../../host/engine/index.js';
import { readTestDocuments } from '../../host/testing/documents.js';
import { suiteRunner } from '../../host/testing/suite/index.js';
import { readUnitFile } from '../../host/testing/unit/format.js';

const DIR = 'rules/tests';

/** Rules whose cases are still to be written: [rule, what is missing] (none). */
const NOT_YET_COVERED: Record<string, string> = {};

/** The offline unit-test files of rules/tests/ (the event-generator suites there run as root in test/testing/suite-run.test.ts and suite-container.test.ts). */
const UNIT_FILES = ['k8s_audit.yaml', 'syscall.yaml'].map((n) => join(DIR, n));

test('rules/tests: rae test passes every built-in rule unit test on both engines', () => {
  const r = spawnSync(process.execPath, ['bin/rae.js', 'test', ...UNIT_FILES], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' }, maxBuffer: 16 << 20 });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, / 0 failed, 0 skipped/);
});

/** The stable syscall rules no suite triggers: the container suite's header says why for each. */
const NOT_BY_SUITE = ['Linux Kernel Module Injection Detected', 'PTRACE anti-debug attempt', 'PTRACE attached to process', 'Terminal shell in container'];

/** The rules the event-generator suite tests of rules/tests/ name (each a real action that must trigger it). */
function suiteRules(): Set<string> {
  const named = new Set<string>();
  for (const name of readdirSync(DIR).filter((n) => n.endsWith('.yaml'))) {
    const file = join(DIR, name);
    for (const doc of readTestDocuments(file, readFileSync(file, 'utf8'))) {
      if (suiteRunner.accepts(doc)) for (const t of suiteRunner.list(file, doc)) if (t.rule !== undefined) named.add(t.rule);
    }
  }
  return named;
}

test('rules/tests: the suites trigger every stable syscall rule but those the container suite header explains', () => {
  const rules = loadRules(builtinRulesFiles(['syscall']).files).ruleset.rules.map((r) => r.name);
  const named = suiteRules();
  assert.equal(rules.filter((r) => !named.has(r)).sort(), NOT_BY_SUITE);
  // every one of them has its reason in the header (the comment lines before `tests:`)
  const header = readFileSync(join(DIR, 'syscall-container-suite.yaml'), 'utf8').split('\ntests:')[0];
  for (const r of NOT_BY_SUITE) assert.ok(header.includes(`# - ${r}`) || header.includes(`, ${r}:`), `${r} is not explained in the header of syscall-container-suite.yaml`);
});

test('rules/tests: every k8s audit rule and every stable syscall rule has a firing and a non-firing case', () => {
  const rules = loadRules(builtinRulesFiles(['syscall', 'orchestrator-audit']).files).ruleset.rules.map((r) => r.name);
  assert.ok(rules.length > 70, `${rules.length} rules`);
  // a suite test names the rule its real action must trigger: a firing case
  const firing = suiteRules();
  const quiet = new Set<string>();
  for (const name of readdirSync(DIR).filter((n) => n.endsWith('.yaml'))) {
    const file = join(DIR, name);
    for (const doc of readTestDocuments(file, readFileSync(file, 'utf8'))) {
      if (suiteRunner.accepts(doc)) continue;
      for (const t of readUnitFile(file, doc as Record<string, unknown>).tests) {
        for (const e of t.expect) firing.add(e.rule);
        if (t.rule !== undefined && !t.expect.some((e) => e.rule === t.rule)) quiet.add(t.rule);
      }
    }
  }
  const missing = Object.fromEntries(
    rules
      .map((r) => [r, [firing.has(r) ? '' : 'firing', quiet.has(r) ? '' : 'non-firing'].filter(Boolean).join(', ')] as const)
      .filter(([, m]) => m !== '')
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  assert.equal(missing, NOT_YET_COVERED);
});

test.run();
