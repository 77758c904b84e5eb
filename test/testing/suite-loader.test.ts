// The suite loader and the runner's offline parts (no root, no engine): upstream's suite files
// load as they are (../shared/evtgen-suite: Falco's own 35 templates expand to 636 tests on amd64,
// as its SOURCES.md counts them); template names and values as upstream makes them; every
// malformed description gets an error located file:line:col, never a crash; list and explain.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readTestDocuments, yamlSourceOf } from '../../host/testing/documents.js';
import { suiteRunner } from '../../host/testing/suite/index.js';
import { loadSuite, type SuiteTest } from '../../host/testing/suite/loader.js';

const SHARED = join(import.meta.dirname, '../../../shared/evtgen-suite');

function upstreamFiles(dir: string): string[] {
  const d = join(SHARED, dir);
  if (!existsSync(d)) throw new Error(`upstream suite files missing: ${d} (the shared data directory beside the worktree)`);
  return readdirSync(d)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(d, f));
}

/** The first document of `text`, as `rae test` reads it (one parse: documents.ts). */
const parse = (file: string, text: string): unknown => readTestDocuments(file, text)[0];

function load(file: string, text = readFileSync(file, 'utf8')): SuiteTest[] {
  const source = yamlSourceOf(parse(file, text));
  if (!source) throw new Error(`${file}: no YAML source recorded for the document`);
  return loadSuite(file, source.doc, source.lines);
}

/** The error text of loading `text` as file `s.yaml`. */
function loadError(text: string): string {
  try {
    load('s.yaml', text);
  } catch (err) {
    assert.is((err as Error).name, 'Error');
    return (err as Error).message;
  }
  throw new Error('loaded without an error');
}

test("suite loader: Falco's evtgen suites load unchanged and expand to 636 tests that run on amd64, over 20 rules", () => {
  const tests = upstreamFiles('falco').flatMap((f) => load(f));
  const onAmd64 = tests.filter((t) => !(t.runIf?.arch && (t.runIf.arch.op === 'eq' ? t.runIf.arch.val !== 'amd64' : t.runIf.arch.val === 'amd64')));
  assert.is(onAmd64.length, 636);
  assert.is(new Set(tests.map((t) => t.rule)).size, 20);
});

test("suite loader: event-generator's samples load unchanged (38 tests)", () => {
  const tests = upstreamFiles('event-generator-samples').flatMap((f) => load(f));
  assert.is(tests.length, 38);
});

test('suite loader: a template expands vector then matrix cases, named _testCase#N, values substituted (a whole placeholder keeps its type)', () => {
  const tests = load(
    's.yaml',
    `tests:
  - name: t
    rule: "R %{ item.x }"
    runIf: %{ item.cond }
    runner: HostRunner
    steps:
      - type: syscall
        name: w
        syscall: write
        args: { fd: "%{ item.fd }", buffer: "x=%{ item.x }" }
    cases:
      - strategy: vector
        values: { x: a, fd: 1, cond: null }
      - strategy: matrix
        values: { x: [b, c], fd: [2], cond: [{ arch: { op: ne, val: s390x } }] }
`,
  );
  assert.equal(
    tests.map((t) => [t.name, t.rule, t.steps[0]!.args, t.runIf]),
    [
      ['t_testCase#0', 'R %{ item.x }'.replace('%{ item.x }', 'a'), { fd: 1, buffer: 'x=a' }, null],
      ['t_testCase#1', 'R b', { fd: 2, buffer: 'x=b' }, { arch: { op: 'ne', val: 's390x' } }],
      ['t_testCase#2', 'R c', { fd: 2, buffer: 'x=c' }, { arch: { op: 'ne', val: 's390x' } }],
    ],
  );
});

const MALFORMED: Array<[string, string, string]> = [
  ['YAML syntax', 'tests:\n  - name: [a\n', 's.yaml:3:1: '],
  ['no tests', 'other: 1\n', "s.yaml:1:1: description: unknown key 'other' (expected one of tests)"],
  ['empty tests', 'tests: []\n', 's.yaml:1:8: tests: expected a non-empty list'],
  ['no name', 'tests:\n  - runner: HostRunner\n', 's.yaml:2:5: test: name is required'],
  ['unknown runner', 'tests:\n  - name: a\n    runner: K8sRunner\n', 's.yaml:3:13: test a: runner: expected HostRunner (the only runner upstream has)'],
  ['unknown test key', 'tests:\n  - name: a\n    runner: HostRunner\n    step: []\n', "s.yaml:4:5: test: unknown key 'step' (expected one of"],
  [
    'duplicate step name',
    'tests:\n  - name: a\n    runner: HostRunner\n    resources:\n      - { type: fd, name: x, subtype: pipe }\n    steps:\n      - { type: syscall, name: x, syscall: dup, args: { oldFd: 1 } }\n',
    "s.yaml:7:9: steps[0]: the name 'x' is already used by a resource or step of this test",
  ],
  [
    'capabilities off the leaf',
    'tests:\n  - name: a\n    runner: HostRunner\n    context:\n      processes:\n        - capabilities: cap_chown=ep\n        - {}\n',
    's.yaml:6:25: context.processes[0].capabilities: capabilities can be set only on the leaf process of the chain',
  ],
  [
    'reserved env key',
    'tests:\n  - name: a\n    runner: HostRunner\n    context:\n      processes:\n        - env: { FALCO_EVENT_GENERATOR_TEST_ID: x }\n',
    "s.yaml:6:16: context.processes[0].env: the key 'FALCO_EVENT_GENERATOR_TEST_ID' is reserved",
  ],
  ['placeholder without a case value', 'tests:\n  - name: a\n    runner: HostRunner\n    rule: "%{ item.y }"\n    cases:\n      - strategy: vector\n        values: { x: 1 }\n', "s.yaml:2:5: test a_testCase#0: no case value 'y'"],
  ['unknown strategy', 'tests:\n  - name: a\n    runner: HostRunner\n    cases:\n      - strategy: zip\n        values: { x: 1 }\n', "s.yaml:5:19: case.strategy: expected vector or matrix, not 'zip'"],
  ['bad runIf', 'tests:\n  - name: a\n    runner: HostRunner\n    runIf: { os: linux }\n', 's.yaml:4:12: runIf: expected null or {arch: {op: eq|ne, val: ARCH}}'],
  ['unknown step type', 'tests:\n  - name: a\n    runner: HostRunner\n    steps:\n      - { type: exec, name: e }\n', "s.yaml:5:9: steps[0]: type: expected syscall (the only step type upstream has), not 'exec'"],
  ['unknown outcome key', 'tests:\n  - name: a\n    runner: HostRunner\n    expectedOutcome: { rule: x }\n', "s.yaml:4:24: expectedOutcome: unknown key 'rule'"],
  // upstream (event-generator PR #313): a fileless process supports exe, args and env only
  [
    'fileless process with an exePath',
    'tests:\n  - name: a\n    runner: HostRunner\n    resources:\n      - { type: process, name: p, fileLess: true, exePath: /tmp/x }\n',
    "s.yaml:5:51: resources[0] (fileLess): unknown key 'exePath' (expected one of type, name, fileLess, exe, args, env)",
  ],
  ['fileLess not a boolean', 'tests:\n  - name: a\n    runner: HostRunner\n    resources:\n      - { type: process, name: p, fileLess: "yes" }\n', 's.yaml:5:9: resources[0]: fileLess: expected true or false, not "yes"'],
];

test('suite loader: a malformed description gets an error located file:line:col', () => {
  for (const [what, text, want] of MALFORMED) {
    const got = loadError(text);
    assert.ok(got.startsWith(want), `${what}: ${got}`);
  }
});

test('suite runner: accepts suites by their shape, lists the expanded tests with their rules, explains them', () => {
  const file = join(SHARED, 'event-generator-samples', 'expected_outcome.yaml');
  const doc = parse(file, readFileSync(file, 'utf8'));
  assert.ok(suiteRunner.accepts(doc));
  assert.not.ok(suiteRunner.accepts({ tests: [{ name: 'a', events: [] }] }));
  assert.not.ok(suiteRunner.accepts([{ rule: 'x' }]));
  assert.equal(suiteRunner.list(file, doc), [
    { file, name: 'test_expected_outcome_strict', rule: 'Read sensitive file untrusted' },
    { file, name: 'test_expected_outcome_loose', rule: 'Read sensitive file untrusted' },
  ]);
  const text = suiteRunner.explain(file, doc);
  assert.match(text, 'resource f1: fd file {"filePath":"/etc/shadow"}');
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the suite's own binding syntax, not a template
  assert.match(text, 'step r1: read(fd="${f1.fd}", len=16)');
  assert.match(text, `expects: an alert of "Read sensitive file untrusted" from the test's processes with source syscall, priority WARNING`);
});

test('suite runner: run() of a malformed description throws the located error before doing anything', async () => {
  const doc = parse('bad.yaml', 'tests:\n  - name: a\n    runner: HostRunner\n    steps:\n      - { type: syscall, name: s, syscall: dup, args: 3 }\n');
  const it = suiteRunner.run('bad.yaml', doc, { rulesFiles: [], log: () => undefined })[Symbol.asyncIterator]();
  try {
    await it.next();
    assert.unreachable('ran');
  } catch (err) {
    assert.is((err as Error).message, 'bad.yaml:5:9: steps[0]: args: expected a mapping');
  }
});

test.run();
