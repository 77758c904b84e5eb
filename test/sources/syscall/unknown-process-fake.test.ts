// Unknown processes on synthetic records with a stand-in for /proc (never this machine's): a
// SYSCALL record of a pid the thread table has no entry for is filled from the reader, from the
// record header when the reader has no such process, and from the header while the batch's bound
// of reads is spent, then from the reader in the next batch; without a reader nothing is looked
// up. The C translator and the TypeScript oracle are given the same reader and must agree.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { HDR, KIND, SIZES } from '../../../host/abi/records.js';
import { KernelIngest, nativeTranslator } from '../../../host/sources/syscall/ingest.js';
import type { ProcSnapshot } from '../../../host/sources/syscall/procfs.js';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import type { LookupResult } from '../../../host/sources/syscall/unknown-process.js';
import { compileAll } from '../../../support/differential.js';
import { twin } from './recording.js';

const RULE = `- rule: non root setuid
  desc: d
  condition: evt.type = setuid and not (user.name=root or user.uid=0)
  output: "%user.name %user.uid %group.gid %proc.name %proc.exepath %proc.cmdline %proc.cwd %user.loginuid %proc.pid %thread.tid"
  priority: WARNING
`;
const FIELDS = ['user.name', 'user.uid', 'group.gid', 'proc.name', 'proc.exepath', 'proc.cmdline', 'proc.cwd', 'user.loginuid', 'proc.pid', 'thread.tid'];

function snapshot(pid: number, euid: number, comm: string, args: string[]): ProcSnapshot {
  const b = (s: string) => Buffer.from(s);
  return {
    pid,
    ppid: 1,
    vpid: pid,
    sid: pid,
    pgid: pid,
    ruid: euid,
    euid,
    rgid: euid,
    egid: euid,
    loginuid: 1000,
    tty: 0,
    startNs: 1n,
    pidns: 1,
    mntns: 1,
    cgroupId: 0n,
    exeWritable: false,
    comm: b(comm),
    exepath: b(`/opt/${comm}`),
    args: args.map(b),
    cwd: b('/work'),
    cgroup: b('/user.slice'),
  };
}

/** setuid(0) records of (pid, tid, header euid), 1 s apart. */
function setuids(records: Array<[number, number, number]>): Uint8Array {
  const out = new Uint8Array(records.length * SIZES.syscall);
  records.forEach(([pid, tid, uid], i) => {
    const dv = new DataView(out.buffer, i * SIZES.syscall, SIZES.syscall);
    dv.setUint32(HDR.len, SIZES.syscall, true);
    dv.setUint16(HDR.kind, KIND.SYSCALL, true);
    dv.setUint16(HDR.nr, syscallNr('setuid')!, true);
    dv.setUint32(HDR.pid, pid, true);
    dv.setUint32(HDR.tid, tid, true);
    dv.setUint32(HDR.uid, uid, true);
    dv.setUint32(HDR.gid, uid, true);
    dv.setBigUint64(HDR.ts_ns, BigInt(i + 1) * 1_000_000_000n, true);
  });
  return out;
}

async function module() {
  const loaded = loadRules([{ name: 'r.yaml', text: RULE }]);
  assert.ok(loaded.ok);
  return compileAll(loaded.ruleset.rules);
}

test('unknown processes (stand-in reader): from the reader, from the header when gone or past the bound, read in the next batch; C and oracle agree', async () => {
  const m = await module();
  // 999 (a thread 1999 of it) runs as root, 997 as uid 1000; 998 is not there
  const procs = new Map([999, 997].map((pid) => [pid, snapshot(pid, pid === 999 ? 0 : 1000, pid === 999 ? 'svc' : 'late', pid === 999 ? ['svc', '-d'] : ['late'])]));
  const batch1 = setuids([
    [999, 1999, 0],
    [998, 998, 0],
    [997, 997, 1000],
  ]);
  const batch2 = setuids([[997, 997, 1000]]);
  const sides = [false, ...(nativeTranslator() ? [true] : [])].map((native) => {
    const read: number[] = [];
    const told: LookupResult[] = [];
    const ki = new KernelIngest({ native: native ? undefined : false, hostname: 'h', unknownProcesses: { read: (pid) => (read.push(pid), procs.get(pid)), onLookup: (r) => told.push(r), readsPerBatch: 2, batchBudgetMs: 60_000 } });
    const mod = native ? m : twin(m);
    const run = (view: Uint8Array) => {
      const offsets = ki.ingest(mod, view, view.length);
      const r = mod.evaluateRecords('syscall', offsets.length, false);
      assert.ok(r.ok);
      const fired = new Set(r.matches.map((x) => x.event));
      return offsets.map((o, i): Record<string, unknown> => ({ fired: fired.has(i), ...Object.fromEntries(FIELDS.map((f) => [f, String(ki.fieldsOf(mod, view, o, i)[f])])) }));
    };
    return { native, read, told, events: [...run(batch1), ...run(batch2)] };
  });
  const js = sides[0]!;
  assert.equal(js.read, [999, 998, 997], 'two reads in the first batch, the deferred one in the second');
  assert.equal(js.told, ['procfs', 'gone', 'deferred']);
  const row = (fired: boolean, ...v: string[]) => ({ fired, ...Object.fromEntries(FIELDS.map((f, i) => [f, v[i]!])) });
  assert.equal(js.events, [
    row(false, 'root', '0', '0', 'svc', '/opt/svc', 'svc -d', '/work/', '1000', '999', '1999'),
    // gone: the header's ids, libsinsp's '<NA>' names, no cwd
    row(false, 'root', '0', '0', '<NA>', '', '<NA>', 'undefined', '-1', '998', '998'),
    // past the bound: the header's ids (uid 1000 is not root: the rule's real match)
    row(true, js.events[2]!['user.name'] as string, '1000', '1000', '<NA>', '', '<NA>', 'undefined', '-1', '997', '997'),
    // read in the next batch
    row(true, js.events[3]!['user.name'] as string, '1000', '1000', 'late', '/opt/late', 'late', '/work/', '1000', '997', '997'),
  ]);
  for (const other of sides.slice(1)) {
    assert.equal(other.events, js.events, 'the C translator');
    assert.equal([other.read, other.told], [js.read, js.told]);
  }
});

test('unknown processes: without a reader nothing is looked up and the entry stays unknown', async () => {
  const m = await module();
  const view = setuids([[999, 999, 0]]);
  for (const native of [false, ...(nativeTranslator() ? [true] : [])]) {
    const ki = new KernelIngest({ native: native ? undefined : false, hostname: 'h' });
    const mod = native ? m : twin(m);
    const offsets = ki.ingest(mod, view, view.length);
    assert.is(ki.unknown, undefined);
    assert.is(ki.fieldsOf(mod, view, offsets[0]!, 0)['user.name'], undefined);
    assert.is(ki.threads.entryOfPid(999), 0);
  }
});

test.run();
