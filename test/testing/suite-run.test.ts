// The suite runner for real (root: the kernel probe): one private `rae run` with the built-in
// rules, alerts received over HTTP. The suite written for the built-in stable syscall rules
// (rules/tests/syscall-suite.yaml) passes; event-generator's samples give upstream's results
// (../shared/evtgen-suite), the container context's chain in a container (Falco's packet-socket
// suite passes, its rule firing only in a container); a wrong expectation (a wrong priority, an alert that never comes)
// fails with a readable diff; nothing the tests made is left on the node.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { TestOutcome } from '../../host/testing/outcome.js';
import { readTestDocuments } from '../../host/testing/documents.js';
import { createSuiteRunner } from '../../host/testing/suite/index.js';

const ROOT = join(import.meta.dirname, '../..');
const SAMPLES = join(ROOT, '../shared/evtgen-suite/event-generator-samples');
const FALCO = join(ROOT, '../shared/evtgen-suite/falco');
const runner = createSuiteRunner({ shared: true });
const logs: string[] = [];

async function run(file: string, text = readFileSync(file, 'utf8')): Promise<TestOutcome[]> {
  const out: TestOutcome[] = [];
  for await (const o of runner.run(file, readTestDocuments(file, text)[0], { rulesFiles: [], log: (l) => logs.push(l) })) out.push(o);
  return out;
}

const brief = (os: TestOutcome[]) => os.map((o) => `${o.name}: ${o.status}${o.status === 'passed' ? '' : ` (${o.detail})`}`);

test.before(() => {
  if (process.getuid?.() !== 0) throw new Error('suite-run: needs root (the kernel probe and the tests’ users); run it as root');
});

test.after(async () => {
  await runner.close();
});

test('suite run: rules/tests/syscall-suite.yaml passes on this kernel, every test', async () => {
  const outcomes = await run(join(ROOT, 'rules/tests/syscall-suite.yaml'));
  assert.is(outcomes.length, 16);
  assert.equal(
    brief(outcomes).filter((l) => !l.endsWith(': passed')),
    [],
  );
});

test("suite run: event-generator's samples give upstream's results (all performed, the container one in a container)", async () => {
  if (!existsSync(SAMPLES)) throw new Error(`upstream samples missing: ${SAMPLES}`);
  const files = ['context_container', 'context_processes', 'expected_outcome', 'resources_clientserver', 'resources_fd', 'resources_process', 'scripts', 'steps_syscall', 'templates'];
  const outcomes: TestOutcome[] = [];
  for (const f of files) outcomes.push(...(await run(join(SAMPLES, `${f}.yaml`))));
  assert.is(outcomes.length, 38);
  assert.equal(
    brief(outcomes).filter((l) => !l.endsWith(': passed')),
    [],
  );
  assert.ok(
    logs.some((l) => /^suite: test_context_container: the chain ran in container \S+ \((docker|podman|cgroup), id [0-9a-f]{12}\)$/.test(l)),
    logs.join('\n'),
  );
  // the two with a rule were judged by their alerts; the rest performed only, as `suite run`
  assert.equal(
    outcomes.filter((o) => o.rule).map((o) => [o.name, o.detail]),
    [
      ['test_expected_outcome_strict', undefined],
      ['test_expected_outcome_loose', undefined],
    ],
  );
});

test("suite run: Falco's packet-socket suite passes: its chain runs in a container as the engine sees it (the rule wants container.id != host)", async () => {
  const outcomes = await run(join(FALCO, 'packet_socket_created_in_container.yaml'));
  assert.equal(brief(outcomes), ['packet_socket_created_in_container: passed']);
});

test("suite run: Falco's fileless suite passes: the memfd exec's evt.arg.flags is EXE_WRITABLE|EXE_FROM_MEMFD, its one output field", async () => {
  const outcomes = await run(join(FALCO, 'fileless_execution_via_memfd_create.yaml'));
  assert.equal(brief(outcomes), ['fileless_execution_via_memfd_create: passed']);
});

test("suite run: a process's argv is exactly the test's (its args, nothing before them): proc.cmdline as the suite says, as a user and in a container too", async () => {
  const outcomes = await run(
    'argv.yaml',
    `tests:
  - name: exact_argv
    rule: Search Private Keys or Passwords
    runner: HostRunner
    context:
      processes:
        - { name: find, exe: /usr/bin/find, args: "-name id_rsa 'a b'" }
    expectedOutcome:
      outputFields: { proc.name: find, proc.cmdline: "find -name id_rsa a b" }
  - name: exact_argv_as_a_user
    rule: Search Private Keys or Passwords
    runner: HostRunner
    context:
      processes:
        - { name: find, exe: eg-find, args: "-name id_rsa", user: daemon }
    expectedOutcome:
      outputFields: { proc.cmdline: "find -name id_rsa", user.name: daemon }
  - name: exact_argv_in_a_container
    rule: Search Private Keys or Passwords
    runner: HostRunner
    context:
      container: {}
      processes:
        - { name: find, args: "-name id_ed25519" }
    expectedOutcome:
      outputFields: { proc.cmdline: "find -name id_ed25519" }
`,
  );
  assert.equal(brief(outcomes), ['exact_argv: passed', 'exact_argv_as_a_user: passed', 'exact_argv_in_a_container: passed']);
});

test('suite run: a wrong priority and an alert that never comes fail with a readable diff', async () => {
  const outcomes = await run(
    'wrong.yaml',
    `tests:
  - name: wrong_priority
    rule: Read sensitive file untrusted
    runner: HostRunner
    steps:
      - { type: syscall, name: op, syscall: open, args: { pathname: /etc/shadow, flags: O_RDONLY } }
    expectedOutcome: { priority: CRITICAL, outputFields: { fd.name: /etc/shadow } }
  - name: absent_alert
    rule: Read sensitive file untrusted
    runner: HostRunner
    steps:
      - { type: syscall, name: op, syscall: open, args: { pathname: /etc/hostname, flags: O_RDONLY } }
    expectedOutcome: {}
`,
  );
  assert.equal(
    outcomes.map((o) => [o.name, o.status]),
    [
      ['wrong_priority', 'failed'],
      ['absent_alert', 'failed'],
    ],
  );
  assert.match(outcomes[0]!.detail!, 'expected an alert: rule "Read sensitive file untrusted", priority CRITICAL, fd.name=/etc/shadow\ngot 1 alert(s)');
  assert.match(outcomes[0]!.detail!, '- rule "Read sensitive file untrusted": priority: expected "CRITICAL", got "Warning"');
  assert.is(outcomes[1]!.detail, 'expected an alert: rule "Read sensitive file untrusted"\ngot: no alert from the test’s processes');
});

test('suite run: nothing the tests made is left behind', () => {
  for (const p of ['/tmp/rae_suite_symlink', '/root/rae_suite_hardlink', '/tmp/rae_suite_clearlog', '/tmp/link', '/tmp/symlink', '/tmp/file', '/tmp/eg_test_dir', '/tmp/eg_test_file']) {
    assert.not.ok(existsSync(p), `${p} left behind`);
  }
  // the containers' cgroups and overlay mounts (cgroup boxes) are gone with them
  assert.not.match(readFileSync('/proc/self/mountinfo', 'utf8'), 'rae-event-generator-box');
  const cgroup2 = readFileSync('/proc/self/mounts', 'utf8').match(/^\S+ (\S+) cgroup2 /m)?.[1];
  if (cgroup2)
    assert.equal(
      readdirSync(cgroup2).filter((d) => d.startsWith(`rae-event-generator-${process.pid}`)),
      [],
    );
  const passwd = readFileSync('/etc/passwd', 'utf8');
  for (const u of ['parent_user', 'middle_user']) assert.not.match(passwd, new RegExp(`^${u}:`, 'm'), `user ${u} left behind`);
});

test.run();
