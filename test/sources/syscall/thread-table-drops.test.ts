// The thread table's two drop counts (thread-table.ts drops) and the metrics that read them at
// scrape time: `full` counts process records the table had no free entry for (its 16,384 slots
// are the module ABI's, STATE.threadSlots, so the test fills them all), `strings_cut` the strings
// not kept because the string heap was full. Each is exported under its own reason of
// enginesecurity_engine_thread_table_drops_total, and `full` alone as Falco's
// falcosecurity_scap_n_drops_full_threadtable_total (libs' n_drops_full_threadtable: a process
// not added because the thread table is full).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HDR, KIND, MAX_ARGS, SIZES } from '../../../host/abi/records.js';
import { MEM, STATE } from '../../../host/abi/module.js';
import { createMetrics } from '../../../host/metrics/index.js';
import { processFields } from '../../../host/sources/syscall/fields.js';
import { encodeProcRecord } from '../../../host/sources/syscall/procfs.js';
import { ThreadTable } from '../../../host/sources/syscall/thread-table.js';

/** A thread table bound to a fresh memory, and functions applying a PROC record (argv of `argBytes` bytes) and an EXIT record of process `pid`. */
function table(): { memory: WebAssembly.Memory; threads: ThreadTable; proc: (pid: number, argBytes?: number) => void; exit: (pid: number) => void } {
  const memory = new WebAssembly.Memory({ initial: MEM.pages, maximum: MEM.pages });
  const threads = new ThreadTable();
  threads.bind(memory);
  const buf = new Uint8Array(16384);
  const ids = { sid: 1, pgid: 1, ruid: 0, euid: 0, rgid: 0, egid: 0, loginuid: 4294967295, tty: 0, startNs: 1n, pidns: 1, mntns: 1, cgroupId: 1n, exeWritable: false };
  const proc = (pid: number, argBytes = 8) => {
    const args = [Buffer.from('p'), Buffer.from(`${pid}:${'a'.repeat(argBytes)}`)];
    encodeProcRecord({ pid, ppid: 1, vpid: pid, ...ids, comm: Buffer.from(`p${pid}`), exepath: Buffer.from('/usr/bin/p'), args, cwd: Buffer.from('/'), cgroup: Buffer.from('/user.slice') }, buf, 0, 1n);
    threads.apply(buf, 0);
  };
  const exitRecord = new Uint8Array(SIZES.exit);
  const exit = (pid: number) => {
    const x = new DataView(exitRecord.buffer);
    x.setUint16(HDR.kind, KIND.EXIT, true);
    x.setUint32(HDR.pid, pid, true);
    x.setUint32(HDR.tid, pid, true);
    threads.apply(exitRecord, 0);
  };
  return { memory, threads, proc, exit };
}

/** The sample lines of `name` in a Prometheus exposition. */
const samples = (body: string, name: string) => body.split('\n').filter((l) => l.startsWith(name));

test('a full thread table counts each process it has no entry for under full, none under strings_cut; an exited process frees its entry', () => {
  const { memory, threads, proc, exit } = table();
  const first = 100_000;
  for (let i = 0; i < STATE.threadSlots; i++) proc(first + i);
  assert.is(threads.size, STATE.threadSlots);
  assert.equal(threads.drops, { full: 0, strings_cut: 0 });
  // two processes past the last slot: untracked, each counted
  proc(first + STATE.threadSlots);
  proc(first + STATE.threadSlots + 1);
  assert.equal(threads.drops, { full: 2, strings_cut: 0 });
  assert.is(threads.entryOfPid(first + STATE.threadSlots), 0, 'no entry for a process past the last slot');
  assert.is(threads.size, STATE.threadSlots);
  // an exited process's entry is reused from the next batch on: no drop
  exit(first);
  threads.newBatch();
  proc(first + STATE.threadSlots + 2);
  assert.is(processFields(memory, threads.entryOfPid(first + STATE.threadSlots + 2))['proc.name'], `p${first + STATE.threadSlots + 2}`);
  assert.equal(threads.drops, { full: 2, strings_cut: 0 });
});

test('a full string heap counts the strings it cuts under strings_cut, none under full', () => {
  const { memory, threads, proc } = table();
  // each process keeps its argv twice (proc.args, proc.cmdline): 8 KB of live strings, far below the slot count
  const n = Math.ceil((STATE.dns - STATE.heap) / (2 * MAX_ARGS)) + 10;
  for (let i = 0; i < n; i++) proc(200_000 + i, MAX_ARGS - 20);
  assert.ok(n < STATE.threadSlots, `${n} processes`);
  assert.is(threads.drops.full, 0);
  assert.ok(threads.drops.strings_cut > 0, `${threads.drops.strings_cut} strings cut`);
  assert.is(processFields(memory, threads.entryOfPid(200_000 + n - 1))['proc.args'], undefined, 'the last process lost its arguments');
});

test("the metrics read the table's counts when scraped: each reason, and full as Falco's name", async () => {
  const { threads, proc } = table();
  const m = createMetrics({ processMetrics: false });
  m.threadTableDrops(() => threads.drops);
  let body = (await m.exposition()).body;
  assert.equal(samples(body, 'enginesecurity_engine_thread_table_drops_total{'), ['enginesecurity_engine_thread_table_drops_total{reason="full"} 0', 'enginesecurity_engine_thread_table_drops_total{reason="strings_cut"} 0']);
  assert.equal(samples(body, 'falcosecurity_scap_n_drops_full_threadtable_total'), ['falcosecurity_scap_n_drops_full_threadtable_total 0']);
  for (let i = 0; i <= STATE.threadSlots + 2; i++) proc(300_000 + i);
  body = (await m.exposition()).body;
  assert.equal(samples(body, 'enginesecurity_engine_thread_table_drops_total{'), ['enginesecurity_engine_thread_table_drops_total{reason="full"} 3', 'enginesecurity_engine_thread_table_drops_total{reason="strings_cut"} 0']);
  assert.equal(samples(body, 'falcosecurity_scap_n_drops_full_threadtable_total'), ['falcosecurity_scap_n_drops_full_threadtable_total 3']);
});

test.run();
