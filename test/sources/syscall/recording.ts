// Real kernel records for the differential tests (paths, args, session, caps): /proc snapshots as
// PROC records, then what the probe captures of the given syscalls while `action` runs, drained
// into one buffer; the pieces the syscall source would evaluate it in (a batch is cut before an
// EXEC or CAPS of a pid with an event earlier in the batch, as source.ts cuts it); a translator
// over those pieces (bytesPass); and the C translator against the TypeScript oracle on them
// (translatorsPass: every eval record slot of every event compared).
import { MEM, REC } from '../../../host/abi/module.js';
import { RuleModule } from '../../../host/runtime/evaluator.js';
import { KernelIngest, nativeTranslator } from '../../../host/sources/syscall/ingest.js';
import type { UnknownProcessOptions } from '../../../host/sources/syscall/unknown-process.js';
import { FieldEvent } from '../../../host/engine/field-event.js';
import type { FieldRef } from '../../../host/engine/ir.js';
import { HDR, KIND } from '../../../host/abi/records.js';
import { clocks, openCapture } from '../../../host/sources/syscall/addon.js';
import { encodeProcRecord, readProcesses } from '../../../host/sources/syscall/procfs.js';
import { syscallIds } from '../../../host/sources/syscall/syscalls.js';

/** A drained recording: records in buf[0..fill); epochNs turns their boot-time stamps into epoch ns. */
export interface Recording {
  buf: Uint8Array;
  fill: number;
  epochNs: bigint;
}

/**
 * Records the syscalls `types` (and process records) while `action` runs; `mib` bounds the buffer;
 * the processes `unseen` are left out of the /proc snapshot; `data.types` are recorded with their
 * I/O buffer, its first `data.snaplen` bytes (default 80).
 */
export function recordKernel(types: Iterable<string>, action: () => void, mib = 32, unseen: ReadonlySet<number> = new Set(), data: { types?: Iterable<string>; snaplen?: number } = {}): Recording {
  const cap = openCapture({ wakeupBytes: 1, maxLatencyMs: 5, snaplen: data.snaplen });
  const buf = new Uint8Array(mib << 20);
  const c = clocks();
  let fill = 0;
  try {
    cap.setInterestingSyscalls(syscallIds(new Set(types)).ids, syscallIds(new Set(data.types ?? [])).ids);
    for (const p of readProcesses()) if (!unseen.has(p.pid)) fill += Math.max(0, encodeProcRecord(p, buf, fill, c.boottimeNs));
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

/** Every eval record of the last batch in `m` decoded: type, the thread's pid, and each present slot's value. */
export function decodeRecords(m: RuleModule, n: number): string[] {
  const layout = m.compiled.generated.layouts.syscall;
  const dv = new DataView(m.memory.buffer);
  const u8 = new Uint8Array(m.memory.buffer);
  const str = (a: number) => Buffer.from(u8.subarray(dv.getUint32(a, true), dv.getUint32(a, true) + dv.getUint32(a + 4, true))).toString('latin1');
  const one = (kind: string, a: number) => (kind === 'str' ? JSON.stringify(str(a)) : String(dv.getBigInt64(a, true)));
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const at = MEM.batchBase + i * layout.stride;
    const thread = dv.getUint32(at + REC.thread, true);
    const parts = [`type=${dv.getUint32(at + REC.type, true)}`, `pid=${thread === 0 ? '-' : dv.getUint32(thread + 4, true)}`];
    for (const slot of layout.slots) {
      if ((dv.getUint32(at + REC.present + 4 * (slot.index >> 5), true) & (1 << (slot.index & 31))) === 0) continue;
      const a = at + slot.offset;
      const v = slot.list ? `[${Array.from({ length: dv.getUint32(a + 4, true) }, (_, k) => one(slot.kind, dv.getUint32(a, true) + 8 * k)).join(',')}]` : one(slot.kind, a);
      parts.push(`${slot.ref.canonical}=${v}`);
    }
    out.push(parts.join(' '));
  }
  return out;
}

/** A second instance of `m` with its own memory (state region, batch region). */
export function twin(m: RuleModule): RuleModule {
  const t = RuleModule.create(m.compiled);
  if (!t.ok) throw new Error(t.error.message);
  return t.module;
}

/**
 * The C translator (probes/addon/ingest.c through the addon) and the TypeScript oracle
 * (ingest.ts with `native: false`) over the same recording, piece by piece, each into its own
 * instance of `m`: every event's eval record decoded (decodeRecords), one list per translator,
 * and the slots they compared (the module's syscall layout); with `refs`, each event's rendered
 * values of those fields too (fieldsOf: the thread entry each translator pointed the record at);
 * `unknownProcesses` is given to both translators.
 */
export function translatorsPass(rec: Recording, m: RuleModule, hostname = 'h', refs: readonly FieldRef[] = [], unknownProcesses?: UnknownProcessOptions): { native: string[]; oracle: string[]; slots: string[] } {
  if (!nativeTranslator()) throw new Error("the addon's translator does not load (probes/build; its ingestAbi must match ingest.ts)");
  const { buf, fill, epochNs } = rec;
  const out = { native: [] as string[], oracle: [] as string[], slots: m.compiled.generated.layouts.syscall.slots.map((s) => s.ref.canonical) };
  const sides: Array<[KernelIngest, RuleModule, string[]]> = [
    [new KernelIngest({ hostname, unknownProcesses }), m, out.native],
    [new KernelIngest({ native: false, hostname, unknownProcesses }), twin(m), out.oracle],
  ];
  for (const [from, to] of batchPieces(buf, fill)) {
    for (const [ki, mod, list] of sides) {
      const offsets = ki.ingest(mod, buf.subarray(from, to), to - from, epochNs);
      const view = buf.subarray(from, to);
      decodeRecords(mod, offsets.length).forEach((r, i) => {
        const ev = new FieldEvent(ki.fieldsOf(mod, view, offsets[i]!, i), { source: 'syscall', timeNs: 0n, num: 1n });
        const rendered = refs.map((f) => `${f.canonical}=${JSON.stringify(ev.field(f), (_k, x) => (typeof x === 'bigint' ? String(x) : x))}`);
        list.push([`@${from + offsets[i]!} ${r}`, ...rendered].join(' '));
      });
    }
  }
  return out;
}
