// The `rae` command line as a user meets it: real processes, exit codes, stdout vs stderr.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae } from '../helpers/rae-run.js';
import { corpusPath } from '../../support/corpus.js';

function rae(args: string[], input?: string) {
  return spawnSync(process.execPath, ['bin/rae.js', ...args], { encoding: 'utf8', input, env: { ...process.env, TZ: 'UTC' } });
}

const tmp = mkdtempSync(join(tmpdir(), 'rae-cli-'));

for (const f of ['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml', 'k8s_audit_rules.yaml']) {
  test(`cli: rae validate ${f} is valid with 0 errors`, () => {
    const r = rae(['validate', '-r', corpusPath(f)]);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`^${corpusPath(f).replaceAll('.', '\\.')}: Ok`));
    assert.not.match(r.stdout, 'Errors:');
  });
}

test('cli: rae validate of a malformed file exits 1 with located errors and no stack trace', () => {
  const bad = join(tmp, 'bad.yaml');
  writeFileSync(bad, '- rule: r\n  desc: d\n  condition: evt.type = open and (proc.name = cat\n  output: o\n  priority: LOUD\n');
  const r = rae(['validate', '-r', bad]);
  assert.is(r.status, 1);
  assert.match(r.stdout, `${bad}: Invalid`);
  assert.match(r.stdout, `${bad}:5:13: error LOAD_ERR_YAML_VALIDATE (Error validating internal structure of YAML file): Invalid priority`);
  assert.not.match(r.stdout + r.stderr, /\n\s+at .*\(.*:\d+:\d+\)/);
});

test('cli: rae validate --json has falco_load_results', () => {
  const bad = join(tmp, 'bad2.yaml');
  writeFileSync(bad, '- rule: r\n  desc: d\n  condition: evt.type = open and proc.nmae = x\n  output: o\n  priority: INFO\n');
  const r = rae(['validate', '--json', '-r', corpusPath('falco_rules.yaml'), '-r', bad]);
  assert.is(r.status, 1);
  const j = JSON.parse(r.stdout) as { falco_load_results: Array<{ name: string; successful: boolean; errors: Array<{ code: string; message: string }> }> };
  assert.equal(
    j.falco_load_results.map((x) => x.successful),
    [true, false],
  );
  assert.is(j.falco_load_results[1]!.errors[0]!.message, 'filter_check called with nonexistent field proc.nmae');
});

test('cli: a file that cannot be read is an error, exit 1', () => {
  const r = rae(['validate', '-r', join(tmp, 'missing.yaml')]);
  assert.is(r.status, 1);
  assert.match(r.stderr, 'LOAD_ERR_FILE_READ');
});

test('cli: rae replay of field events against the stable rules', () => {
  const events = [
    {
      time: '2026-01-02T03:04:05.123456789Z',
      fields: {
        'evt.type': 'openat',
        'evt.is_open_read': true,
        'fd.typechar': 'f',
        'fd.num': 3,
        'fd.name': '/etc/shadow',
        'proc.name': 'cat',
        'proc.pname': 'bash',
        'proc.aname': ['bash', 'sshd', 'systemd'],
        'user.name': 'root',
        'user.uid': 0,
        'container.id': 'host',
      },
    },
    { time: '2026-01-02T03:04:06Z', fields: { 'evt.type': 'execve', 'proc.name': 'bash', 'proc.pname': 'runc', 'proc.tty': 34816, 'container.id': 'abc123def456', 'user.uid': 0 } },
    { time: '2026-01-02T03:04:07Z', fields: { 'evt.type': 'execve', 'proc.name': 'find', 'proc.args': '/ -name id_rsa', 'proc.pname': 'bash', 'container.id': 'host' } },
    { time: '2026-01-02T03:04:08Z', fields: { 'evt.type': 'ptrace', 'evt.arg.request': 'PTRACE_ATTACH', 'proc.name': 'gdb', 'container.id': 'host' } },
    { fields: { 'evt.type': 'openat', 'fd.name': '/tmp/harmless' } },
  ];
  const input = events.map((e) => JSON.stringify({ source: 'syscall', ...e })).join('\n') + '\nnot json\n';
  const r = rae(['replay', '-r', corpusPath('falco_rules.yaml'), '--input', '-', '--hostname', 'n1'], input);
  // the rejected line fails the run (a CI job must not pass on input it could not read); the rest is replayed
  assert.is(r.status, 1, r.stderr);
  const alerts = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { rule: string; time: string; output_fields: Record<string, unknown> });
  assert.equal(
    alerts.map((a) => a.rule),
    ['Read sensitive file untrusted', 'Terminal shell in container', 'Search Private Keys or Passwords', 'PTRACE attached to process'],
  );
  assert.is(alerts[0]!.time, '2026-01-02T03:04:05.123456789Z');
  assert.is(alerts[0]!.output_fields['proc.aname[2]'], 'sshd');
  assert.is(alerts[0]!.output_fields['user.uid'], 0);
  assert.is(alerts[0]!.output_fields['proc.aname[4]'], null);
  assert.match(r.stderr, '-:6: rejected: invalid JSON');
  assert.match(r.stderr, 'replay: 5 events, 1 rejected, 4 alerts');
});

test('cli: --rule-matching all reports every matching rule', () => {
  const rules = join(tmp, 'two.yaml');
  writeFileSync(rules, '- rule: a\n  desc: d\n  condition: evt.type = open\n  output: a %fd.name\n  priority: INFO\n- rule: b\n  desc: d\n  condition: evt.type = open and fd.name startswith /etc\n  output: b\n  priority: WARNING\n');
  const input = JSON.stringify({ fields: { 'evt.type': 'open', 'fd.name': '/etc/x' } }) + '\n';
  const first = rae(['replay', '-r', rules, '--input', '-'], input);
  const all = rae(['replay', '-r', rules, '--input', '-', '--rule-matching', 'all'], input);
  assert.equal(
    first.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).rule),
    ['a'],
  );
  assert.equal(
    all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).rule),
    ['a', 'b'],
  );
  const min = rae(['replay', '-r', rules, '--input', '-', '--rule-matching', 'all', '--min-priority', 'warning'], input);
  assert.equal(
    min.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).rule),
    ['b'],
  );
});

test('cli: every command has --help', () => {
  const top = rae(['--help']);
  assert.is(top.status, 0);
  const names = [...top.stdout.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1]!);
  assert.ok(names.includes('validate') && names.includes('replay') && names.includes('run'), top.stdout);
  for (const n of names) {
    const r = rae([n, '--help']);
    assert.is(r.status, 0, n);
    assert.match(r.stdout, /^Usage: rae /, n);
  }
});

test('cli: bad usage exits 2 with a hint', () => {
  assert.is(rae(['nope']).status, 2);
  const r = rae(['validate']);
  assert.is(r.status, 2);
  assert.match(r.stderr, "Run 'rae validate --help' for usage.");
  assert.is(rae(['replay', '-r', 'x', '--input', 'y', '--format', 'xml']).status, 2);
});

test('cli: rae run reports ready and stops cleanly on SIGTERM', async () => {
  const cfg = join(tmp, 'run.yaml');
  writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\n');
  const run = startRae(['--config', cfg, '--state-dir', join(tmp, 'state')]);
  await run.waitLog(/\bready\b/, 0, 300_000);
  assert.is(await run.stop(), 0);
  assert.match(run.stderr(), 'run: stopped');
});

test('cli: rae run refuses bad configuration values with the key and exit 1', () => {
  const cases: [string, RegExp][] = [
    ['rules:\n  compilerIdleSeconds: -5\n', /run: config rules\.compilerIdleSeconds: expected a number of seconds, 0 or more .* not -5/],
    ['rules:\n  compilerIdleSeconds: soon\n', /run: config rules\.compilerIdleSeconds: expected a number/],
    ['rules:\n  minPriority: severe\n', /run: config rules\.minPriority: unknown priority 'severe'/],
    ['rules:\n  maxExpandedNodes: 0\n', /run: config rules\.maxExpandedNodes: expected a whole number, 1 or more, not 0/],
    ['resources:\n  maxFileBytes: 1.5\n', /run: config resources\.maxFileBytes: expected a whole number, 1 or more, not 1\.5/],
    ['rulez: {}\n', /run: config rulez: unknown key/],
    ['webhook:\n  drainTimeoutSeconds: -1\n', /run: config webhook\.drainTimeoutSeconds: expected a number of seconds, 0 or more .* not -1/],
    ['forwarder:\n  outputs:\n    slack: { webhookurl: "ftp://x/" }\n', /run: config forwarder\.outputs\.slack\.webhookurl: must be http:\/\/ or https:\/\/, not ftp:/],
    ['forwarder:\n  outputs:\n    webhook: { address: "http://x/", minimumpriority: severe }\n', /run: config forwarder\.outputs\.webhook\.minimumpriority: unknown priority "severe"/],
    ['forwarder:\n  outputs:\n    kafka: { hostport: "x:9092" }\n', /run: config forwarder\.outputs\.kafka: unknown output \(known: webhook, file, program, slack/],
  ];
  for (const [i, [yaml, message]] of cases.entries()) {
    const cfg = join(tmp, `bad-${i}.yaml`);
    writeFileSync(cfg, yaml);
    const r = rae(['run', '--config', cfg, '--state-dir', join(tmp, `bad-state-${i}`)]);
    assert.is(r.status, 1, yaml + r.stderr);
    assert.match(r.stderr, message);
    assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('cli: rae run refuses a bad falcosidekick variable (SLACK_OUTPUTFORMAT) with the key and exit 1', () => {
  const r = spawnSync(process.execPath, ['bin/rae.js', 'run', '--state-dir', join(tmp, 'bad-env-state')], { encoding: 'utf8', env: { ...process.env, SLACK_WEBHOOKURL: 'http://127.0.0.1:1/', SLACK_OUTPUTFORMAT: 'bogus' } });
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stderr, /run: config forwarder\.outputs\.slack\.outputformat: expected one of all, text, fields/);
});

test.run();
