// The facts libsinsp gives a syscall event beyond its record, judged alike through the TypeScript
// oracle and the C translator: the header values and constants (thread.tid, evt.time/rawtime/dir/
// source/hostname/is_open_exec), a process's session, login user and capabilities (proc.sid,
// proc.vpgid, proc.sname, user.loginname, thread.cap_*), and container.start_ts/duration.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { Interpreter } from '../../../host/engine/interpreter.js';
import { KernelIngest, nativeTranslator } from '../../../host/sources/syscall/ingest.js';
import { FieldEvent } from '../../../host/engine/field-event.js';
import { HDR, KIND, PF, PROC } from '../../../host/abi/records.js';
import { encodeProcRecord, type ProcSnapshot } from '../../../host/sources/syscall/procfs.js';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import { compileAll } from '../../../support/differential.js';
import { containerRecord } from '../../helpers/container-record.js';
import { exitRecord, proc, syscallRecord } from './kernel-batch.js';

/** Rules reading the header constants and the process facts of sessions, login users and containers. */
const FACT_RULES = loadRules([
  {
    name: 'facts.yaml',
    text: [
      [
        'all',
        'proc.sname = sshd and proc.sid = 300 and proc.vpgid = 301 and user.loginname = root and container.name = host and thread.tid = 301 and evt.dir = "<" and evt.source = syscall and evt.hostname = "facts-host" and evt.is_open_exec = false and evt.rawtime = 1700000000000000005 and evt.time = "1700000000000000005"',
      ],
      ['sname login', 'proc.sname = login'],
      ['no sname', 'not proc.sname exists'],
      ['container name', 'container.name exists'],
      ['no loginname', 'not user.loginname exists'],
      ['leader', 'proc.sid = val(proc.pid)'],
      ['tid', 'thread.tid = 1101'],
      ['time', 'evt.time startswith "17" and evt.rawtime > 1700000000000000000'],
      ['cap admin', 'thread.cap_effective contains CAP_SYS_ADMIN and thread.cap_permitted icontains sys_module'],
      ['bind only', 'thread.cap_effective = CAP_NET_BIND_SERVICE and thread.cap_permitted = CAP_NET_BIND_SERVICE'],
      ['no inh', 'thread.cap_inheritable = ""'],
    ]
      .map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: evt.type = openat and ${c}\n  output: x\n  priority: NOTICE\n`)
      .join(''),
  },
]).ruleset.rules;

/** A batch of the facts test: a session (leader 300 sshd, member 301, a container member 302, a thread of 101), opens, a leader exec, then its exit. */
function factBatches(): Array<{ bytes: Uint8Array; len: number }> {
  const snap = (pid: number, o: Partial<ProcSnapshot>) => ({ ...proc(pid, 1, 'x', ['x']), ...o });
  const open = (buf: Uint8Array, off: number, tid: number, ts: bigint) => syscallRecord(buf, off, { nr: syscallNr('openat')!, tid, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/hosts', ts });
  const one = new Uint8Array(16384);
  let a = 0;
  a += encodeProcRecord(snap(300, { comm: Buffer.from('sshd'), args: [Buffer.from('sshd')], sid: 300, pgid: 300, loginuid: 4294967295 }), one, a, 1n);
  a += encodeProcRecord(snap(301, { ppid: 300, comm: Buffer.from('bash'), args: [Buffer.from('bash')], sid: 300, pgid: 301, loginuid: 0 }), one, a, 1n);
  a += encodeProcRecord(snap(302, { ppid: 301, comm: Buffer.from('nginx'), args: [Buffer.from('nginx')], sid: 300, pgid: 302, loginuid: 4000000000, cgroup: Buffer.from(`/system.slice/docker-${'cd'.repeat(32)}.scope`) }), one, a, 1n);
  a += encodeProcRecord(snap(101, { comm: Buffer.from('app'), args: [Buffer.from('app')], sid: 7, pgid: 101 }), one, a, 1n);
  const th = a;
  a += encodeProcRecord(snap(101, { comm: Buffer.from('app'), args: [] }), one, a, 1n);
  new DataView(one.buffer, th).setUint16(HDR.kind, KIND.FORK, true);
  new DataView(one.buffer, th).setUint32(HDR.tid, 1101, true);
  new DataView(one.buffer, th).setUint32(PROC.pflags, PF.THREAD, true);
  for (const tid of [301, 302, 300, 1101]) a += open(one, a, tid, 5n);
  // the leader execs: its members' proc.sname follows at once (the source cuts the batch before
  // an exec of a process with events earlier in it, as 300 has: source.ts batchBytes)
  const cut = a;
  // a member that opens and exits before the leader's exec (no cut: it judges as of the batch's end)
  a += encodeProcRecord(snap(303, { ppid: 300, comm: Buffer.from('cat'), args: [Buffer.from('cat')], sid: 300, pgid: 303 }), one, a, 1n);
  a += open(one, a, 303, 6n);
  a += exitRecord(one, a, 303);
  const ex = a;
  a += encodeProcRecord(snap(300, { comm: Buffer.from('login'), args: [Buffer.from('login')], sid: 300, pgid: 300 }), one, a, 1n);
  new DataView(one.buffer, ex).setUint16(HDR.kind, KIND.EXEC, true);
  for (const tid of [301, 300]) a += open(one, a, tid, 6n);
  a += exitRecord(one, a, 300);
  a += open(one, a, 301, 7n); // the leader is gone only after this batch (exits apply after the batch)
  const two = new Uint8Array(4096);
  let b = 0;
  for (const tid of [301, 302]) b += open(two, b, tid, 8n);
  return [
    { bytes: one, len: cut },
    { bytes: one.slice(cut, a), len: a - cut },
    { bytes: two, len: b },
  ];
}

test('kernel ingest: thread.tid, evt.time/rawtime/dir/source/hostname/is_open_exec and proc.sid/vpgid/sname, user.loginname, container.name judge as libsinsp has them, alike through the oracle and the C translator', async () => {
  const m = await compileAll(FACT_RULES);
  const epoch = 1_700_000_000_000_000_000n;
  const kinds = [new KernelIngest({ native: false, hostname: 'facts-host' }), ...(nativeTranslator() ? [new KernelIngest({ hostname: 'facts-host' })] : [])];
  const results: string[][] = [];
  for (const k of kinds) {
    const got: string[] = [];
    for (const b of factBatches()) {
      const offsets = k.ingest(m, b.bytes, b.len, epoch);
      const r = m.evaluateRecords('syscall', offsets.length, false);
      assert.ok(r.ok);
      if (r.ok) for (const x of r.matches) got.push(`${new DataView(b.bytes.buffer).getUint32(offsets[x.event]! + HDR.tid, true)}@${new DataView(b.bytes.buffer).getBigUint64(offsets[x.event]! + HDR.ts_ns, true)}:${x.rule.name}`);
    }
    results.push(got);
  }
  const got = results[0]!;
  // the values themselves (libsinsp's)
  for (const w of ['301@5:all', '301@5:time', '300@5:leader', '300@5:no loginname', '302@5:no loginname', '1101@5:tid', '301@6:sname login', '300@6:sname login', '301@7:sname login', '303@6:sname login', '301@8:no sname', '302@8:no sname'])
    assert.ok(got.includes(w), `${w} in ${got.join(' ')}`);
  for (const w of ['302@5:container name', '302@5:all', '301@6:all', '301@5:no loginname', '1101@5:leader']) assert.not.ok(got.includes(w), w);
  // thread.cap_*: proc() gives pids divisible by 3 every capability, others CAP_NET_BIND_SERVICE; 301 (7 x 43) inherits it too; a thread (FORK) carries its own record's sets
  for (const w of ['300@5:cap admin', '300@6:cap admin', '303@6:cap admin', '301@5:bind only', '302@5:bind only', '1101@5:bind only', '300@5:no inh', '302@5:no inh', '1101@5:no inh']) assert.ok(got.includes(w), `${w} in ${got.join(' ')}`);
  for (const w of ['301@5:cap admin', '300@5:bind only', '301@5:no inh']) assert.not.ok(got.includes(w), w);
  if (results.length > 1) assert.equal(results[1], results[0], 'native and JS translators judge alike');
});

/** Rules reading container.start_ts and container.duration (the container's pid-namespace init, libsinsp's pidns_init_start_ts). */
const START_RULES = loadRules([
  {
    name: 'start.yaml',
    text: [
      ['started', 'container.start_ts = 1700000000000001000 and container.duration = 4000'],
      ['no start', 'not container.start_ts exists and not container.duration exists'],
      ['host start', 'container.name = host and container.start_ts = 1700000000000000010'],
    ]
      .map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: evt.type = openat and ${c}\n  output: start=%container.start_ts duration=%container.duration\n  priority: NOTICE\n`)
      .join(''),
  },
]).ruleset.rules;

test('kernel ingest: container.start_ts is the start of the pid-namespace init, container.duration the event time minus it, alike through the oracle and the C translator', async () => {
  const m = await compileAll(START_RULES);
  const epoch = 1_700_000_000_000_000_000n;
  const id = 'ab'.repeat(32);
  const cgroup = Buffer.from(`/system.slice/docker-${id}.scope`);
  const snap = (pid: number, o: Partial<ProcSnapshot>) => ({ ...proc(pid, 1, 'x', ['x']), ...o });
  const open = (buf: Uint8Array, off: number, tid: number, ts: bigint) => syscallRecord(buf, off, { nr: syscallNr('openat')!, tid, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/hosts', ts });
  const buf = new Uint8Array(8192);
  let a = 0;
  // the host's init, then a container process seen before its namespace's init (a /proc bootstrap
  // in pid order need not give the init first), then the init (vpid 1), then a process of a second
  // container whose namespace init was never seen
  a += encodeProcRecord(snap(1, { comm: Buffer.from('systemd'), vpid: 1, pidns: 4026531836, startNs: 10n, cgroup: Buffer.from('/init.scope') }), buf, a, 1n);
  a += encodeProcRecord(snap(401, { ppid: 400, vpid: 7, pidns: 4026532400, startNs: 2000n, cgroup }), buf, a, 1n);
  a += encodeProcRecord(snap(400, { vpid: 1, pidns: 4026532400, startNs: 1000n, cgroup }), buf, a, 1n);
  a += encodeProcRecord(snap(500, { vpid: 3, pidns: 4026532500, startNs: 3000n, cgroup: Buffer.from(`/system.slice/docker-${'cd'.repeat(32)}.scope`) }), buf, a, 1n);
  for (const tid of [401, 400, 500, 1]) a += open(buf, a, tid, 5000n);
  const kinds = [new KernelIngest({ native: false }), ...(nativeTranslator() ? [new KernelIngest({})] : [])];
  const results: string[][] = [];
  for (const k of kinds) {
    // the runtime's own start time (its record) is not container.start_ts
    k.containers.learn(containerRecord(id, { name: 'web', image: 'i', imageRepository: 'i', startTs: 42n }));
    const offsets = k.ingest(m, buf, a, epoch);
    const r = m.evaluateRecords('syscall', offsets.length, false);
    assert.ok(r.ok);
    const got = r.ok ? r.matches.map((x) => `${new DataView(buf.buffer).getUint32(offsets[x.event]! + HDR.tid, true)}:${x.rule.name}`) : [];
    // the oracle (the interpreter on the decoded fields) and the alert output fields agree
    const interp = new Interpreter();
    const want: string[] = [];
    offsets.forEach((off, i) => {
      const fields = k.fieldsOf(m, buf, off, i);
      const ev = new FieldEvent(fields, { source: 'syscall', timeNs: 0n, num: BigInt(i + 1) });
      for (const rule of START_RULES) if (interp.evaluate(rule.condition, ev)) want.push(`${fields['thread.tid']}:${rule.name}`);
      if (fields['thread.tid'] === 401) {
        assert.is(fields['container.start_ts'], epoch + 1000n);
        assert.is(fields['container.duration'], 4000);
      }
    });
    assert.equal(got.sort(), want.sort());
    results.push(got);
  }
  assert.equal(results[0], ['1:host start', '400:started', '401:started', '500:no start']);
  if (results.length > 1) assert.equal(results[1], results[0], 'native and JS translators judge alike');
});

test.run();
