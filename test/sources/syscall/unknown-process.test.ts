// Processes the engine has not seen, on real kernel records, the C translator against the
// TypeScript oracle: two root perls start before the capture and are left out of its /proc
// snapshot (as a process started between the probe's attach and the bootstrap's read, or before a
// lost record), so their first records are syscalls. One (P) calls setuid(0), opens a file and
// forks two children: C1 calls setuid(0) and opens a file, C2 becomes uid/gid 2 (setresgid,
// setuid) and opens a file, then tries setuid(0); P stays running. The other (P2) calls setuid(0),
// opens a file and exits before the recording is judged. Every rule of the three syscall sets
// whose condition reads a user.* field is loaded. Before, P's and P2's events were judged with
// every process field missing and 'Non sudo setuid' (`not (user.name=root or user.uid=0)`) fired
// on their setuid(0); the children, forked from a parent with no entry, had no executable or
// command line. Now P is read from /proc (libsinsp's scap_proc_get for a thread it does not
// know), its children inherit it, P2 (gone) gets the record header's ids with libsinsp's '<NA>'
// names, and only C2's setuid calls, by a real non-root user, match.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { walkChecked } from '../../../host/engine/ir.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/abi/records.js';
import { readProcess } from '../../../host/sources/syscall/procfs.js';
import type { LookupResult, UnknownProcessOptions } from '../../../host/sources/syscall/unknown-process.js';
import { UserNames } from '../../../host/sources/syscall/users.js';
import { compileAll } from '../../../support/differential.js';
import { corpusText } from '../../../support/corpus.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin, type Recording } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('unknown-process.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'evt.res', 'fd.name', 'user.uid', 'user.name', 'group.gid', 'user.loginuid', 'proc.name', 'proc.exepath', 'proc.cmdline'];

/** P: waits for `go`, setuid(0), opens p-open, forks C1 (setuid(0), opens c1-open) and C2 (becomes uid/gid 2, opens c2-open, tries setuid(0)), writes p-done, stays. */
const P = [
  'my $d = shift; open(my $r, ">", "$d/p-ready") or die; close $r;',
  'select(undef, undef, undef, 0.02) until -e "$d/go";',
  'syscall(105, 0) == 0 or die "setuid: $!"; open(my $a, "<", "$d/p-open") or die "open: $!"; close $a;',
  'my $c1 = fork() // die "fork: $!"; if ($c1 == 0) { syscall(105, 0) == 0 or exit 1; open(my $b, "<", "$d/c1-open") or exit 2; close $b; exit 0 }',
  'waitpid($c1, 0); $? == 0 or die "C1: $?";',
  'my $c2 = fork() // die "fork: $!"; if ($c2 == 0) { syscall(119, 2, 2, 2) == 0 or exit 1; syscall(105, 2) == 0 or exit 2; open(my $b, "<", "$d/c2-open") or exit 3; close $b; syscall(105, 0) == -1 or exit 4; exit 0 }',
  'waitpid($c2, 0); $? == 0 or die "C2: $?";',
  'open(my $f, ">", "$d/p-done") or die; close $f; sleep 300;',
].join(' ');
/** P2: waits for `go`, setuid(0), opens p2-open, writes p2-done, exits. */
const P2 = [
  'my $d = shift; open(my $r, ">", "$d/p2-ready") or die; close $r;',
  'select(undef, undef, undef, 0.02) until -e "$d/go";',
  'syscall(105, 0) == 0 or die "setuid: $!"; open(my $a, "<", "$d/p2-open") or die "open: $!"; close $a;',
  'open(my $f, ">", "$d/p2-done") or die; close $f;',
].join(' ');

/** Sleeps the thread `ms` (the recording's action is synchronous). */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Waits for every one of `files`, up to 300 s (a wide margin: perl starts in milliseconds when idle). */
async function waitFor(files: string[]): Promise<void> {
  for (const until = Date.now() + 300_000; !files.every(existsSync) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
  assert.ok(files.every(existsSync), `waiting for ${files.join(', ')}`);
}

run_(
  "unknown processes: a parent started before the capture, its children and a process gone before judging get their user and process fields; no rule that reads user.* fires falsely, 'Non sudo setuid' fires only on the real non-root setuid",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rae-unknown-'));
    chmodSync(dir, 0o755);
    for (const f of ['p-open', 'p2-open', 'c1-open', 'c2-open']) writeFileSync(join(dir, f), 'x\n', { mode: 0o644 });
    const procs: ChildProcess[] = [];
    try {
      const p = spawn('/usr/bin/perl', ['-e', P, dir], { stdio: ['ignore', 'ignore', 'inherit'] });
      const p2 = spawn('/usr/bin/perl', ['-e', P2, dir], { stdio: ['ignore', 'ignore', 'inherit'] });
      procs.push(p, p2);
      const p2Exit = new Promise<number | null>((r) => p2.once('exit', r));
      await waitFor([join(dir, 'p-ready'), join(dir, 'p2-ready')]);
      const rec: Recording = recordKernel(
        ['setuid', 'setresgid', 'openat', 'open'],
        () => {
          writeFileSync(join(dir, 'go'), '');
          for (const until = Date.now() + 300_000; !(existsSync(join(dir, 'p-done')) && existsSync(join(dir, 'p2-done'))) && Date.now() < until; ) pause(20);
        },
        32,
        new Set([p.pid!, p2.pid!]),
      );
      assert.ok(existsSync(join(dir, 'p-done')) && existsSync(join(dir, 'p2-done')), 'P and its children, and P2, ran');
      assert.is(await p2Exit, 0, 'P2 has exited before its events are judged');

      const loaded = loadRules(['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml'].map((name) => ({ name, text: corpusText(name) })));
      assert.ok(loaded.ok);
      const readsUser = loaded.ruleset.rules.filter((r) => {
        let uses = false;
        walkChecked(r.condition, (n) => {
          const o = n.kind === 'cmp' ? n.left : n.kind === 'exists' ? n.operand : undefined;
          if (o?.kind === 'field' && o.canonical.startsWith('user.')) uses = true;
        });
        return r.source === 'syscall' && r.enabled && uses;
      });
      assert.ok(
        readsUser.some((r) => r.name === 'Non sudo setuid'),
        readsUser.map((r) => r.name).join(', '),
      );
      const m = await compileAll(readsUser);
      const refs = FIELDS.map(fieldRef);

      // both translators read the same /proc, and every lookup they make is told. The batch's time
      // budget (5 ms by default) is widened: on a loaded machine one /proc read can take longer, and
      // the second process would be deferred instead of read (unknown-process-fake.test.ts tests the bound).
      const read: number[] = [];
      const told: LookupResult[] = [];
      const lookups: UnknownProcessOptions = { read: (pid) => (read.push(pid), readProcess(pid)), onLookup: (r) => told.push(r), batchBudgetMs: 600_000 };
      const pass = translatorsPass(rec, m, 'unknown-test', refs, lookups);
      assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 10), []);

      // the events of P, P2 and the children through the oracle, what matched through the C translator
      const dv = new DataView(rec.buf.buffer);
      const events: Array<{ off: number; pid: number; v: Record<string, unknown> }> = [];
      bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'unknown-test', unknownProcesses: lookups }), (off, ev) => {
        events.push({ off, pid: dv.getUint32(off + HDR.pid, true), v: Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)])) });
      });
      read.length = 0;
      told.length = 0;
      const native = new KernelIngest({ hostname: 'unknown-test', unknownProcesses: lookups });
      const matched = bytesPass(rec, m, native, () => {});
      const pidOf = (file: string) => events.find((e) => e.v['fd.name'] === join(dir, file))?.pid;
      const c1 = pidOf('c1-open');
      const c2 = pidOf('c2-open');
      assert.ok(c1 && c2 && pidOf('p-open') === p.pid && pidOf('p2-open') === p2.pid, 'every marker open is recorded, by its process');
      const ours = new Set([p.pid!, p2.pid!, c1, c2]);
      const mine = events.filter((e) => ours.has(e.pid));
      const one = (pid: number, pred: (v: Record<string, unknown>) => boolean, what: string) => {
        const hits = mine.filter((e) => e.pid === pid && pred(e.v));
        assert.is(hits.length, 1, `${what}: ${hits.length} events`);
        return hits[0]!;
      };
      const setuidOk = (v: Record<string, unknown>) => v['evt.type'] === 'setuid' && v['evt.res'] === 'SUCCESS';
      const pick = (v: Record<string, unknown>, keys: string[]) => keys.map((k) => v[k]);
      const USER = ['user.uid', 'user.name', 'group.gid'];
      const PROC = ['proc.name', 'proc.exepath', 'proc.cmdline'];
      const perl = ['perl', '/usr/bin/perl', `perl -e ${P} ${dir}`];
      // P, from /proc: root, perl, its command line
      for (const e of [one(p.pid!, setuidOk, 'P setuid(0)'), one(p.pid!, (v) => v['fd.name'] === join(dir, 'p-open'), 'P open')]) {
        assert.equal(pick(e.v, USER), [0, 'root', 0]);
        assert.equal(pick(e.v, PROC), perl);
      }
      // C1, forked from P: P's executable and command line
      for (const e of [one(c1, setuidOk, 'C1 setuid(0)'), one(c1, (v) => v['fd.name'] === join(dir, 'c1-open'), 'C1 open')]) {
        assert.equal(pick(e.v, USER), [0, 'root', 0]);
        assert.equal(pick(e.v, PROC), perl);
      }
      // C2: uid 2 from its setuid on
      const bin = new UserNames().user(2);
      const c2Setuid = one(c2, setuidOk, 'C2 setuid(2)');
      const c2Fail = one(c2, (v) => v['evt.type'] === 'setuid' && v['evt.res'] !== 'SUCCESS', 'C2 setuid(0)');
      assert.equal(pick(c2Setuid.v, USER), [2, bin, 2]);
      assert.equal(pick(c2Fail.v, PROC), perl);
      // P2, gone from /proc: the header's ids, libsinsp's '<NA>' for what only /proc had
      for (const e of [one(p2.pid!, setuidOk, 'P2 setuid(0)'), one(p2.pid!, (v) => v['fd.name'] === join(dir, 'p2-open'), 'P2 open')]) {
        assert.equal(pick(e.v, USER), [0, 'root', 0]);
        assert.equal(pick(e.v, PROC), ['<NA>', '', '<NA>']);
        assert.is(String(e.v['user.loginuid']), '-1');
      }
      // only C2's setuid calls, by the non-root user bin, match (C translator)
      const fired = mine.filter((e) => matched.has(e.off)).map((e) => `${e.pid === c2 ? 'C2' : e.pid} ${e.v['evt.type']} ${e.v['evt.res']}: ${matched.get(e.off)!.join(', ')}`);
      assert.equal(fired.sort(), ['C2 setuid EPERM: Non sudo setuid', 'C2 setuid SUCCESS: Non sudo setuid']);
      // P read from /proc, P2 gone, each lookup counted once
      assert.ok(read.includes(p.pid!) && read.includes(p2.pid!), `read ${read.join(' ')}`);
      assert.is(told.length, read.length);
      assert.equal(native.unknown!.counts.procfs + native.unknown!.counts.gone, read.length);
      assert.ok(native.unknown!.counts.procfs >= 1 && native.unknown!.counts.gone >= 1, JSON.stringify(native.unknown!.counts));
    } finally {
      for (const c of procs) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test.run();
