// /proc bootstrap: readProcess() on a child with known facts, readProcesses(), the PROC record
// encoding, and a cross-check against the kernel: the EXEC record the probe writes for a process
// and the PROC record built from /proc for the same process must agree field by field.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { abi, encodeProcRecord, readProcess, readProcesses } from '../../../host/sources/syscall/index.js';
import { decodeBatch, type ProcRecord } from '../../helpers/record-decoder.js';
import { cgroup2Root, parentsFirst, type ProcSnapshot } from '../../../host/sources/syscall/procfs.js';
import { Collector, kernelGate } from './collector.js';

let dir: string;
const children: ChildProcess[] = [];

function sleeper(opts: { detached?: boolean } = {}): ChildProcess {
  const child = spawn('sleep', ['30'], { cwd: dir, stdio: 'ignore', ...opts });
  children.push(child);
  return child;
}

/** Waits until /proc shows the child's new image (after exec). */
async function afterExec(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (readProcess(pid)?.comm.toString() === 'sleep') return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

test.before(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'rae-procfs-')));
});

test.after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

test('readProcess: a detached child with known argv, cwd, exe, session and parent', async () => {
  const child = sleeper({ detached: true });
  await afterExec(child.pid!);
  const p = readProcess(child.pid!)!;
  assert.ok(p, 'readable');
  assert.is(p.pid, child.pid);
  assert.is(p.ppid, process.pid);
  assert.equal(p.args.map(String), ['sleep', '30']);
  assert.is(p.comm.toString(), 'sleep');
  assert.is(p.exepath.toString(), realpathSync('/usr/bin/sleep'));
  assert.is(p.cwd.toString(), dir);
  assert.is(p.sid, child.pid, 'detached: new session');
  assert.is(p.pgid, child.pid);
  assert.is(p.tty, 0);
  assert.is(p.euid, process.geteuid!());
  assert.is(p.egid, process.getegid!());
  assert.is(p.vpid, child.pid, 'same pid namespace as the test');
  assert.ok(p.pidns > 0 && p.mntns > 0);
  assert.ok(p.cgroup.toString().startsWith('/'));
});

test('readProcess: a pid that does not exist gives undefined', () => {
  assert.is(readProcess(0x3fffffff), undefined);
});

test('readProcesses: every process, including init and this one, each after its parent', () => {
  const all = readProcesses();
  const pids = all.map((p) => p.pid);
  assert.ok(pids.includes(1));
  assert.ok(pids.includes(process.pid));
  assert.is(new Set(pids).size, pids.length);
  const at = new Map(pids.map((pid, i) => [pid, i]));
  for (const p of all) if (at.has(p.ppid)) assert.ok(at.get(p.ppid)! < at.get(p.pid)!, `${p.pid} before its parent ${p.ppid}`);
  assert.is(all.find((p) => p.pid === process.pid)!.ppid, process.ppid);
});

test('parentsFirst: after pids wrap, a parent with a higher pid still comes first; unknown parents and cycles end a chain', () => {
  const snap = (pid: number, ppid: number) => ({ pid, ppid }) as ProcSnapshot;
  const order = (ps: ProcSnapshot[]) => parentsFirst(ps).map((p) => p.pid);
  // 1 -> 22726 -> 6547 -> 7000 (pid_max 32768 wrapped), 300 under an unknown parent, 40 <-> 41 a cycle
  assert.equal(order([snap(1, 0), snap(40, 41), snap(41, 40), snap(300, 99999), snap(6547, 22726), snap(7000, 6547), snap(22726, 1)]), [1, 41, 40, 300, 22726, 6547, 7000]);
});

test('encodeProcRecord: decodes back to the same facts; refuses a view that is too small', () => {
  const self = readProcess(process.pid)!;
  const view = new Uint8Array(abi.MAX_RECORD);
  const len = encodeProcRecord(self, view, 0, 123n);
  assert.ok(len >= abi.SIZES.proc && len % 8 === 0);
  const { records, error } = decodeBatch(view, len);
  assert.is(error, undefined);
  const r = records[0] as ProcRecord;
  assert.is(r.kind, abi.KIND.PROC);
  assert.is(r.tsNs, 123n);
  assert.is(r.pid, process.pid);
  assert.is(r.ppid, process.ppid);
  assert.is(r.cwd, process.cwd());
  assert.is(r.exepath, realpathSync(process.execPath));
  assert.equal(r.args, self.args.map(String));
  assert.is(encodeProcRecord(self, new Uint8Array(64), 0, 0n), 0);
});

const gate = kernelGate('procfs.test.ts');
(gate.run ? test : test.skip)('kernel EXEC record and /proc agree on every field of the same process', async () => {
  const c = new Collector();
  try {
    const child = sleeper();
    const pid = child.pid!;
    const [exec] = await c.waitFor(
      (r): r is ProcRecord => r.kind === abi.KIND.EXEC && r.pid === pid,
      (rs) => rs.length > 0,
    );
    const snap = readProcess(pid)!;
    const view = new Uint8Array(abi.MAX_RECORD);
    const proc = decodeBatch(view, encodeProcRecord(snap, view, 0, 0n)).records[0] as ProcRecord;
    const same = ['pid', 'tid', 'uid', 'gid', 'cgroupId', 'ppid', 'vpid', 'vtid', 'sid', 'pgid', 'ruid', 'rgid', 'loginuid', 'tty', 'pidns', 'mntns', 'comm', 'exepath', 'args', 'cwd', 'cgroup', 'env'] as const;
    for (const k of same) assert.equal(proc[k], exec[k], k);
    assert.is(proc.pflags & abi.PF.EXE_WRITABLE, exec.pflags & abi.PF.EXE_WRITABLE, 'exe writable');
    const tick = 10_000_000n;
    assert.ok(exec.startNs - proc.startNs >= 0n && exec.startNs - proc.startNs < tick, `start ${exec.startNs} vs ${proc.startNs}`);
  } finally {
    c.close();
  }
});

(gate.run ? test : test.skip)("a process in a cgroup v2 sub-group: the /proc snapshot's cgroupId is the kernel's (the group directory's inode under the cgroup2 mount)", async () => {
  const cg = join(cgroup2Root(), `rae-procfs-test-${process.pid}`);
  mkdirSync(cg);
  const c = new Collector();
  let child: ChildProcess | undefined;
  try {
    child = spawn('/bin/sh', ['-c', `echo $$ > ${cg}/cgroup.procs && exec sleep 30`], { stdio: 'ignore' });
    children.push(child);
    const pid = child.pid!;
    // the second exec of the pid: sleep, after the shell moved itself into the group
    const isSleep = (r: ProcRecord) => (r.exepath ?? '').endsWith('/sleep');
    const execs = await c.waitFor(
      (r): r is ProcRecord => r.kind === abi.KIND.EXEC && r.pid === pid,
      (rs) => rs.some(isSleep),
    );
    const exec = execs.find(isSleep)!;
    assert.is(exec.cgroup, cg.slice(cgroup2Root().length));
    assert.is(exec.cgroupId, BigInt(statSync(cg).ino), 'the kernel id is the directory inode');
    assert.is(readProcess(pid)!.cgroupId, exec.cgroupId);
  } finally {
    c.close();
    child?.kill('SIGKILL');
    for (let i = 0; i < 100; i++) {
      try {
        rmdirSync(cg);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
});

test.run();
