// The fields the byte path provides against those a ruleset uses (kernelFieldGaps, missingFields),
// and the load-time warnings `rae run` prints from them (missingFieldWarnings): one per field,
// naming the rules that read it as missing.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { kernelFieldGaps, missingFields } from '../../../host/sources/syscall/fields.js';
import { missingFieldWarnings } from '../../../host/sources/syscall/source.js';

const bundled = loadRules([{ name: 'falco_rules.yaml', text: readFileSync('rules/syscall/falco_rules.yaml', 'utf8') }]).ruleset.rules;
const one = (condition: string, output: string) =>
  loadRules([{ name: 'r.yaml', text: `- rule: r\n  desc: d\n  condition: ${condition}\n  output: ${JSON.stringify(output)}\n  priority: NOTICE\n` }], { suggestedOutput: false }).ruleset.rules;

test('kernel fields: conditions and outputs are checked, ancestors and evt.arg.* by their name', () => {
  const g = kernelFieldGaps(
    one('evt.type = open and proc.aname[3] = sh and fd.l4proto = tcp and proc.sid = 1 and tolower(evt.arg.gid) = x and evt.arg.addr = 3', '%user.loginname %proc.sname %thread.tid %evt.arg.flags %proc.pname %evt.time %evt.arg.addr'),
  );
  assert.equal(g, { condition: ['evt.arg.addr', 'evt.arg.gid'], output: ['evt.arg.addr'] });
});

test('kernel fields: disabled and other-source rules do not count', () => {
  const rules = one('evt.type = open and evt.arg.addr = 1', '%evt.arg.addr');
  rules[0]!.enabled = false;
  assert.equal(kernelFieldGaps(rules), { condition: [], output: [] });
});

test('kernel fields: a field kernel events lack is a warning naming the field and the rules that use it', () => {
  const before = missingFieldWarnings(missingFields(bundled));
  // container and pod metadata comes from the container table: no warning
  assert.not.ok(
    before.some((l) => /provide (container|k8s)\./.test(l)),
    before.join('\n'),
  );
  assert.not.ok(before.some((l) => l.includes('evt.arg.addr')));
  const rules = [...bundled, ...one('evt.type = ptrace and evt.arg.addr = 1', '%evt.arg.addr')];
  assert.equal(
    missingFields(rules).filter((m) => m.rule === 'r'),
    [
      { rule: 'r', field: 'evt.arg.addr', where: 'condition' },
      { rule: 'r', field: 'evt.arg.addr', where: 'output' },
    ],
  );
  const after = missingFieldWarnings(missingFields(rules));
  assert.equal(
    after.filter((l) => l.includes('evt.arg.addr')),
    ['syscall: warning: kernel events do not provide evt.arg.addr, it reads as missing in rule "r" (condition), "r" (output)'],
  );
  // a field many rules read names the first five
  const many = missingFieldWarnings(Array.from({ length: 7 }, (_, i) => ({ rule: `r${i}`, field: 'k8s.pod.name', where: 'condition' as const })));
  assert.equal(many, ['syscall: warning: kernel events do not provide k8s.pod.name, it reads as missing in rule "r0" (condition), "r1" (condition), "r2" (condition), "r3" (condition), "r4" (condition) and 2 more']);
});

test('kernel fields: the built-in rules print evt.args and proc.exe_ino.* from kernel events: no warning for them', () => {
  const sandbox = loadRules([
    { name: 'falco_rules.yaml', text: readFileSync('rules/syscall/falco_rules.yaml', 'utf8') },
    { name: 'falco-sandbox_rules.yaml', text: readFileSync('rules/syscall-sandbox/falco-sandbox_rules.yaml', 'utf8') },
  ]).ruleset.rules;
  for (const rules of [bundled, sandbox]) {
    const used = rules.filter((r) => r.output.some((t) => t.kind === 'field' && /^(evt\.args|proc\.exe_ino\.)/.test(t.canonical)));
    assert.ok(used.length > 0, 'the rules print them');
    assert.equal(
      missingFieldWarnings(missingFields(rules)).filter((l) => /evt\.args|exe_ino/.test(l)),
      [],
    );
  }
  // the three exe_ino fields in a condition: thread entry fields, compiled
  assert.equal(kernelFieldGaps(one('evt.type = execve and proc.exe_ino.ctime > 0 and proc.exe_ino.mtime > 0 and proc.exe_ino.ctime_duration_proc_start > 0', '%proc.exe_ino.ctime')), { condition: [], output: [] });
});

test('kernel fields: evt.args is printed for the syscalls it covers only, and reads as missing in a condition', () => {
  assert.equal(kernelFieldGaps(one('evt.type in (socket, rename, renameat, renameat2, rmdir, unlink, unlinkat)', '%evt.args')), { condition: [], output: [] });
  assert.equal(kernelFieldGaps(one('evt.type in (socket, openat)', '%evt.args')), { condition: [], output: ['evt.args'] });
  assert.equal(kernelFieldGaps(one('evt.type = socket and evt.args contains AF_PACKET', '%evt.args')), { condition: ['evt.args'], output: [] });
});

/** The header, constant and process fields users' own rules often read (the byte path has them all in conditions). */
const USER_FIELDS = [
  'proc.sid',
  'proc.vpgid',
  'proc.sname',
  'container.name',
  'evt.time',
  'evt.rawtime',
  'evt.dir',
  'evt.source',
  'evt.hostname',
  'evt.is_open_exec',
  'thread.tid',
  'user.loginname',
  'thread.cap_effective',
  'thread.cap_permitted',
  'thread.cap_inheritable',
];

test('kernel fields: a rule reading proc.sid/vpgid/sname, container.name, evt.time/rawtime/dir/source/hostname/is_open_exec, thread.tid, user.loginname or thread.cap_* are provided', () => {
  for (const f of USER_FIELDS) {
    const rules = one(`evt.type = openat and ${f} exists`, `%${f}`);
    assert.equal(kernelFieldGaps(rules), { condition: [], output: [] }, f);
  }
  const all = one(`evt.type = openat and ${USER_FIELDS.map((f) => `${f} exists`).join(' and ')} and evt.dir = "<" and evt.source = syscall and evt.is_open_exec = false`, USER_FIELDS.map((f) => `%${f}`).join(' '));
  assert.equal(missingFields(all), []);
});

test('kernel fields: a rule reading evt.arg.pid, dirfd, res or linkpath are provided', () => {
  for (const [type, arg, value] of [
    ['ptrace', 'pid', '1'],
    ['openat', 'dirfd', 'AT_FDCWD'],
    ['unlinkat', 'res', 'ENOENT'],
    ['symlinkat', 'linkpath', '/etc/shadow'],
  ] as const) {
    const rules = one(`evt.type = ${type} and evt.arg.${arg} = "${value}"`, `%evt.arg.${arg}`);
    assert.equal(kernelFieldGaps(rules), { condition: [], output: [] }, arg);
  }
});

test('kernel fields: proc.env is provided; proc.env[NAME] in conditions, and in outputs where the condition reads it (its slot)', () => {
  assert.equal(kernelFieldGaps(one('evt.type = execve and proc.env icontains GLIBC_TUNABLES and proc.env[HTTP_PROXY] != ""', '%proc.env %proc.env[HTTP_PROXY]')), { condition: [], output: [] });
  assert.equal(kernelFieldGaps(one('evt.type = execve and proc.env contains X', '%proc.env[HOME]')), { condition: [], output: ['proc.env[HOME]'] });
});

test.run();
