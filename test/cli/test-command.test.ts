// `rae test` through the real CLI (issue 29 items 1-2): offline unit tests of a small rules file
// judged by both engines; a passing file (from a file and from stdin), failing expectations (a
// wrong priority, an absent alert, an unexpected one) with their readable diff and exit 1, the
// JUnit XML parsed back, --list and --filter, explain, and malformed files as located errors (exit 2).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const dir = mkdtempSync(join(tmpdir(), 'rae-test-cmd-'));
const rae = (args: string[], input?: string) => spawnSync(process.execPath, ['bin/rae.js', 'test', ...args], { encoding: 'utf8', input, env: { ...process.env, TZ: 'UTC' } });

writeFileSync(
  join(dir, 'rules.yaml'),
  `- rule: shadow read
  desc: d
  condition: evt.type = openat and fd.name = /etc/shadow
  output: shadow read (file=%fd.name proc=%proc.name)
  priority: WARNING
- rule: tmp write
  desc: d
  condition: evt.type = openat and fd.name startswith /tmp/
  output: tmp (file=%fd.name)
  priority: NOTICE
`,
);
const shadow = '{ fields: { evt.type: openat, fd.name: /etc/shadow, proc.name: cat } }';
const passing = `rules: [rules.yaml]
unitTests:
  - name: shadow fires
    event: ${shadow}
    expect: [{ rule: shadow read, priority: warning, outputFields: { fd.name: /etc/shadow, proc.name: cat } }]
  - name: harmless
    rule: shadow read
    event: { fields: { evt.type: openat, fd.name: /etc/hosts } }
    expect: []
`;
writeFileSync(join(dir, 'pass.yaml'), passing);
writeFileSync(
  join(dir, 'fail.yaml'),
  `rules: [rules.yaml]
unitTests:
  - name: wrong priority
    event: ${shadow}
    expect: [{ rule: shadow read, priority: Critical }]
  - name: absent alert
    event: { fields: { evt.type: openat, fd.name: /etc/hosts } }
    expect: [{ rule: shadow read }]
  - name: unexpected alert
    event: { fields: { evt.type: openat, fd.name: /tmp/x } }
    expect: []
  - name: right
    event: ${shadow}
    expect: [{ rule: shadow read }]
`,
);

test('rae test: failing expectations exit 1 with a readable diff; the table, the summary and --junit say the same', () => {
  const junit = join(dir, 'report.xml');
  const r = rae([join(dir, 'fail.yaml'), '--junit', junit]);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.match(
    r.stdout,
    /FAILED +\S+fail\.yaml +wrong priority +shadow read\n {4}expected: shadow read, priority Critical\n {4}got: +shadow read \(Warning, syscall\): shadow read \(file=\/etc\/shadow proc=cat\).*\n {4}alert 1 .*:\n {6}priority: expected Critical, got Warning/,
  );
  assert.match(r.stdout, "alert 1: expected 'shadow read', got no alert");
  assert.match(r.stdout, 'alert 1: not expected, got tmp write (Notice, syscall): tmp (file=/tmp/x)');
  assert.match(r.stdout, /passed +\S+fail\.yaml +right +shadow read/);
  assert.match(r.stdout, /rae test: 1 passed, 3 failed, 0 skipped \(4 tests, [\d.]+ s\)\n$/);
  const text = readFileSync(junit, 'utf8');
  assert.is(XMLValidator.validate(text), true);
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testcase' || name === 'testsuite' }).parse(text);
  const suites = xml.testsuites;
  assert.equal([suites.tests, suites.failures, suites.skipped], ['4', '3', '0']);
  const cases = suites.testsuite[0].testcase as Array<{ name: string; failure?: { message: string; '#text': string } }>;
  assert.equal(
    cases.map((c) => [c.name, c.failure !== undefined]),
    [
      ['wrong priority', true],
      ['absent alert', true],
      ['unexpected alert', true],
      ['right', false],
    ],
  );
  assert.match(cases[0]!.failure!['#text'], 'priority: expected Critical, got Warning');
});

test('rae test: a passing file exits 0, from a file and from stdin', () => {
  const r = rae([join(dir, 'pass.yaml')]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, 'rae test: 2 passed, 0 failed, 0 skipped');
  // stdin: relative paths are read from the working directory
  const s = spawnSync(process.execPath, [join(process.cwd(), 'bin/rae.js'), 'test', '-'], { cwd: dir, encoding: 'utf8', input: passing });
  assert.is(s.status, 0, s.stdout + s.stderr);
  assert.match(s.stdout, /passed {2}- +shadow fires/);
});

test('rae test --list and --filter; explain', () => {
  const r = rae(['--list', join(dir, 'fail.yaml'), join(dir, 'pass.yaml'), '--filter', 'alert|fires']);
  assert.is(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n'), [`unit\t${join(dir, 'fail.yaml')}\tabsent alert\tshadow read`, `unit\t${join(dir, 'fail.yaml')}\tunexpected alert`, `unit\t${join(dir, 'pass.yaml')}\tshadow fires\tshadow read`]);
  const e = rae(['explain', join(dir, 'pass.yaml')]);
  assert.is(e.status, 0, e.stderr);
  assert.match(e.stdout, 'shadow fires: replays one inline field event (syscall openat); expects shadow read, priority warning, fd.name="/etc/shadow", proc.name="cat"');
  assert.match(e.stdout, 'harmless: replays one inline field event (syscall openat); expects no alert');
});

test('rae test: an event-generator suite file goes to the suite runner (--list, explain; performing it is test/testing/suite-run)', () => {
  const suite = 'rules/tests/syscall-suite.yaml';
  const r = rae(['--list', suite, join(dir, 'pass.yaml')]);
  assert.is(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.ok(lines.includes(`suite\t${suite}\tread_sensitive_file_untrusted_testCase#0\tRead sensitive file untrusted`), r.stdout);
  assert.ok(lines.includes(`unit\t${join(dir, 'pass.yaml')}\tshadow fires\tshadow read`), r.stdout);
  assert.is(lines.filter((l) => l.startsWith('suite\t')).length, 16);
  const e = rae(['explain', suite]);
  assert.is(e.status, 0, e.stderr);
  assert.match(e.stdout, 'expects: an alert of "Read sensitive file untrusted"');
});

test('rae test: malformed files are located errors, exit 2, never a stack trace', () => {
  const cases: Array<[string, string]> = [
    ['unitTests:\n  - name: a\n    event: {fields: {evt.type: openat}\n', ':4:1: invalid YAML'],
    ['unitTests:\n  - name: a\n    evnt: {}\n    expect: []\n', ":3:11: unknown key 'evnt' in test unitTests[0]"],
    ['unitTests:\n  - name: a\n    event: {fields: {fd.name: x}}\n    expect: []\n', ":2:5: test 'a': event: rejected: a syscall field event needs 'evt.type'"],
    ['unitTests:\n  - name: a\n    event: {fields: {evt.type: open}}\n    expect:\n      - {rule: r, priority: LOUD}\n', ":5:29: test 'a', expect[0]: unknown priority 'LOUD'"],
    ['unitTests:\n  - name: a\n    file: missing.jsonl\n    expect: []\n', ":2:5: test 'a': cannot read the events file"],
    ['- rule: r\n  desc: d\n', ':1:1: not a test file of a known kind (unit, suite)'],
  ];
  cases.forEach(([text, message], i) => {
    const file = join(dir, `bad${i}.yaml`);
    writeFileSync(file, text);
    const r = rae([file]);
    assert.is(r.status, 2, `${text}\n${r.stderr}`);
    assert.match(r.stderr, `rae test: ${file}${message}`);
    assert.not.match(r.stderr, /\n\s+at .*:\d+:\d+\)/);
  });
  assert.is(rae([]).status, 2);
  assert.match(rae([join(dir, 'none.yaml')]).stderr, 'none.yaml: cannot read: no such file or directory');
});

test('rae test: a malformed suite is located the same from a file and from stdin (one parse), never a stack trace', () => {
  const cases: Array<[string, string]> = [
    ['tests:\n  - name: a\n    runner: HostRunner\n    steps:\n      - { type: syscall, name: s, syscall: dup, args: 3 }\n', ':5:9: steps[0]: args: expected a mapping'],
    ['tests:\n  - name: a\n    runner: HostRunner\n    context: { container: 5 }\n', ':4:27: context.container: expected a mapping or null'],
    ['tests:\n  - name: a\n    runner: HostRunner\n    runIf: %{ item.runIf }\n', ':2:5: test a: uses %{ item.* } but has no cases'],
    ['tests:\n  - name: a\n    runner: HostRunner\n    cases:\n      - { strategy: matrix, values: { x: 1 } }\n', ':5:42: case.values.x: a matrix value is a non-empty list'],
    ['tests:\n  - name: [a\n    runner: HostRunner\n', ':3:5: invalid YAML'],
  ];
  cases.forEach(([text, message], i) => {
    const file = join(dir, `bad-suite${i}.yaml`);
    writeFileSync(file, text);
    for (const [where, r] of [
      [file, rae(['--list', file])],
      ['-', rae(['--list', '-'], text)],
    ] as const) {
      assert.is(r.status, 2, `${where}: ${text}\n${r.stderr}`);
      assert.match(r.stderr, `rae test: ${where}${message}`);
      assert.not.match(r.stderr, /\n\s+at .*:\d+:\d+\)/);
    }
  });
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
