// proc.env under heap pressure (thread-table.ts): environments are large (up to MAX_ENV each) and
// the thread table's string heap is shared with every other process field, so environments may
// fill only ENV_HEAP_SHARE of it. 3,000 live processes exec'd with distinct 4 KB environments (12
// MB, more than the heap): every one keeps its proc.name and command line, the first ones their
// environment, the rest have proc.env missing (counted in envDropped), none is empty. And a busy
// node's churn (short-lived processes, each with its own environment, exiting before the next
// starts: the heap fills with garbage, not live strings) never costs a process its proc.env (a
// suite's test id, issue 29): before, every exec between ENV_HEAP_SHARE and a full heap lost it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HDR, KIND, MAX_ENV, SIZES } from '../../../host/abi/records.js';
import { MEM } from '../../../host/abi/module.js';
import { processFields } from '../../../host/sources/syscall/fields.js';
import { encodeProcRecord, type ProcSnapshot } from '../../../host/sources/syscall/procfs.js';
import { ThreadTable } from '../../../host/sources/syscall/thread-table.js';

function snapshot(pid: number, env: Buffer): ProcSnapshot {
  const zero = { sid: pid, pgid: pid, ruid: 0, euid: 0, rgid: 0, egid: 0, loginuid: 4294967295, tty: 0, startNs: 1n, pidns: 1, mntns: 1, cgroupId: 1n, exeWritable: false };
  return { pid, ppid: 1, vpid: pid, ...zero, comm: Buffer.from(`p${pid}`), exepath: Buffer.from('/usr/bin/p'), args: [Buffer.from('p'), Buffer.from(String(pid))], cwd: Buffer.from('/'), cgroup: Buffer.from('/user.slice'), env };
}

/** A thread table bound to a fresh memory, and a function applying the EXEC record of process `pid` with environment `env`. */
function tableWithExec(): { memory: WebAssembly.Memory; table: ThreadTable; exec: (pid: number, env: string) => void } {
  const memory = new WebAssembly.Memory({ initial: MEM.pages, maximum: MEM.pages });
  const table = new ThreadTable();
  table.bind(memory);
  const buf = new Uint8Array(16384);
  const exec = (pid: number, env: string) => {
    encodeProcRecord(snapshot(pid, Buffer.from(env)), buf, 0, 1n);
    new DataView(buf.buffer).setUint16(HDR.kind, KIND.EXEC, true);
    table.apply(buf, 0);
  };
  return { memory, table, exec };
}

test('thread table: distinct 4 KB environments of 3,000 live processes never cost another field; past the heap share proc.env is missing', () => {
  const { memory, table, exec } = tableWithExec();
  const n = 3000;
  for (let i = 0; i < n; i++) exec(10_000 + i, `RAE_I=${i}\0X=${'x'.repeat(MAX_ENV - 40)}`);
  let withEnv = 0;
  for (let i = 0; i < n; i++) {
    const f = processFields(memory, table.entryOfPid(10_000 + i));
    assert.is(f['proc.name'], `p${10_000 + i}`, `proc.name of process ${i}`);
    assert.is(f['proc.cmdline'], `p${10_000 + i} ${10_000 + i}`, `proc.cmdline of process ${i}`);
    if (f['proc.env'] !== undefined) {
      withEnv++;
      assert.ok(String(f['proc.env']).startsWith(`RAE_I=${i} X=xxx`), `proc.env of process ${i}`);
    }
  }
  assert.is(table.drops.strings_cut, 0, 'no other string was dropped');
  assert.ok(withEnv > 100 && withEnv < n, `${withEnv} processes kept their environment`);
  assert.is(table.envDropped, n - withEnv);
});

test('thread table: 6,000 short-lived processes with distinct 4 KB environments (24 MB of churn through the heap) each keep proc.env', () => {
  const { memory, table, exec } = tableWithExec();
  const exit = new Uint8Array(SIZES.exit);
  const n = 6000;
  const missing: number[] = [];
  for (let i = 0; i < n; i++) {
    const pid = 20_000 + i;
    exec(pid, `FALCO_EVENT_GENERATOR_TEST_ID=${i}\0X=${'x'.repeat(MAX_ENV - 60)}`);
    const f = processFields(memory, table.entryOfPid(pid));
    if (!String(f['proc.env']).startsWith(`FALCO_EVENT_GENERATOR_TEST_ID=${i} X=xxx`)) missing.push(i);
    const x = new DataView(exit.buffer);
    x.setUint16(HDR.kind, KIND.EXIT, true);
    x.setUint32(HDR.pid, pid, true);
    x.setUint32(HDR.tid, pid, true);
    table.apply(exit, 0);
    table.newBatch();
  }
  assert.equal(missing.slice(0, 5), [], `${missing.length} of ${n} processes lost proc.env`);
  assert.is(table.envDropped, 0);
  assert.is(table.drops.strings_cut, 0);
});

test.run();
