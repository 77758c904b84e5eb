// Falco's command-line habits on `rae run`, as a user meets them: real `rae` processes, exit
// codes, stdout for what was asked, stderr for logs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ENGINE_VERSION } from '../../host/engine/collector.js';

function rae(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['bin/rae.js', 'run', ...args], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC', ...env } });
}

const tmp = mkdtempSync(join(tmpdir(), 'rae-falco-flags-'));
const rule = (name: string, tags: string[], enabled = true) =>
  `- rule: ${name}\n  desc: the ${name} rule\n  condition: evt.type = openat and fd.name = /etc/${name}\n  output: opened %fd.name\n  priority: WARNING\n  enabled: ${enabled}\n  tags: [${tags.join(', ')}]\n`;
const dir = join(tmp, 'rules.d');
mkdirSync(dir);
writeFileSync(join(dir, 'b.yaml'), rule('beta', ['net', 'extra']) + rule('gamma', ['files'], false));
writeFileSync(join(dir, 'a.yaml'), rule('alpha', ['files']));
writeFileSync(join(dir, 'ignored.txt'), 'not rules');
const only = ['-o', 'rules.builtIn=[]', '-r', dir];
const listed = (args: string[]) => {
  const r = rae([...only, '-L', '--json', ...args]);
  assert.is(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as Array<{ name: string; enabled: boolean }>).map((x) => `${x.name}:${x.enabled}`);
};

test('run --version: the package version and the rules engine version, as text and JSON', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  const text = rae(['--version']);
  assert.is(text.status, 0);
  assert.match(text.stdout, `version: ${pkg.version}`);
  assert.match(text.stdout, `Engine:                       ${ENGINE_VERSION}`);
  assert.equal(JSON.parse(rae(['--version', '--json']).stdout), { version: pkg.version, engine_version: ENGINE_VERSION });
  // Falco 0.45.1's engine version, which its rules files require
  assert.is(ENGINE_VERSION, '0.63.0');
});

test('run: a rules file requiring engine 0.63.0 (Falco 0.45) loads; 0.64.0 is refused, located', () => {
  const file = (version: string) => {
    const f = join(tmp, `requires-${version}.yaml`);
    writeFileSync(f, `- required_engine_version: ${version}\n${rule('delta', ['files'])}`);
    return f;
  };
  const ok = rae(['-o', 'rules.builtIn=[]', '-r', file('0.63.0'), '--dry-run']);
  assert.is(ok.status, 0, ok.stderr);
  const newer = rae(['-o', 'rules.builtIn=[]', '-r', file('0.64.0'), '--dry-run']);
  assert.is(newer.status, 1);
  assert.match(newer.stderr, 'requires-0.64.0.yaml:1:28: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Rules require engine version 0.64.0, but engine version is 0.63.0');
});

test('run --list[=SOURCE]: fields with types and descriptions; an unknown source is bad usage', () => {
  const k8s = rae(['--list=k8s_audit']);
  assert.is(k8s.status, 0);
  assert.match(k8s.stdout, /^ {2}ka\.verb +PT_CHARBUF +\S/m);
  assert.not.match(k8s.stdout, 'proc.name');
  const all = rae(['--list']);
  assert.match(all.stdout, /^Source syscall:$/m);
  assert.match(all.stdout, /^ {2}proc\.name +PT_CHARBUF +\S/m);
  assert.is(rae(['--list=nope']).status, 2);
});

test('run --list-events: the event names evt.type accepts', () => {
  const names = rae(['--list-events']).stdout.trim().split('\n');
  assert.ok(names.includes('execve') && names.includes('openat'), names.slice(0, 5).join(' '));
});

test('run -r DIR loads its *.yaml files in name order; -L lists them', () => {
  assert.equal(listed([]), ['alpha:true', 'beta:true', 'gamma:false']);
});

test('run -l RULE describes one rule; an unknown rule exits 1', () => {
  const r = rae([...only, '-l', 'beta']);
  assert.is(r.status, 0, r.stderr);
  for (const line of ['Rule: beta', 'Description: the beta rule', 'Condition (macros expanded): (evt.type = openat and fd.name = /etc/beta)', 'Output: opened %fd.name', 'Priority: Warning', 'Tags: extra, net', 'Source: syscall'])
    assert.match(r.stdout, line);
  const missing = rae([...only, '-l', 'delta']);
  assert.is(missing.status, 1);
  assert.match(missing.stderr, "no loaded rule is named 'delta'");
});

test('run -T TAG disables, -t TAG enables only (disabled ones too), -D SUBSTRING disables by name', () => {
  assert.equal(listed(['-T', 'files']), ['alpha:false', 'beta:true', 'gamma:false']);
  assert.equal(listed(['-t', 'files']), ['alpha:true', 'beta:false', 'gamma:true']);
  assert.equal(listed(['-t', 'files', '-D', 'amm']), ['alpha:true', 'beta:false', 'gamma:false']);
  const both = rae([...only, '--dry-run', '-T', 'a', '-t', 'b']);
  assert.is(both.status, 1);
  assert.match(both.stderr, 'cannot both be set');
});

test('run --dry-run: exit 0 for a valid setup, 1 with the located error for an invalid rules file', () => {
  const ok = rae([...only, '--dry-run']);
  assert.is(ok.status, 0, ok.stderr);
  assert.match(ok.stderr, 'run: loaded 3 rules (2 enabled)');
  assert.is(ok.stdout, '');
  const bad = join(tmp, 'bad.yaml');
  writeFileSync(bad, '- rule: r\n  desc: d\n  condition: evt.type = openat and proc.nmae = x\n  output: o\n  priority: INFO\n');
  const r = rae(['--dry-run', '-r', bad]);
  assert.is(r.status, 1);
  assert.match(r.stderr, `${bad}:3:`);
  assert.match(r.stderr, 'proc.nmae');
  // the same expansion bounds as the running engine: a rule over rules.maxExpandedNodes is refused
  const bounded = rae([...only, '--dry-run', '-o', 'rules.maxExpandedNodes=1']);
  assert.is(bounded.status, 1);
  assert.match(bounded.stderr, 'RAE_ERR_EXPANSION_LIMIT');
});

test('run -S/--snaplen LEN sets syscall.snaplen (Falco -S, falco_libs.snaplen): 0 to 4096 bytes; past it exits 1 naming the key', () => {
  for (const args of [
    ['-S', '200'],
    ['--snaplen', '0'],
    ['-o', 'syscall.snaplen=4096'],
  ]) {
    const ok = rae([...only, '--dry-run', ...args]);
    assert.is(ok.status, 0, `${args.join(' ')}: ${ok.stderr}`);
  }
  for (const [args, got] of [
    [['-S', '4097'], '4097'],
    [['--snaplen=-1'], '-1'],
    [['-o', 'syscall.snaplen=1.5'], '1.5'],
  ] as const) {
    const bad = rae([...only, '--dry-run', ...args]);
    assert.is(bad.status, 1, args.join(' '));
    assert.match(bad.stderr, `config syscall.snaplen: expected a whole number from 0 to 4096, got ${got}`);
  }
  const typed = rae([...only, '--dry-run', '-S', 'all']);
  assert.is(typed.status, 1);
  assert.match(typed.stderr, "config syscall.snaplen (-o): expected a number, not 'all'");
});

test('run -o: an unknown key or a wrong type exits 1 naming the key; -c is --config', () => {
  const unknown = rae(['--dry-run', '-o', 'forwarder.prot=1']);
  assert.is(unknown.status, 1);
  assert.match(unknown.stderr, 'config forwarder.prot (-o): unknown key');
  const typed = rae(['--dry-run', '-o', 'webhook.queueSize=many']);
  assert.is(typed.status, 1);
  assert.match(typed.stderr, "config webhook.queueSize (-o): expected a number, not 'many'");
  const config = join(tmp, 'config.yaml');
  writeFileSync(config, 'forwarder:\n  prot: 1\n');
  assert.match(rae(['--dry-run', '-c', config]).stderr, 'config forwarder.prot: unknown key');
});

test('run -o as Falco: nested output settings and custom fields, key[]= appends, errors name the key', () => {
  const extra = join(tmp, 'extra.yaml');
  writeFileSync(extra, rule('epsilon', ['files']));
  const ok = rae([...only, '-o', 'forwarder.outputs.slack.webhookurl=https://hooks.example/services/x', '-o', 'forwarder.customfields.env=prod', '-o', `rules.files[]=${extra}`, '-L', '--json']);
  assert.is(ok.status, 0, ok.stderr);
  assert.equal(
    (JSON.parse(ok.stdout) as Array<{ name: string }>).map((r) => r.name),
    ['alpha', 'beta', 'gamma', 'epsilon'],
  );
  for (const [option, line] of [
    ['forwarder.outputs.slack.webhookurl=ftp://x', 'config forwarder.outputs.slack.webhookurl: must be http:// or https://, not ftp:'],
    ['forwarder.port.tls=1', 'config forwarder.port.tls (-o): forwarder.port is a number, not a mapping'],
    ['rules.files[3]=x.yaml', 'config rules.files[3] (-o): index 3 is past the end of the list'],
  ] as const) {
    const bad = rae(['--dry-run', '-o', 'rules.builtIn=[]', '-o', option]);
    assert.is(bad.status, 1, option);
    assert.match(bad.stderr, line);
  }
});

test('run: RAE_<SECTION>_<KEY> environment overrides are typed and named when wrong', () => {
  const r = rae([...only, '--dry-run'], { RAE_FORWARDER_WEBHOOKRETRIES: 'often' });
  assert.is(r.status, 1);
  assert.match(r.stderr, 'config forwarder.webhookRetries (environment RAE_FORWARDER_WEBHOOKRETRIES): expected a number');
  assert.is(rae([...only, '--dry-run'], { RAE_FORWARDER_WEBHOOKRETRIES: '5' }).status, 0);
});

test('run: logLevel error keeps the info lines off stderr and the errors on it', () => {
  const quiet = rae([...only, '--dry-run', '-o', 'logLevel=error']);
  assert.is(quiet.status, 0);
  assert.is(quiet.stderr, '');
  const bad = rae([...only, '--dry-run', '-o', 'logLevel=error', '-o', 'rules.minPriority=LOUD']);
  assert.is(bad.status, 1);
  assert.match(bad.stderr, "unknown priority 'LOUD'");
  assert.match(rae([...only, '--dry-run', '-o', 'logLevel=verbose']).stderr, 'config logLevel: expected one of error, warning, info, debug');
});

/** `rae CMD ARGS` (validate, replay). */
function raeCmd(cmd: string, args: string[]) {
  return spawnSync(process.execPath, ['bin/rae.js', cmd, ...args], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
}
const audit = ['-r', 'rules/orchestrator-audit/k8s_audit_rules.yaml', '--format', 'audit', '--input', 'test/fixtures/k8saudit-samples/exec_pod.json'];
const replayed = (args: string[]) => {
  const r = raeCmd('replay', [...audit, ...args]);
  assert.is(r.status, 0, r.stderr);
  return r.stdout.trim() === ''
    ? []
    : r.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { rule: string }).rule);
};

test('validate and replay --list[=SOURCE]: the fields, as run prints them', () => {
  for (const cmd of ['validate', 'replay']) {
    const r = raeCmd(cmd, ['--list=k8s_audit']);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout, rae(['--list=k8s_audit']).stdout);
    assert.is(raeCmd(cmd, ['--list=nope']).status, 2);
  }
});

test('validate -T/-t/-D select the rules as run does (the count of enabled rules); -t with -T exits 1', () => {
  const enabled = (args: string[]) => {
    const r = raeCmd('validate', ['-r', dir, ...args]);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.not.match(r.stdout, 'rule selection');
    return Number(r.stderr.match(/(\d+) enabled\)/)![1]);
  };
  assert.is(enabled([]), 2);
  assert.is(enabled(['-T', 'files']), 1);
  assert.is(enabled(['-t', 'files']), 2);
  assert.is(enabled(['-t', 'files', '-D', 'alp']), 1);
  const both = raeCmd('validate', ['-r', dir, '-t', 'a', '-T', 'b']);
  assert.is(both.status, 1);
  assert.match(both.stderr, 'cannot both be set');
});

test('validate -o: the expansion bound applies; an unknown key exits 1 naming it', () => {
  const r = raeCmd('validate', ['-r', dir, '-o', 'rules.maxExpandedNodes=1']);
  assert.is(r.status, 1);
  assert.match(r.stdout, 'RAE_ERR_EXPANSION_LIMIT');
  const bad = raeCmd('validate', ['-r', dir, '-o', 'rules.nope=1']);
  assert.is(bad.status, 1);
  assert.match(bad.stderr, 'validate: config rules.nope');
});

test('replay -T/-t/-D and -o rules.minPriority / rules.ruleMatching select the alerting rules', () => {
  assert.equal(replayed([]), ['Attach/Exec Pod']);
  assert.equal(replayed(['-T', 'k8s']), []);
  assert.equal(replayed(['-t', 'k8s']), ['Attach/Exec Pod']);
  assert.equal(replayed(['-D', 'Exec Pod']), []);
  assert.equal(replayed(['-o', 'rules.minPriority=Critical']), []);
  assert.equal(replayed(['-o', 'rules.minPriority=Critical', '--min-priority', 'Debug']), ['Attach/Exec Pod']);
  assert.equal(replayed(['-o', 'rules.ruleMatching=all']), ['Attach/Exec Pod']);
  const bad = raeCmd('replay', [...audit, '-o', 'rules.ruleMatching=some']);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, "must be first or all, not 'some'");
});

test.run();
