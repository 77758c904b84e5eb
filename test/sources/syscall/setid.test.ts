// user.* and group.* follow set*id calls without exec, on real kernel records, the C translator
// against the TypeScript oracle: perl (as root) opens a marker, calls setresgid(2, 2, 2) and
// setuid(2) (x86-64 119 and 105: the user and group `bin`), opens a second marker, then tries
// setuid(0), which fails. libsinsp sets the thread's user and group on the exit of every
// successful set*id call (parsers.cpp parse_setuid_exit, parse_setresgid_exit and siblings), so
// its setuid exit event already carries the new user: the incubating rule 'Non sudo setuid'
// (`not (user.name=root or user.uid=0)`) fires on both setuid calls of the now non-root perl,
// as upstream's event-generator NonSudoSetuid action makes it fire, and the second marker's open
// carries the new ids. Before the probe reported set*id exits, both setuid events read root.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/abi/records.js';
import { UserNames } from '../../../host/sources/syscall/users.js';
import { compileAll } from '../../../support/differential.js';
import { corpusText } from '../../../support/corpus.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('setid.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['user.uid', 'user.name', 'group.gid', 'group.name', 'evt.type', 'fd.name', 'evt.res'];

/** Perl (perl-base): opens ARGV[0], becomes uid/gid 2 with setresgid and setuid (no exec), prints its ids, opens ARGV[1], then tries setuid(0). */
const SETID_PL = [
  'open(my $a, "<", $ARGV[0]) or die "open: $!"; close $a;',
  'syscall(119, 2, 2, 2) == 0 or die "setresgid: $!";',
  'syscall(105, 2) == 0 or die "setuid: $!";',
  'print "$< $> $( $)\\n";',
  'open(my $b, "<", $ARGV[1]) or die "open: $!"; close $b;',
  'syscall(105, 0) == -1 or die "setuid(0) succeeded";',
].join(' ');

run_("setid: setresgid and setuid without exec change user.* and group.* from the call's own event on, and 'Non sudo setuid' fires", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-setid-'));
  let printed = '';
  let rec: ReturnType<typeof recordKernel>;
  try {
    for (const f of ['before', 'after']) writeFileSync(join(dir, f), 'x\n', { mode: 0o644 });
    execFileSync('chmod', ['755', dir]);
    rec = recordKernel(['openat', 'open', 'setuid', 'setresgid'], () => {
      printed = execFileSync('/usr/bin/perl', ['-e', SETID_PL, join(dir, 'before'), join(dir, 'after')], { encoding: 'utf8' });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.is(printed.split(' ').slice(0, 2).join(' '), '2 2', `perl's real and effective uid: ${printed}`);
  const names = new UserNames();
  const bin = names.user(2)!;
  assert.ok(bin, 'uid 2 has a passwd name');

  const loaded = loadRules([
    { name: 'falco_rules.yaml', text: corpusText('falco_rules.yaml') },
    { name: 'falco-incubating_rules.yaml', text: corpusText('falco-incubating_rules.yaml') },
  ]);
  assert.ok(loaded.ok);
  const rule = 'Non sudo setuid';
  const rules = loaded.ruleset.rules.filter((r) => r.name === rule);
  assert.is(rules.length, 1);
  const m = await compileAll(rules);
  const refs = FIELDS.map(fieldRef);

  // the C translator and the oracle: every eval record slot and every rendered field alike
  const pass = translatorsPass(rec, m, 'setid-test', refs);
  assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 10), []);

  // what perl's events carry through the oracle, and what matched through the C translator
  const perl = new Map<number, Record<string, unknown>>();
  const dv = new DataView(rec.buf.buffer);
  bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'setid-test' }), (off, ev) => {
    const v = Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)]));
    const name = String(v['fd.name'] ?? '');
    if (v['evt.type'] === 'setuid' || v['evt.type'] === 'setresgid' || name.startsWith(dir)) perl.set(off, { ...v, pid: dv.getUint32(off + HDR.pid, true) });
  });
  const matched = bytesPass(rec, m, new KernelIngest({ hostname: 'setid-test' }), () => {});
  const pid = [...perl.values()].find((v) => v['fd.name'] === join(dir, 'before'))?.pid;
  assert.ok(pid, 'the first marker open is recorded');
  const mine = [...perl].filter(([, v]) => v.pid === pid);
  const at = (pred: (v: Record<string, unknown>) => boolean, what: string) => {
    const hits = mine.filter(([, v]) => pred(v));
    assert.is(hits.length, 1, `${what}: ${hits.length} events`);
    return hits[0]!;
  };
  const [, before] = at((v) => v['fd.name'] === join(dir, 'before'), 'before');
  const [resgidOff, resgid] = at((v) => v['evt.type'] === 'setresgid', 'setresgid');
  const [uidOff, setuid] = at((v) => v['evt.type'] === 'setuid' && v['evt.res'] === 'SUCCESS', 'setuid(2)');
  const [rootOff, setroot] = at((v) => v['evt.type'] === 'setuid' && v['evt.res'] !== 'SUCCESS', 'setuid(0)');
  const [, after] = at((v) => v['fd.name'] === join(dir, 'after'), 'after');
  const ids = (v: Record<string, unknown>) => [v['user.uid'], v['user.name'], v['group.gid'], v['group.name']];
  const group = names.group(2);
  assert.equal(ids(before), [0, 'root', 0, 'root']);
  assert.equal(ids(resgid), [0, 'root', 2, group], 'setresgid: the new group, the same user');
  assert.equal(ids(setuid), [2, bin, 2, group], 'setuid(2): the new user on its own event');
  assert.equal(ids(after), [2, bin, 2, group]);
  assert.equal(ids(setroot), [2, bin, 2, group], 'a failed setuid(0) changes nothing');
  assert.equal(matched.get(uidOff), [rule], `${rule} on setuid(2) (C translator)`);
  assert.equal(matched.get(rootOff), [rule], `${rule} on the failed setuid(0) (C translator)`);
  assert.is(matched.get(resgidOff), undefined);
});

test.run();
