// The C translator against the TypeScript oracle on the same real kernel records: for every event
// of the syscalls the bundled rules need, each field the bundled rules' outputs print and their
// conditions read that kernel records provide must be written to the same eval record slot with
// the same value by probes/addon/ingest.c as by the oracle (ingest.ts), and every one of those
// fields must render alike from either's records (fieldsOf, process fields from the thread entry
// each record points at), batches cut as source.ts cuts them (recording.ts translatorsPass).
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { walkChecked, type FieldRef } from '../../../host/engine/ir.js';
import { KERNEL_RECORD_FIELDS } from '../../../host/sources/syscall/fields.js';
import { compileAll } from '../../../support/differential.js';
import { kernelGate } from './collector.js';
import { recordKernel, translatorsPass } from './recording.js';

const gate = kernelGate('paths.test.ts');
const run_ = gate.run ? test : test.skip;

run_("paths: the C translator writes the bundled rules' output and condition fields as the oracle does", async () => {
  const rules = loadRules([{ name: 'falco_rules.yaml', text: readFileSync('rules/syscall/falco_rules.yaml', 'utf8') }]).ruleset.rules;
  const refs = new Map<string, FieldRef>();
  for (const r of rules) for (const t of r.output) if (t.kind === 'field') refs.set(t.canonical, { kind: 'field', def: t.def, arg: t.arg, canonical: t.canonical, type: t.def.type, isList: false });
  // and the fields their conditions read (the values the byte path's matches are rendered from)
  for (const r of rules) {
    walkChecked(r.condition, (n) => {
      for (const o of n.kind === 'cmp' ? [n.left] : n.kind === 'cmpfield' ? [n.left, n.right] : n.kind === 'exists' ? [n.operand] : []) if (o.kind === 'field' && !refs.has(o.canonical)) refs.set(o.canonical, o);
    });
  }
  const types = new Set(rules.flatMap((r) => [...(r.evttypes ?? [])]));
  const rec = recordKernel(
    [...types, 'socket'],
    () =>
      execSync(
        "cat /etc/shadow >/dev/null; cd /tmp && cat ../etc/hostname >/dev/null; sh -c 'exec 3>&1; true'; ln -s /etc /tmp/rae-paths-link-$$ && rm /tmp/rae-paths-link-$$; " +
          "timeout 1 bash -c 'exec 3<>/dev/tcp/127.0.0.1/9' 2>/dev/null; /nonexistent-rae 2>/dev/null; " +
          'perl -e \'use Socket qw(:all); socket(my $s, PF_INET6, SOCK_STREAM, 0); connect($s, pack_sockaddr_in6(9, inet_pton(AF_INET6, "::1"))); socket(my $u, PF_INET, SOCK_DGRAM, 0); send($u, "x", 0, pack_sockaddr_in(9, inet_aton("127.0.0.1")))\'; true',
        { shell: '/bin/bash' },
      ),
    64,
  );
  // every field the outputs print and the conditions read gets a slot when the record provides it
  const all = loadRules([
    {
      name: 'all.yaml',
      text: `- rule: every field\n  desc: d\n  condition: evt.type in (${[...types].join(', ')}) and (${[...refs.keys()]
        .filter((f) => !f.includes('['))
        .map((f) => `${f} exists`)
        .join(' or ')})\n  output: x\n  priority: NOTICE\n`,
    },
  ]);
  assert.ok(all.ok, all.diagnostics.map((d) => d.message).join('\n'));
  const m = await compileAll([...rules, ...all.ruleset.rules]);
  // and every one of them rendered for each event (record fields and the thread entry's)
  const { native, oracle, slots } = translatorsPass(rec, m, 'h', [...refs.values()]);
  const types0 = new Set(native.map((r) => Number(/type=(\d+)/.exec(r)![1])));
  assert.ok(native.length > 20 && types0.size >= 3, `${native.length} events of ${types0.size} types`);
  // the output and condition fields of the bundled rules that kernel records provide, all compared
  const recordFields = [...refs.keys()].filter((f) => KERNEL_RECORD_FIELDS.includes(f));
  assert.ok(
    recordFields.every((f) => slots.includes(f)),
    recordFields.filter((f) => !slots.includes(f)).join(' '),
  );
  assert.ok(recordFields.length >= 20, `${recordFields.length} record fields`);
  const diffs = native.flatMap((r, i) => (r === oracle[i] ? [] : [`native ${r}\noracle ${oracle[i]}`]));
  assert.equal(diffs.slice(0, 5), []);
  assert.is(native.length, oracle.length);
});

test.run();
