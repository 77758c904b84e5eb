// Read-only opens no rule can match stay in the kernel (open-filter.ts, probe.bpf.c unwanted_open):
// which paths the rules' conditions allow (no root), the probe keeping exactly the opens it must
// (root, real kernel), and the same alerts from the bundled rules with the filter on and off, two
// live sources side by side on the same syscalls (root).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { builtinRulesFiles } from '../../../host/engine/builtin.js';
import { loadRules, type RulesFile } from '../../../host/engine/index.js';
import type { Alert } from '../../../host/output/alert.js';
import { DetectionEngine } from '../../../host/runtime/detection-engine.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { openPathFilter } from '../../../host/sources/syscall/open-filter.js';
import { startSyscallSource } from '../../../host/sources/syscall/source.js';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import { KIND } from '../../../host/abi/records.js';
import type { SyscallRecord } from '../../helpers/record-decoder.js';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { Collector, kernelGate } from './collector.js';

const rulesOf = (text: string) => {
  const r = loadRules([{ name: 't.yaml', text }]);
  assert.ok(r.ok, r.diagnostics.map((d) => d.message).join('\n'));
  return r.ruleset.rules;
};
const rule = (name: string, condition: string, output = 'x') => `- rule: ${name}\n  desc: d\n  condition: ${condition}\n  output: ${output}\n  priority: NOTICE\n`;
const stable = () => loadRules(builtinRulesFiles(['syscall']).files).ruleset.rules;

test('open filter: the bundled stable rules read read-only opens only of their sensitive files', () => {
  const f = openPathFilter(stable());
  assert.ok(f, 'a filter for the stable rules');
  assert.ok(f.exact.includes('/etc/shadow'), f.exact.join(' '));
  assert.ok(f.prefixes.includes('/etc/pam.d/'), f.prefixes.join(' '));
});

test('open filter: a rule that can match a read-only open of any path by any process turns it off', () => {
  assert.is(openPathFilter(rulesOf(rule('any read', 'evt.type = openat and evt.is_open_read = true and user.name = root'))), undefined);
  // no event type: the rule sees every recorded open
  assert.is(openPathFilter(rulesOf(rule('no type', 'user.name = root and fd.name contains shadow'))), undefined);
  // a process name other than by = or in bounds nothing, nor does a negated one
  assert.is(openPathFilter(rulesOf(rule('glob name', 'evt.type = openat and proc.name startswith ta'))), undefined);
  assert.is(openPathFilter(rulesOf(rule('not name', 'evt.type = openat and not proc.name = tar'))), undefined);
  // one rule by name, another of any path: off
  assert.is(openPathFilter(rulesOf(rule('by name', 'evt.type = openat and proc.name = tar') + rule('any', 'evt.type = openat and proc.pname = sh'))), undefined);
  // evt.num shifts when records are filtered: a rule printing it turns the filter off
  assert.is(openPathFilter(rulesOf(rule('num', 'evt.type = openat and fd.name = /etc/shadow', 'n=%evt.num'))), undefined);
  // a negated path test bounds nothing
  assert.is(openPathFilter(rulesOf(rule('not', 'evt.type = openat and not fd.name startswith /usr'))), undefined);
});

test('open filter: write opens, other syscalls and paths the probe never filters leave it on', () => {
  const f = openPathFilter(
    rulesOf(
      rule('write', 'evt.type = openat and evt.is_open_write = true') +
        rule('exec', 'evt.type = execve and proc.name = sh') +
        rule('traversal', "evt.type = openat and fd.nameraw contains '../'") +
        rule('dirs', 'evt.type in (open, openat) and (fd.directory in (/srv/a, /srv/b/) or fd.name glob /opt/*/x or fd.name pmatch (/var/lib))') +
        rule('never', 'evt.type = openat and evt.num = 0'),
    ),
  );
  assert.equal(f, { exact: [], prefixes: ['/opt/', '/srv/a/', '/srv/b/', '/var/lib'], names: [] });
});

test('open filter: a rule that reads opens of any path by named processes keeps those names', () => {
  // by name alone, with and without an event type (the probe filters only read-only opens)
  const names = openPathFilter(
    rulesOf(rule('tar', 'evt.type = openat and evt.is_open_read = true and proc.name = tar and container.id != host') + rule('no type', "proc.name in (sshd, 'a-name-longer-than-a-comm') and fd.name contains liblzma")),
  );
  assert.equal(names, { exact: [], prefixes: [], names: ['a-name-longer-than-a-comm', 'sshd', 'tar'] });
  // names beside paths, from other rules and from one rule's either side
  const mixed = openPathFilter(
    rulesOf(
      rule('shadow', 'evt.type = openat and fd.name = /etc/shadow') + rule('either', 'evt.type = openat and (proc.name = cat or fd.name startswith /srv/)') + rule('both', 'evt.type = openat and proc.name = vi and fd.directory = /etc/ssh'),
    ),
  );
  // a conjunction of a name and a path keeps by its path (the tighter: a name keeps all of its process's opens)
  assert.equal(mixed, { exact: ['/etc/shadow'], prefixes: ['/etc/ssh/', '/srv/'], names: ['cat'] });
});

test('open filter: every built-in rule set together reads opens of any path only by name (tar, sshd)', () => {
  const all = loadRules(builtinRulesFiles(['syscall', 'syscall-incubating', 'syscall-sandbox']).files).ruleset.rules;
  const f = openPathFilter(all);
  assert.ok(f, 'a filter for every built-in set');
  assert.equal(f.names, ['sshd', 'tar']);
  assert.ok(f.exact.includes('/etc/shadow'), f.exact.join(' '));
});

test('open filter: a glob whose dots sit in a bracket or behind an escape still bounds by its prefix', () => {
  // '/srv[/.]x' matches the plain path '/srv/x': not "never", whatever its literal text holds
  const f = openPathFilter(rulesOf(rule('bracket', "evt.type = openat and fd.name glob '/srv[/.]x'") + rule('dots', "evt.type = openat and fd.name glob '/home/*/.ssh/*'")));
  assert.equal(f, { exact: [], prefixes: ['/srv'], names: [] });
});

const gate = kernelGate('open-filter.test.ts');
const live = gate.run ? test : test.skip;

live('open filter: the probe drops exactly the read-only plain absolute opens outside the paths', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-open-filter-'));
  const c = new Collector();
  try {
    for (const n of ['keep', 'drop', 'sub']) mkdirSync(join(dir, n));
    for (const n of ['keep/a', 'drop/a', 'drop/b', 'sub/a']) writeFileSync(join(dir, n), 'x');
    const openat = syscallNr('openat')!;
    c.cap.setInterestingSyscalls([openat], [], { syscalls: [openat], exact: [join(dir, 'drop/b')], prefixes: [join(dir, 'keep/')] });
    const end = join(dir, 'drop', 'end');
    // opens of the files by perl (sysopen: one openat each, flags as given), from `dir`
    const script = [
      `sysopen(my $f, "${dir}/keep/a", 0)`, // under a prefix: kept
      `sysopen($f, "${dir}/drop/b", 0)`, // an exact entry: kept
      `sysopen($f, "${dir}/drop/a", 0)`, // neither: dropped
      `sysopen($f, "${dir}/drop/a", 2)`, // O_RDWR: kept
      `sysopen($f, "${dir}//drop/a", 0)`, // '//': kept
      `sysopen($f, "${dir}/sub/../drop/a", 0)`, // '..': kept
      `sysopen($f, "drop/a", 0)`, // relative: kept
      `sysopen($f, "${dir}/drop/missing", 0)`, // failed: kept
      `sysopen($f, "${end}", 64)`, // O_CREAT|O_RDONLY of a new file outside: dropped (read-only)
      `sysopen($f, "${end}", 1)`, // the end marker: O_WRONLY, kept
    ].join('; ');
    execFileSync('perl', ['-e', script], { cwd: dir });
    const opens = await c.waitFor(
      (r): r is SyscallRecord => r.kind === KIND.SYSCALL && r.nr === openat && (r.path ?? '').includes(dir.slice(5)),
      (rs) => rs.some((r) => r.path === end && r.ret >= 0 && (Number(r.args[2]) & 3) === 1),
      120_000,
    );
    const seen = opens.map((r) => `${r.path} ${Number(r.args[2]) & 0xff} ${r.ret >= 0 ? 'ok' : 'fail'}`);
    assert.equal(seen, [`${dir}/keep/a 0 ok`, `${dir}/drop/b 0 ok`, `${dir}/drop/a 2 ok`, `${dir}//drop/a 0 ok`, `${dir}/sub/../drop/a 0 ok`, `${dir}/drop/missing 0 fail`, `${end} 1 ok`]);
  } finally {
    c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Loads the built-in `sets` and `extra` rules (made from the temporary directory) into two engines
 * with live sources side by side, the open filter on in one and off in the other, runs the shell
 * commands `cmds` (each names the directory) and then `more`, and asserts the same alerts for
 * them from both, at least `least` (and one of rule `mustHave`); returns the filter's log line and
 * the alerts (the directory's name in them as DIR).
 */
async function sameAlerts(sets: string[], extra: (dir: string) => string, cmds: (dir: string) => string[], more: (dir: string) => void, least: number, mustHave: string): Promise<{ line: string; alerts: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-open-filter-same-'));
  const token = dir.slice(dir.lastIndexOf('/') + 1);
  const files: RulesFile[] = [...builtinRulesFiles(sets).files, { name: 'extra.yaml', text: extra(dir) }];
  const runs = [true, false].map((filterOpens) => {
    const alerts: Alert[] = [];
    const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', kernel: new KernelIngest({ hostname: 'h' }), hostname: 'h', onAlert: (a) => void alerts.push(a) });
    return { filterOpens, engine, alerts, src: undefined as ReturnType<typeof startSyscallSource> | undefined };
  });
  const logs: string[] = [];
  try {
    for (const r of runs) {
      assert.ok((await r.engine.load(files)).swapped);
      r.src = startSyscallSource({ engine: r.engine, log: (m) => logs.push(m), submit: () => undefined, hostname: 'h', capture: { filterOpens: r.filterOpens } });
    }
    const filtered = logs.find((l) => /read-only opens only of \d+ paths/.test(l));
    assert.ok(filtered, logs.join('\n'));
    writeFileSync(join(dir, 'hit-1'), 'x');
    writeFileSync(join(dir, 'miss'), 'x');
    // each command names `dir`, so its alerts are told from the machine's other processes by proc.cmdline
    for (const cmd of cmds(dir)) execFileSync('sh', ['-c', `${cmd} > /dev/null 2>&1; true`]);
    more(dir);
    execFileSync('sh', ['-c', `cat /etc/shadow ${dir}/end > /dev/null 2>&1; true`]);
    const deadline = Date.now() + 120_000;
    const ended = (as: Alert[]) => as.some((a) => a.message.includes(`${dir}/end`));
    while (!runs.every((r) => ended(r.alerts)) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    const mine = (as: Alert[]) =>
      as
        .filter((a) => a.message.includes(token))
        .map((a) => `${a.rule}: ${a.message.replaceAll(token, 'DIR')}`)
        .sort();
    const [on, off] = runs.map((r) => mine(r.alerts));
    assert.ok(off!.length >= least, off!.join('\n'));
    assert.ok(
      off!.some((a) => a.startsWith(mustHave)),
      off!.join('\n'),
    );
    assert.equal(on, off);
    return { line: filtered, alerts: on! };
  } finally {
    for (const r of runs) {
      await r.src?.stop();
      await r.engine.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

live('open filter: the bundled stable rules give the same alerts with the filter on and off', async () => {
  await sameAlerts(
    ['syscall'],
    (dir) => rule('Open below hit', `evt.type = openat and evt.is_open_read = true and fd.name startswith ${dir}/hit`, 'file=%fd.name cmd=%proc.cmdline'),
    (dir) => [
      `cat /etc/shadow ${dir}/miss`,
      `cat ${dir}/miss ${dir}/hit-1`,
      `cd /etc && cat shadow ${dir}/miss`,
      `cat //etc//shadow ${dir}/miss`,
      `cat ${dir}/../../etc/shadow`,
      `cat /etc/pam.d/chsh ${dir}/miss`,
      `echo x > ${dir}/written; cat ${dir}/written`,
    ],
    () => undefined,
    6,
    'Open below hit',
  );
});

live('open filter: every built-in rule set gives the same alerts with the filter on and off, tar reading files', async () => {
  // a rule of the incubating set's kind: the opens of any path by a process named tar
  const { line, alerts } = await sameAlerts(
    ['syscall', 'syscall-incubating', 'syscall-sandbox'],
    (dir) => rule('Tar reads below', `evt.type = openat and evt.is_open_read = true and proc.name = tar and fd.name contains ${dir.slice(dir.lastIndexOf('/'))}/`, 'file=%fd.name cmd=%proc.cmdline'),
    (dir) => [`tar -cf - ${dir}/miss ${dir}/hit-1 2> /dev/null | cat`, `cat /etc/shadow ${dir}/miss`, `cat ${dir}/hit-1`],
    // perl renamed tar after its exec (its table name stays perl: no alert), and the child it forks
    // then (named tar at its fork: an alert), its command line naming `dir`
    (dir) => execFileSync('perl', ['-e', `my $n = "tar"; syscall(157, 15, $n); open(my $f, "<", "${dir}/miss"); if (!fork) { open(my $g, "<", "${dir}/hit-1"); exit 0 } wait`, dir]),
    4,
    'Tar reads below',
  );
  assert.match(line, /or by \d+ process names/);
  // tar's two opens, and the renamed perl's child's: its parent's open is perl's in the table
  const tar = alerts.filter((a) => a.startsWith('Tar reads below'));
  assert.is(tar.length, 3, tar.join('\n'));
  assert.ok(
    tar.some((a) => a.includes('hit-1 cmd=perl')),
    tar.join('\n'),
  );
});

live('open filter: rae run sets it from the rules, and syscall.filterOpens: false turns it off', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-open-filter-run-'));
  const runs: RaeRun[] = [];
  try {
    const cfg = join(dir, 'config.yaml');
    writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\ncontainers:\n  enabled: false\n');
    const rulesFile = join(dir, 'rules.yaml');
    writeFileSync(rulesFile, rule('shadow read', 'evt.type = openat and evt.is_open_read = true and fd.name = /etc/shadow'));
    const args = (state: string, extra: string[]) => ['--config', cfg, '--state-dir', join(dir, state), '-o', 'rules.builtIn=[]', '-r', rulesFile, ...extra];
    const on = startRae(args('on', []));
    runs.push(on);
    await on.waitLog(/syscall: capturing \d+ syscalls the rules need \([a-z ]*openat\); read-only opens only of 1 paths and 0 prefixes the rules can match\n/, 0, 300_000);
    const off = startRae(args('off', ['-o', 'syscall.filterOpens=false']));
    runs.push(off);
    await off.waitLog(/syscall: capturing \d+ syscalls the rules need \([a-z ]*openat\)\n/, 0, 300_000);
  } finally {
    for (const r of runs) await r.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
