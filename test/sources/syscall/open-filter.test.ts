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

test('open filter: a rule that can match a read-only open of any path turns it off', () => {
  assert.is(openPathFilter(rulesOf(rule('any read', 'evt.type = openat and evt.is_open_read = true and proc.name = cat'))), undefined);
  // no event type: the rule sees every recorded open
  assert.is(openPathFilter(rulesOf(rule('no type', 'proc.name = cat and fd.name contains shadow'))), undefined);
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
  assert.equal(f, { exact: [], prefixes: ['/opt/', '/srv/a/', '/srv/b/', '/var/lib'] });
});

test('open filter: a glob whose dots sit in a bracket or behind an escape still bounds by its prefix', () => {
  // '/srv[/.]x' matches the plain path '/srv/x': not "never", whatever its literal text holds
  const f = openPathFilter(rulesOf(rule('bracket', "evt.type = openat and fd.name glob '/srv[/.]x'") + rule('dots', "evt.type = openat and fd.name glob '/home/*/.ssh/*'")));
  assert.equal(f, { exact: [], prefixes: ['/srv'] });
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

live('open filter: the bundled stable rules give the same alerts with the filter on and off', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-open-filter-same-'));
  const token = dir.slice(dir.lastIndexOf('/') + 1);
  const files: RulesFile[] = [
    ...builtinRulesFiles(['syscall']).files,
    { name: 'extra.yaml', text: rule('Open below hit', `evt.type = openat and evt.is_open_read = true and fd.name startswith ${dir}/hit`, 'file=%fd.name cmd=%proc.cmdline') },
  ];
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
    assert.ok(
      logs.some((l) => /read-only opens only of \d+ paths/.test(l)),
      logs.join('\n'),
    );
    writeFileSync(join(dir, 'hit-1'), 'x');
    writeFileSync(join(dir, 'miss'), 'x');
    // each command names `dir`, so its alerts are told from the machine's other processes by proc.cmdline
    const cmds = [
      `cat /etc/shadow ${dir}/miss`,
      `cat ${dir}/miss ${dir}/hit-1`,
      `cd /etc && cat shadow ${dir}/miss`,
      `cat //etc//shadow ${dir}/miss`,
      `cat ${dir}/../../etc/shadow`,
      `cat /etc/pam.d/chsh ${dir}/miss`,
      `echo x > ${dir}/written; cat ${dir}/written`,
      `cat /etc/shadow ${dir}/end`,
    ];
    for (const cmd of cmds) execFileSync('sh', ['-c', `${cmd} > /dev/null 2>&1; true`]);
    const deadline = Date.now() + 120_000;
    const ended = (as: Alert[]) => as.some((a) => a.message.includes(`${dir}/end`));
    while (!runs.every((r) => ended(r.alerts)) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    const mine = (as: Alert[]) =>
      as
        .filter((a) => a.message.includes(token))
        .map((a) => `${a.rule}: ${a.message}`)
        .sort();
    const [on, off] = runs.map((r) => mine(r.alerts));
    assert.ok(off!.length >= 6, off!.join('\n'));
    assert.ok(
      off!.some((a) => a.startsWith('Open below hit')),
      off!.join('\n'),
    );
    assert.equal(on, off);
  } finally {
    for (const r of runs) {
      await r.src?.stop();
      await r.engine.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
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
