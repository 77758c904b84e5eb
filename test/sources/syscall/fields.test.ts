// The fields the byte path provides against those a ruleset uses (kernelFieldGaps), and `rae
// run`'s choice of path from them (chooseSyscallPath): the bundled default syscall rules run on
// the byte path; a rule using a field only the objects path has sends the run to the objects path.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { kernelFieldGaps } from '../../../host/sources/syscall/fields.js';
import { chooseSyscallPath } from '../../../host/sources/syscall/source.js';

const bundled = loadRules([{ name: 'falco_rules.yaml', text: readFileSync('rules/syscall/falco_rules.yaml', 'utf8') }]).ruleset.rules;
const one = (condition: string, output: string) =>
  loadRules([{ name: 'r.yaml', text: `- rule: r\n  desc: d\n  condition: ${condition}\n  output: ${JSON.stringify(output)}\n  priority: NOTICE\n` }], { suggestedOutput: false }).ruleset.rules;

test('kernel fields: conditions and outputs are checked, ancestors and evt.arg.* by their name', () => {
  const g = kernelFieldGaps(one('evt.type = open and proc.aname[3] = sh and fd.l4proto = tcp and proc.sid = 1 and tolower(evt.arg.gid) = x and evt.arg.addr = 3', '%user.loginname %proc.sname %thread.tid %evt.arg.flags %proc.pname %evt.time %evt.arg.addr'));
  assert.equal(g, { condition: ['evt.arg.addr', 'evt.arg.gid'], output: ['evt.arg.addr'] });
});

test('kernel fields: disabled and other-source rules do not count', () => {
  const rules = one('evt.type = open and evt.arg.addr = 1', '%evt.arg.addr');
  rules[0]!.enabled = false;
  assert.equal(kernelFieldGaps(rules), { condition: [], output: [] });
});

test('kernel fields: the bundled syscall rules run on the byte path; a field only the objects path has selects it', () => {
  const c = chooseSyscallPath(bundled);
  assert.is(c.path, 'bytes', c.why);
  assert.equal(c.missing, []);
  // container metadata comes from the container table on the byte path
  assert.not.ok(c.neither.includes('container.image.repository'), c.neither.join(' '));
  const o = chooseSyscallPath([...bundled, ...one('evt.type = ptrace and evt.arg.addr = 1', '%evt.arg.addr')]);
  assert.is(o.path, 'objects');
  assert.equal(o.missing, ['evt.arg.addr']);
  assert.match(o.why, 'the byte path lacks evt.arg.addr');
});

/** The header, constant and process fields users' own rules often read (the byte path has them all in conditions). */
const USER_FIELDS = ['proc.sid', 'proc.vpgid', 'proc.sname', 'container.name', 'evt.time', 'evt.rawtime', 'evt.dir', 'evt.source', 'evt.hostname', 'evt.is_open_exec', 'thread.tid', 'user.loginname', 'thread.cap_effective', 'thread.cap_permitted', 'thread.cap_inheritable'];

test('kernel fields: a rule reading proc.sid/vpgid/sname, container.name, evt.time/rawtime/dir/source/hostname/is_open_exec, thread.tid, user.loginname or thread.cap_* keeps the byte path', () => {
  for (const f of USER_FIELDS) {
    const rules = one(`evt.type = openat and ${f} exists`, `%${f}`);
    assert.equal(kernelFieldGaps(rules), { condition: [], output: [] }, f);
    assert.is(chooseSyscallPath([...bundled, ...rules]).path, 'bytes', f);
  }
  const all = one(`evt.type = openat and ${USER_FIELDS.map((f) => `${f} exists`).join(' and ')} and evt.dir = "<" and evt.source = syscall and evt.is_open_exec = false`, USER_FIELDS.map((f) => `%${f}`).join(' '));
  const c = chooseSyscallPath([...bundled, ...all]);
  assert.is(c.path, 'bytes', c.why);
  assert.equal(c.missing, []);
});

test('kernel fields: a rule reading evt.arg.pid, dirfd, res or linkpath keeps the byte path', () => {
  for (const [type, arg, value] of [['ptrace', 'pid', '1'], ['openat', 'dirfd', 'AT_FDCWD'], ['unlinkat', 'res', 'ENOENT'], ['symlinkat', 'linkpath', '/etc/shadow']] as const) {
    const rules = one(`evt.type = ${type} and evt.arg.${arg} = "${value}"`, `%evt.arg.${arg}`);
    assert.equal(kernelFieldGaps(rules), { condition: [], output: [] }, arg);
    const c = chooseSyscallPath([...bundled, ...rules]);
    assert.is(c.path, 'bytes', `${arg}: ${c.why}`);
  }
});

test.run();
