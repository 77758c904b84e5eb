// What the unknown-process lookup (host/sources/syscall/unknown-process.ts) costs the hot path:
// one /proc read of a live process (readProcess, every process on this machine, several rounds),
// and a batch's worst case, its whole bound of reads (the defaults: 32 reads, 5 ms): SYSCALL
// headers of distinct live pids that the thread table has no entry for, filled (read, encoded,
// applied) until the bound, the rest deferred. Figures: read_us (median, p99 per process),
// batch_all_unknown_ms (one batch of unknown processes only: the reads the bound allows, header entries for the rest).
import { readdirSync } from 'node:fs';
import { figure, median, progress } from './report.js';
import { MEM } from '../host/abi/module.js';
import { HDR, KIND, SIZES } from '../host/abi/records.js';
import { readProcess } from '../host/sources/syscall/procfs.js';
import { ThreadTable } from '../host/sources/syscall/thread-table.js';
import { UnknownProcesses } from '../host/sources/syscall/unknown-process.js';

const ROUNDS = 5;

export async function run(): Promise<void> {
  const pids = readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
  progress(`lookup: ${pids.length} processes, ${ROUNDS} rounds`);
  const per: number[] = [];
  for (let r = 0; r < ROUNDS; r++)
    for (const pid of pids) {
      const t = process.hrtime.bigint();
      readProcess(pid);
      per.push(Number(process.hrtime.bigint() - t) / 1e3);
    }
  per.sort((a, b) => a - b);
  figure('lookup', 'read_us', median(per), 'us', { processes: pids.length, rounds: ROUNDS });
  figure('lookup', 'read_p99_us', per[Math.floor(per.length * 0.99)]!, 'us');

  // a batch of SYSCALL headers, one per live pid, none known: the bound's reads, the rest deferred
  const view = new Uint8Array(pids.length * SIZES.syscall);
  const dv = new DataView(view.buffer);
  pids.forEach((pid, i) => {
    const off = i * SIZES.syscall;
    dv.setUint32(off + HDR.len, SIZES.syscall, true);
    dv.setUint16(off + HDR.kind, KIND.SYSCALL, true);
    dv.setUint32(off + HDR.pid, pid, true);
    dv.setUint32(off + HDR.tid, pid, true);
    dv.setBigUint64(off + HDR.ts_ns, 1n << 62n, true);
  });
  const batches: number[] = [];
  const reads: number[] = [];
  // a fresh table per round, its memory and index arrays touched first (as a running engine's
  // are); round -1 warms the code and is not counted
  for (let r = -1; r < ROUNDS; r++) {
    const threads = new ThreadTable();
    const memory = new WebAssembly.Memory({ initial: MEM.pages, maximum: MEM.pages });
    new Uint8Array(memory.buffer).fill(0);
    threads.tidPid.fill(0);
    threads.pidAddr.fill(0);
    threads.bind(memory);
    const unknown = new UnknownProcesses(threads, { read: readProcess });
    unknown.newBatch();
    const t = process.hrtime.bigint();
    for (let i = 0; i < pids.length; i++) unknown.fill(view, i * SIZES.syscall);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r < 0) continue;
    batches.push(ms);
    reads.push(unknown.counts.procfs + unknown.counts.gone);
  }
  figure('lookup', 'batch_all_unknown_ms', median(batches), 'ms', { reads: median(reads), records: pids.length, max_ms: Math.max(...batches) });
}
