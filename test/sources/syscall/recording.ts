// Real kernel records for the two-path tests (paths, args, session, caps): /proc snapshots as PROC
// records, then what the probe captures of the given syscalls while `action` runs, drained into
// one buffer; and the pieces the syscall source would evaluate it in (a batch is cut before an
// EXEC or CAPS of a pid with an event earlier in the batch, as source.ts cuts it); and both
// paths over those pieces (objectsPass, bytesPass) for the tests that compare them.
import type { RuleModule } from '../../../host/runtime/evaluator.js';
import type { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { FieldEvent } from '../../../host/engine/field-event.js';
import { HDR, KIND } from '../../../host/sources/syscall/abi.js';
import { clocks, openCapture } from '../../../host/sources/syscall/addon.js';
import { SyscallEvent } from '../../../host/sources/syscall/event.js';
import { encodeProcRecord, readProcesses } from '../../../host/sources/syscall/procfs.js';
import { ProcessTable } from '../../../host/sources/syscall/state.js';
import { syscallIds, syscallName } from '../../../host/sources/syscall/syscalls.js';
import { UserNames } from '../../../host/sources/syscall/users.js';

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

/**
 * The objects path over a recording, piece by piece as the source judges batches: each piece's
 * process records applied, then `visit(offset, event)` for its syscall events (their fields read
 * then, as the source reads them), then the piece's exits dropped.
 */
export function objectsPass(rec: Recording, hostname: string, visit: (off: number, ev: SyscallEvent) => void): void {
  const { buf, fill, epochNs } = rec;
  const dv = new DataView(buf.buffer, buf.byteOffset);
  const table = new ProcessTable();
  const ctx = { table, names: new UserNames(), hostname };
  let num = 0;
  for (const [from, to] of batchPieces(buf, fill)) {
    const evs: Array<[number, SyscallEvent]> = [];
    for (let off = from; off < to; off += dv.getUint32(off + HDR.len, true)) {
      const kind = dv.getUint16(off + HDR.kind, true);
      if (kind !== KIND.SYSCALL) {
        table.apply(buf, dv, off, kind);
        continue;
      }
      const ts = dv.getBigUint64(off + HDR.ts_ns, true);
      evs.push([off, new SyscallEvent(ctx, buf, dv, off, syscallName(dv.getUint16(off + HDR.nr, true)), table.get(dv.getUint32(off + HDR.pid, true)), ts + epochNs, ++num)]);
    }
    for (const [off, ev] of evs) visit(off, ev);
    table.flushExits();
  }
}

/**
 * The byte path over a recording, the same pieces through `ki` into module `m`: `visit(offset,
 * fields)` for every event (its rendered fields, as alert output reads them); returns the rules
 * each event matched, by record offset.
 */
export function bytesPass(rec: Recording, m: RuleModule, ki: KernelIngest, visit: (off: number, fields: FieldEvent) => void): Map<number, string[]> {
  const { buf, fill, epochNs } = rec;
  const matched = new Map<number, string[]>();
  for (const [from, to] of batchPieces(buf, fill)) {
    const view = buf.subarray(from, to);
    const offsets = ki.ingest(m, view, to - from, epochNs);
    const r = m.evaluateRecords('syscall', offsets.length, false);
    if (!r.ok) throw new Error(`the byte path's evaluate failed on the piece at ${from}`);
    for (const x of r.matches) matched.set(from + offsets[x.event]!, [...(matched.get(from + offsets[x.event]!) ?? []), x.rule.name]);
    offsets.forEach((o, i) => {
      const ts = new DataView(view.buffer, view.byteOffset + o).getBigUint64(HDR.ts_ns, true);
      visit(from + o, new FieldEvent(ki.fieldsOf(m, view, o, i), { source: 'syscall', timeNs: ts + epochNs, num: 1n }));
    });
  }
  return matched;
}
