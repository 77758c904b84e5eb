// Processes the engine has not seen, on real kernel records, the C translator against the
// TypeScript oracle: root processes call setuid(0) (they stay root) and the recording is judged
// without their process records (their PROC, FORK and EXEC records taken out, as when the ring
// lost them), so their first record is the syscall. One is still running when the batch is
// judged (its entry is read from /proc, as libsinsp reads a thread it does not know), the other
// has exited (its entry holds what the record's header says: pid, uid, gid). Before, both
// events were judged with every process field missing, so 'Non sudo setuid' (`not
// (user.name=root or user.uid=0)`) fired on them; now it does not, the user fields read root, and
// the lookups are counted by kind (the metric enginesecurity_engine_syscall_thread_lookups_total).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { lookupField } from '../../../host/engine/fields/index.js';
import type { FieldRef } from '../../../host/engine/ir.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR, KIND } from '../../../host/sources/syscall/abi.js';
import { compileAll } from '../../runtime/differential-helpers.js';
import { corpusText } from '../../helpers/corpus.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin, type Recording } from './recording.js';

const gate = kernelGate('unknown-process.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'user.uid', 'user.name', 'group.gid', 'proc.name', 'proc.exepath'];
const ref = (name: string): FieldRef => {
  const def = lookupField('syscall', name)!;
  return { kind: 'field', def, canonical: name, type: def.type, isList: false };
};

/** The recording without the PROC, EXEC and FORK records of `pids` (the engine never saw those processes start). */
function withoutProcessRecords(rec: Recording, pids: ReadonlySet<number>): Recording {
  const dv = new DataView(rec.buf.buffer, rec.buf.byteOffset);
  const out = new Uint8Array(rec.fill);
  let fill = 0;
  for (let off = 0; off < rec.fill; ) {
    const len = dv.getUint32(off + HDR.len, true);
    const kind = dv.getUint16(off + HDR.kind, true);
    const gone = (kind === KIND.PROC || kind === KIND.EXEC || kind === KIND.FORK) && pids.has(dv.getUint32(off + HDR.pid, true));
    if (!gone) {
      out.set(rec.buf.subarray(off, off + len), fill);
      fill += len;
    }
    off += len;
  }
  return { buf: out, fill, epochNs: rec.epochNs };
}

/** Sleeps the thread `ms` (the recording's action is synchronous). */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

run_("unknown processes: a setuid(0) by root processes whose starts were never seen reads root (from /proc, or the record's header once exited) and 'Non sudo setuid' does not fire", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-unknown-'));
  chmodSync(dir, 0o755);
  const script = join(dir, 'stay.pl');
  const ready = join(dir, 'ready');
  writeFileSync(script, 'syscall(105, 0) == 0 or die "setuid: $!"; open(my $f, ">", $ARGV[0]) or die; close $f; sleep 300;\n');
  let rec: Recording;
  let stay = 0;
  let shell = 0;
  let gone = 0;
  try {
    rec = recordKernel(['setuid'], () => {
      // a shell (never seen) starts a perl that stays (never seen either) and exits at once
      const sh = spawnSync('/bin/sh', ['-c', `/usr/bin/perl ${script} ${ready} >/dev/null 2>&1 & echo $!`], { encoding: 'utf8' });
      shell = sh.pid!;
      stay = Number(sh.stdout.trim());
      for (const until = Date.now() + 30_000; !existsSync(ready) && Date.now() < until; ) pause(20);
      // a perl that has exited by the time its events are judged
      const once = spawnSync('/usr/bin/perl', ['-e', 'syscall(105, 0) == 0 or die "setuid: $!"']);
      assert.is(once.status, 0);
      gone = once.pid!;
    });
    assert.ok(existsSync(ready), 'the staying perl called setuid');
    const unseen = withoutProcessRecords(rec, new Set([shell, stay, gone]));

    const loaded = loadRules([{ name: 'falco_rules.yaml', text: corpusText('falco_rules.yaml') }, { name: 'falco-incubating_rules.yaml', text: corpusText('falco-incubating_rules.yaml') }]);
    assert.ok(loaded.ok);
    const rules = loaded.ruleset.rules.filter((r) => r.name === 'Non sudo setuid');
    assert.is(rules.length, 1);
    const m = await compileAll(rules);
    const refs = FIELDS.map(ref);

    const pass = translatorsPass(unseen, m, 'unknown-test', refs);
    assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 10), []);

    const dv = new DataView(unseen.buf.buffer);
    const seen = new Map<number, Record<string, unknown>>();
    const oracle = new KernelIngest({ native: false, hostname: 'unknown-test' });
    const oracleMatched = bytesPass(unseen, twin(m), oracle, (off, ev) => {
      const pid = dv.getUint32(off + HDR.pid, true);
      if (pid === stay || pid === gone) seen.set(pid, Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)])));
    });
    const counted: string[] = [];
    const native = new KernelIngest({ hostname: 'unknown-test', onThreadLookup: (how) => counted.push(how) });
    const matched = bytesPass(unseen, m, native, () => {});
    const fired = (ms: Map<number, string[]>) => [...ms.keys()].map((off) => dv.getUint32(off + HDR.pid, true)).filter((p) => p === stay || p === gone);
    assert.equal(fired(oracleMatched), [], 'no Non sudo setuid through the oracle');
    assert.equal(fired(matched), [], 'no Non sudo setuid through the C translator');
    assert.equal(seen.get(stay), { 'evt.type': 'setuid', 'user.uid': 0, 'user.name': 'root', 'group.gid': 0, 'proc.name': 'perl', 'proc.exepath': '/usr/bin/perl' }, 'from /proc');
    assert.equal(seen.get(gone), { 'evt.type': 'setuid', 'user.uid': 0, 'user.name': 'root', 'group.gid': 0, 'proc.name': undefined, 'proc.exepath': undefined }, 'from the header');
    assert.ok(oracle.threads.lookups.procfs >= 1 && oracle.threads.lookups.header >= 1, JSON.stringify(oracle.threads.lookups));
    assert.equal(native.threads.lookups, oracle.threads.lookups);
    assert.is(counted.length, native.threads.lookups.procfs + native.threads.lookups.header);
  } finally {
    if (stay > 0) try { process.kill(stay, 'SIGKILL'); } catch { /* already gone */ }
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
