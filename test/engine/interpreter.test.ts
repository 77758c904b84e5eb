// Operator semantics of the reference interpreter, missing fields included
// (reference/falco-language.md A.5, A.8): one table row = condition, fields of the event, verdict.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Interpreter } from '../../host/engine/interpreter.js';
import { FieldEvent } from '../../host/engine/field-event.js';
import { load } from './helpers.js';

function verdict(cond: string, fields: Record<string, unknown>, source = 'syscall'): boolean {
  const r = load(`- rule: r\n  desc: d\n  condition: '${cond.replaceAll("'", "''")}'\n  output: o\n  priority: INFO\n  source: ${source}\n  warn_evttypes: false\n`);
  const rule = r.ruleset.rules[0];
  assert.ok(rule, r.diagnostics.map((d) => d.message).join('; '));
  return new Interpreter().evaluate(rule!.condition, new FieldEvent(fields, { source, timeNs: 1n, num: 1n }));
}

const E = {}; // an event without the field
const cases: Array<[string, Record<string, unknown>, boolean]> = [
  // missing fields: every comparison is false, != too; not inverts
  ['proc.name = cat', E, false],
  ['proc.name != cat', E, false],
  ['not proc.name = cat', E, true],
  ['proc.name exists', E, false],
  ['not proc.name exists', E, true],
  ['proc.name in (cat, dog)', E, false],
  ['proc.name exists', { 'proc.name': '' }, true],
  // strings
  ['proc.name = cat', { 'proc.name': 'cat' }, true],
  ['proc.name == cat', { 'proc.name': 'cat' }, true],
  ['proc.name != cat', { 'proc.name': 'dog' }, true],
  ['proc.cmdline contains "at /e"', { 'proc.cmdline': 'cat /etc/shadow' }, true],
  ['proc.cmdline contains ""', { 'proc.cmdline': 'x' }, true],
  ['proc.cmdline icontains SHADOW', { 'proc.cmdline': 'cat /etc/shadow' }, true],
  ['proc.cmdline icontains SHADOW', { 'proc.cmdline': 'cat /etc/shadÖw' }, false],
  ['fd.name startswith /etc/', { 'fd.name': '/etc/shadow' }, true],
  ['fd.name startswith /etc/', { 'fd.name': '/etcx' }, false],
  ['fd.name endswith shadow', { 'fd.name': '/etc/shadow' }, true],
  ['fd.name glob /etc/*', { 'fd.name': '/etc/a/b' }, true],
  ['fd.name glob /etc/?', { 'fd.name': '/etc/ab' }, false],
  ['fd.name glob "/etc/[a-c]x"', { 'fd.name': '/etc/bx' }, true],
  ['fd.name glob "/etc/[!a-c]x"', { 'fd.name': '/etc/bx' }, false],
  ['fd.name iglob /ETC/*', { 'fd.name': '/etc/x' }, true],
  ['proc.name regex "ca."', { 'proc.name': 'cat' }, true],
  ['proc.name regex "a."', { 'proc.name': 'cat' }, false],
  ['proc.name in (cat, dog)', { 'proc.name': 'dog' }, true],
  ['proc.name intersects (cat, dog)', { 'proc.name': 'dog' }, true],
  ['proc.name in ()', { 'proc.name': 'dog' }, false],
  ['fd.name pmatch (/var/run, /opt/*/sub)', { 'fd.name': '/var/run/docker.sock' }, true],
  ['fd.name pmatch (/var/run)', { 'fd.name': '/var/runx' }, false],
  ['fd.name pmatch (/var/run)', { 'fd.name': '/var' }, false],
  ['fd.name pmatch (/opt/*/sub)', { 'fd.name': '/opt/app/sub/file' }, true],
  ['fd.name pmatch (/)', { 'fd.name': '/anything' }, true],
  ['proc.name startswith anyof (ca, do)', { 'proc.name': 'dog' }, true],
  ['proc.name startswith allof (ca, c)', { 'proc.name': 'cat' }, true],
  ['proc.name startswith allof (ca, do)', { 'proc.name': 'cat' }, false],
  ['proc.name = oneof (cat, cat)', { 'proc.name': 'cat' }, false],
  ['proc.name = oneof (cat, dog)', { 'proc.name': 'cat' }, true],
  ['evt.buffer bcontains 6174', { 'evt.buffer': 'cat' }, true],
  ['evt.buffer bstartswith 6361', { 'evt.buffer': 'cat' }, true],
  ['evt.buffer bstartswith 6174', { 'evt.buffer': 'cat' }, false],
  // numbers
  ['fd.num >= 0', { 'fd.num': 3 }, true],
  ['fd.num < 0', { 'fd.num': 3 }, false],
  ['evt.rawres = -2', { 'evt.rawres': -2 }, true],
  ['user.uid = 0', { 'user.uid': 0 }, true],
  ['user.uid != 0', { 'user.uid': 1000 }, true],
  ['user.uid in (0, 1000)', { 'user.uid': 1000 }, true],
  ['user.uid = -1', { 'user.uid': 4294967295 }, true],
  ['fd.sport in (22, 2222)', { 'fd.sport': 2222 }, true],
  ['proc.tty != 0', { 'proc.tty': 34816 }, true],
  // booleans
  ['evt.is_open_read = true', { 'evt.is_open_read': true }, true],
  ['evt.is_open_read = false', { 'evt.is_open_read': true }, false],
  ['container.privileged = true', { 'container.privileged': 'true' }, true],
  // ancestors: un-indexed = any ancestor from the parent up, not the process itself
  ['proc.aname = sshd', { 'proc.name': 'sshd', 'proc.aname': ['bash'] }, false],
  ['proc.aname = sshd', { 'proc.aname': ['bash', 'sshd'] }, true],
  ['proc.aname in (sshd, login)', { 'proc.aname': ['bash', 'login'] }, true],
  ['proc.aname[2] = sshd', { 'proc.aname': ['bash', 'sshd'] }, true],
  ['proc.aname[1] = bash', { 'proc.pname': 'bash' }, true],
  ['proc.aname[3] = sshd', { 'proc.aname': ['bash', 'sshd'] }, false],
  ['not proc.aname[3] = sshd', { 'proc.aname': ['bash', 'sshd'] }, true],
  // IP fields and either-endpoint fields
  ['fd.sip = 10.0.0.1', { 'fd.sip': '10.0.0.1' }, true],
  ['fd.sip = "::1"', { 'fd.sip': '0:0:0:0:0:0:0:1' }, true],
  ['fd.ip = 10.0.0.1', { 'fd.cip': '192.168.0.2', 'fd.sip': '10.0.0.1' }, true],
  ['fd.ip != 10.0.0.1', { 'fd.cip': '192.168.0.2', 'fd.sip': '10.0.0.1' }, false],
  ['fd.ip != 10.0.0.9', { 'fd.cip': '192.168.0.2', 'fd.sip': '10.0.0.1' }, true],
  ['fd.net = 10.0.0.0/8', { 'fd.cip': '192.168.0.2', 'fd.sip': '10.3.0.1' }, true],
  ['fd.snet in (172.16.0.0/12)', { 'fd.sip': '172.20.1.1' }, true],
  ['fd.snet in (172.16.0.0/12)', { 'fd.sip': '172.32.1.1' }, false],
  // transformers
  ['tolower(proc.name) = cat', { 'proc.name': 'CaT' }, true],
  ['toupper(proc.name) = CAT', { 'proc.name': 'cat' }, true],
  ['b64(proc.name) = hello', { 'proc.name': 'aGVsbG8=' }, true],
  ['basename(fd.name) = cat', { 'fd.name': '/usr/bin/cat' }, true],
  ['len(proc.name) = 3', { 'proc.name': 'cat' }, true],
  ['proc.name = val(proc.pname)', { 'proc.name': 'bash', 'proc.pname': 'bash' }, true],
  ['proc.name = val(proc.pname)', { 'proc.name': 'bash' }, false],
  ['proc.name != val(proc.pname)', { 'proc.name': 'bash' }, false],
  // boolean structure
  ['proc.name = a or proc.name = b and proc.pname = c', { 'proc.name': 'a' }, true],
  ['not proc.name = a and proc.pname = c', { 'proc.name': 'b', 'proc.pname': 'c' }, true],
];

for (const [cond, fields, expected] of cases) {
  test(`interpreter: ${cond} on ${JSON.stringify(fields)}`, () => {
    assert.is(verdict(cond, fields), expected);
  });
}

// List fields of the orchestrator audit source: `in` = every value in the set (vacuously true on an
// empty list), `intersects` = at least one.
const k8s: Array<[string, Record<string, unknown>, boolean]> = [
  ['ka.req.pod.containers.image.repository in (nginx, redis)', { 'ka.req.pod.containers.image.repository': ['nginx', 'redis'] }, true],
  ['ka.req.pod.containers.image.repository in (nginx)', { 'ka.req.pod.containers.image.repository': ['nginx', 'redis'] }, false],
  ['ka.req.pod.containers.image.repository in (nginx)', { 'ka.req.pod.containers.image.repository': [] }, true],
  ['ka.req.pod.containers.image.repository intersects (nginx)', { 'ka.req.pod.containers.image.repository': ['nginx', 'redis'] }, true],
  ['ka.req.pod.containers.image.repository intersects (nginx)', { 'ka.req.pod.containers.image.repository': [] }, false],
  ['ka.req.pod.containers.privileged intersects (true)', { 'ka.req.pod.containers.privileged': ['false', 'true'] }, true],
  ['ka.verb in (create, update)', { 'ka.verb': 'create' }, true],
  ['ka.target.subresource exists', {}, false],
];
for (const [cond, fields, expected] of k8s) {
  test(`interpreter (k8s_audit): ${cond} on ${JSON.stringify(fields)}`, () => {
    assert.is(verdict(cond, fields, 'k8s_audit'), expected);
  });
}

test.run();
