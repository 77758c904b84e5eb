// Real kernel records for the two-path tests (paths, args, session): /proc snapshots as PROC
// records, then what the probe captures of the given syscalls while `action` runs, drained into
// one buffer; and the pieces the syscall source would evaluate it in (a batch is cut before an
// EXEC or CAPS of a pid with an event earlier in the batch, as source.ts cuts it).
import { HDR, KIND } from '../../../host/sources/syscall/abi.js';
import { clocks, openCapture } from '../../../host/sources/syscall/addon.js';
import { encodeProcRecord, readProcesses } from '../../../host/sources/syscall/procfs.js';
import { syscallIds } from '../../../host/sources/syscall/syscalls.js';

/** A drained recording: records in buf[0..fill); epochNs turns their boot-time stamps into epoch ns. */
export interface Recording {
  buf: Uint8Array;
  fill: number;
  epochNs: bigint;
}

/** Records the syscalls `types` (and process records) while `action` runs; `mib` bounds the buffer. */
export function recordKernel(types: Iterable<string>, action: () => void, mib = 32): Recording {
  const cap = openCapture({ wakeupBytes: 1, maxLatencyMs: 5 });
  const buf = new Uint8Array(mib << 20);
  const c = clocks();
  let fill = 0;
  try {
    cap.setInterestingSyscalls(syscallIds(new Set(types)).ids);
    for (const p of readProcesses()) fill += Math.max(0, encodeProcRecord(p, buf, fill, c.boottimeNs));
    action();
    const meta = new Uint32Array(1);
    for (let got = 1; got > 0 && fill < buf.length - (1 << 20); fill += got) got = cap.poll(buf.subarray(fill, fill + (1 << 20)), meta);
  } finally {
    cap.close();
  }
  return { buf, fill, epochNs: c.realtimeNs - c.boottimeNs };
}

/** The [from, to) byte ranges the syscall source would evaluate as separate batches. */
export function batchPieces(buf: Uint8Array, fill: number): Array<[number, number]> {
  const dv = new DataView(buf.buffer, buf.byteOffset);
  const out: Array<[number, number]> = [];
  let start = 0;
  let seen = new Set<number>();
  for (let off = 0; off < fill; off += dv.getUint32(off + HDR.len, true)) {
    const kind = dv.getUint16(off + HDR.kind, true);
    const pid = dv.getUint32(off + HDR.pid, true);
    if (kind === KIND.SYSCALL) seen.add(pid);
    else if ((kind === KIND.EXEC || kind === KIND.CAPS) && seen.has(pid)) {
      out.push([start, off]);
      start = off;
      seen = new Set();
    }
  }
  out.push([start, fill]);
  return out;
}
