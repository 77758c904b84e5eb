// The evt.type set of a rule (reference/falco-language.md G and libsinsp's filter_ppm_codes tests).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EVENT_NAMES } from '../../host/abi/event-names.js';
import { load } from './helpers.js';
import { corpusText } from '../../support/corpus.js';

function evttypes(cond: string): string[] {
  const r = load(`- macro: m\n  condition: evt.type = mmap\n- rule: r\n  desc: d\n  condition: ${cond}\n  output: o\n  priority: INFO\n  warn_evttypes: false\n`);
  const rule = r.ruleset.rules[0];
  assert.ok(rule, r.diagnostics.map((d) => d.message).join('; '));
  return [...rule!.evttypes!].sort();
}

const ALL = EVENT_NAMES.size;
const cases: Array<[string, string[] | { allBut: string[] }]> = [
  ['evt.type=openat and not (evt.type=close and proc.name=nginx)', ['openat']],
  ['evt.type=close or evt.type!=openat', { allBut: ['openat'] }],
  ['evt.type in (connect, execve, accept, mmap, container) and not (proc.name=cat and evt.type=mmap)', ['accept', 'connect', 'container', 'execve', 'mmap']],
  ['evt.type in (open, openat) and proc.name = cat', ['open', 'openat']],
  ['not evt.type = open', { allBut: ['open'] }],
  ['not not evt.type = open', ['open']],
  ['not (evt.type = open or evt.type = close)', { allBut: ['close', 'open'] }],
  ['proc.name = cat', { allBut: [] }],
  ['not proc.name = cat', { allBut: [] }],
  ['evt.type exists', { allBut: [] }],
  ['not evt.type exists', []],
  ['evt.type in ()', []],
  ['evt.num = 0', []],
  ['evt.num != 0 and evt.type = open', ['open']],
  ['not evt.num = 0', { allBut: [] }],
  ['evt.type = open and evt.num = 0', []],
  ['evt.type = open or evt.num = 0', ['open']],
  ['m and proc.name = x', ['mmap']],
  ['not m', { allBut: ['mmap'] }],
  ['syscall.type = execve', ['execve']],
  ['evt.type startswith open', { allBut: [] }],
];

for (const [cond, expected] of cases) {
  test(`evttypes: ${cond}`, () => {
    const got = evttypes(cond);
    if (Array.isArray(expected)) assert.equal(got, expected);
    else {
      assert.is(got.length, ALL - expected.allBut.length);
      for (const n of expected.allBut) assert.not.ok(got.includes(n), `${n} excluded`);
    }
  });
}

test('evttypes: a rule matching too many types warns LOAD_NO_EVTTYPE unless warn_evttypes is false', () => {
  const yaml = (warn: boolean) => `- rule: r\n  desc: d\n  condition: proc.name = cat\n  output: o\n  priority: INFO\n  warn_evttypes: ${warn}\n`;
  assert.equal(
    load(yaml(true)).diagnostics.map((d) => d.code),
    ['LOAD_NO_EVTTYPE'],
  );
  assert.equal(
    load(yaml(false)).diagnostics.map((d) => d.code),
    [],
  );
});

test('evttypes: every stable corpus rule has the types of the reference table', () => {
  const expected: Record<string, string> = {
    'Read sensitive file untrusted': 'open,openat,openat2',
    'Run shell untrusted': 'execve,execveat',
    'Contact K8S API Server From Container': 'connect',
    'Create Symlink Over Sensitive Files': 'symlink,symlinkat',
    'Create Hardlink Over Sensitive Files': 'link,linkat',
    'Packet socket created in container': 'socket',
    'Redirect STDOUT/STDIN to Network Connection in Container': 'dup,dup2,dup3',
    'Linux Kernel Module Injection Detected': 'finit_module,init_module',
    'PTRACE attached to process': 'ptrace',
    'Disallowed SSH Connection Non Standard Port': 'connect,sendmsg,sendto',
    'Fileless execution via memfd_create': 'execve,execveat',
  };
  const r = load(corpusText('falco_rules.yaml'));
  const union = new Set<string>();
  for (const rule of r.ruleset.rules) {
    for (const t of rule.evttypes!) union.add(t);
    if (expected[rule.name]) assert.is([...rule.evttypes!].sort().join(','), expected[rule.name], rule.name);
  }
  assert.is([...union].sort().join(','), 'connect,dup,dup2,dup3,execve,execveat,finit_module,init_module,link,linkat,open,openat,openat2,ptrace,sendmsg,sendto,socket,symlink,symlinkat');
});

test.run();
