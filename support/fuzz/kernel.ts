// Fuzz target: the production kernel record decoder, the C translator of probes/addon/ingest.c,
// called through the addon's ingest() with nothing of the host in between (the plan, constants
// and offsets come from the addon's own ingestAbi and layout()). Each case is a buffer of wire
// records, well-formed and corrupt: lengths too short, unaligned or past the end, any kind and
// syscall number, string descriptors pointing anywhere, random socket families and addresses,
// random byte flips, the buffer cut at any point; and a plan with random class bits per syscall,
// random constants and a string area that may run out. Like the host (kernel-ingest.ts), the
// driver applies nothing for a process record but steps over it and calls again.
// Property: ingest() returns (or throws a RangeError for bounds it refuses), never writes outside
// the memory it was given or past the last event's record, never reads outside the record it
// translates (the buffer around the records holds a byte no record holds, which must not show up
// in the string area), keeps the string area within its end, and translates exactly the SYSCALL
// records of the well-formed prefix, in order (the events it reports agree with a walk in JS).
import fc from 'fast-check';
import { loadNative } from '../../host/sources/syscall/addon.js';
import { runFuzz, type FuzzBounds, type FuzzReport } from './run.js';

/** A byte that no record, constant or plan string holds: seeing it in the output is a stray read. */
const POISON = 0xee;
const GUARD = 4096;
const MEM = 1 << 18;
const STRIDE = 1024;
const HEAD = 256;

interface Layout {
  hdr: Record<string, number>;
  syscall: Record<string, number>;
  sizes: Record<string, number>;
  kinds: Record<string, number>;
}

interface RecordSpec {
  kind: number;
  nr: number;
  pid: number;
  ret: bigint;
  args: bigint[];
  sflags: number;
  strs: Array<[number, number] | Uint8Array>;
  peer: [number, number, Uint8Array];
  local: [number, number, Uint8Array];
  extra: number;
  /** A length written instead of the real one. */
  badLen?: number;
  flips: Array<[number, number]>;
}

interface Case {
  records: RecordSpec[];
  cutAt?: number;
  classes: number[];
  typeIds: number[];
  consts: Array<[number, number]>;
  oflags: number[];
  heapRoom: number;
  max: number;
  blob: Uint8Array;
}

const noPoison = (b: Uint8Array) => b.map((x) => (x === POISON ? POISON - 1 : x));
const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map(noPoison);

function arbitraries(abi: Record<string, number>) {
  const NR = abi.NR_SYSCALLS!;
  const family = fc.oneof(fc.constantFrom(0, 1, 2, 10), fc.integer({ min: 0, max: 0xffff }));
  const sockaddr = fc.tuple(family, fc.integer({ min: 0, max: 0xffff }), bytes(16));
  const str = fc.oneof(
    { weight: 3, arbitrary: bytes(300) },
    { weight: 1, arbitrary: fc.constantFrom(new TextEncoder().encode('/etc/../etc//shadow/.'), new TextEncoder().encode('rel/x'), new TextEncoder().encode('/')) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff })) },
  );
  const record: fc.Arbitrary<RecordSpec> = fc.record({
    kind: fc.oneof({ weight: 8, arbitrary: fc.constant(1) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 8 }) }),
    nr: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: NR - 1 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }) }),
    pid: fc.integer({ min: 0, max: 70000 }),
    ret: fc.oneof(fc.bigInt({ min: -4095n, max: 70000n }), fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n })),
    args: fc.array(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), { minLength: 6, maxLength: 6 }),
    sflags: fc.integer({ min: 0, max: 7 }),
    strs: fc.array(str, { minLength: 4, maxLength: 4 }),
    peer: sockaddr,
    local: sockaddr,
    extra: fc.integer({ min: 0, max: 64 }),
    badLen: fc.oneof({ weight: 30, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 400 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffffffff }) }),
    flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
  });
  return fc.record({
    records: fc.array(record, { maxLength: 40 }),
    cutAt: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() }),
    classes: fc.array(fc.oneof(fc.integer({ min: 0, max: 0x1fffffff }), fc.constant(0)), { minLength: NR, maxLength: NR }),
    typeIds: fc.array(fc.integer({ min: 0, max: 400 }), { minLength: NR, maxLength: NR }),
    consts: fc.array(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 24 })), { minLength: abi.K_COUNT!, maxLength: abi.K_COUNT! }),
    oflags: fc.array(fc.integer({ min: 0, max: 0x7fffffff }), { minLength: abi.OFLAG_COUNT!, maxLength: abi.OFLAG_COUNT! }),
    heapRoom: fc.oneof({ weight: 3, arbitrary: fc.constant(MEM / 2) }, { weight: 1, arbitrary: fc.integer({ min: 2048, max: 8192 }) }),
    max: fc.oneof({ weight: 4, arbitrary: fc.constant(Math.floor(MEM / 2 / STRIDE)) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 8 }) }),
    blob: fc.uint8Array({ minLength: 1024, maxLength: 1024 }).map(noPoison),
  }) as fc.Arbitrary<Case>;
}

/** The wire bytes of `records` (events.h layouts from the addon's layout()). */
function encode(L: Layout, records: RecordSpec[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const r of records) {
    const tail: Uint8Array[] = [];
    let pos = L.sizes.syscall!;
    const descs: Array<[number, number]> = r.strs.map((s) => {
      if (!(s instanceof Uint8Array)) return s;
      const at = pos;
      tail.push(s, new Uint8Array(1));
      pos += s.length + 1;
      return [at, s.length];
    });
    const len = (pos + r.extra + 7) & ~7;
    const out = new Uint8Array(len);
    const dv = new DataView(out.buffer);
    const H = L.hdr;
    dv.setUint32(H.len!, r.badLen ?? len, true);
    dv.setUint16(H.kind!, r.kind, true);
    dv.setUint16(H.nr!, r.nr, true);
    dv.setUint32(H.pid!, r.pid, true);
    dv.setUint32(H.tid!, r.pid, true);
    dv.setBigInt64(H.ret!, r.ret, true);
    dv.setBigUint64(H.ts_ns!, 1000n, true);
    const S = L.syscall;
    r.args.forEach((a, i) => dv.setBigUint64(S.args! + 8 * i, a, true));
    dv.setUint32(S.sflags!, r.sflags, true);
    ['path', 'dir', 'path2', 'dir2'].forEach((k, i) => {
      dv.setUint16(S[k]!, descs[i]![0], true);
      dv.setUint16(S[k]! + 2, descs[i]![1], true);
    });
    for (const [at, [fam, port, addr]] of [
      [S.peer!, r.peer],
      [S.local!, r.local],
    ] as const) {
      dv.setUint16(at, fam, true);
      dv.setUint16(at + 2, port, true);
      out.set(addr, at + 8);
    }
    let p = L.sizes.syscall!;
    for (const t of tail) {
      out.set(t, p);
      p += t.length;
    }
    for (const [at, b] of r.flips) out[at % len] = b;
    // numbers (ids, args, a length) may hold the poison byte too; a string may point at them
    parts.push(noPoison(out));
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/** Offsets of the SYSCALL records ingest() must translate: the well-formed prefix, as the C loop and the host walk it. */
function expectedEvents(L: Layout, view: Uint8Array, bytes: number, max: number): number[] {
  const dv = new DataView(view.buffer, view.byteOffset, view.byteLength);
  const out: number[] = [];
  for (let off = 0; off + L.sizes.hdr! <= bytes; ) {
    const len = dv.getUint32(off + L.hdr.len!, true);
    if (len < L.sizes.hdr! || len % 8 !== 0 || off + len > bytes) break;
    if (dv.getUint16(off + L.hdr.kind!, true) === L.kinds.SYSCALL && len >= L.sizes.syscall! && out.length < max) out.push(off);
    off += len;
  }
  return out;
}

/** Fuzzes the addon's translator within `bounds`; undefined when the addon is not built. */
export async function fuzzKernelDecoder(bounds: FuzzBounds): Promise<FuzzReport | undefined> {
  const loaded = loadNative();
  if ('error' in loaded) return undefined;
  const native = loaded.native;
  const abi = native.ingestAbi;
  const L = native.layout() as unknown as Layout;
  const fields = Array.from({ length: abi.FLD_COUNT! - 1 }, (_, j) => j + 1).filter((f) => f !== abi.FLD_ARG_UID);
  let translated = 0;
  const report = await runFuzz(
    'kernel-decoder',
    arbitraries(abi),
    async (c) => {
      const records = encode(L, c.records);
      const bytes = c.cutAt === undefined ? records.length : c.cutAt % (records.length + 1);
      // the records between two poisoned guards, in one buffer
      const viewBuf = new Uint8Array(records.length + 2 * GUARD).fill(POISON);
      viewBuf.set(records, GUARD);
      const view = viewBuf.subarray(GUARD, GUARD + records.length);
      const memBuf = new Uint8Array(MEM + 2 * GUARD).fill(0xa5);
      const mem = memBuf.subarray(GUARD, GUARD + MEM);
      mem.fill(0);
      const plan = new Int32Array(abi.IP_SLOTS! + 3 * fields.length);
      plan[abi.IP_STRIDE!] = STRIDE;
      plan[abi.IP_HEAD!] = HEAD;
      plan[abi.IP_NSLOTS!] = fields.length;
      for (let nr = 0; nr < abi.NR_SYSCALLS!; nr++) {
        plan[abi.IP_NR! + 2 * nr] = c.typeIds[nr]!;
        plan[abi.IP_NR! + 2 * nr + 1] = c.classes[nr]!;
      }
      c.consts.forEach(([at, len], k) => plan.set([at, len], abi.IP_CONST! + 2 * k));
      plan.set(c.oflags, abi.IP_OFLAGS!);
      fields.forEach((f, j) => plan.set([f, HEAD + 8 * j, j], abi.IP_SLOTS! + 3 * j));
      const heapStart = MEM / 2;
      const state = new Float64Array(abi.IS_WORDS!);
      state[abi.IS_MAX!] = c.max;
      state[abi.IS_HEAP!] = heapStart;
      state[abi.IS_HEAP_END!] = heapStart + c.heapRoom;
      state[abi.IS_BASE!] = 0;
      const offsets = new Uint32Array(Math.floor(MEM / 2 / STRIDE));
      const tidPid = new Uint32Array(1 << 16);
      const pidAddr = new Uint32Array(1 << 16);
      const starts = new BigUint64Array(64);
      const dv = new DataView(view.buffer, view.byteOffset, view.byteLength);
      for (let off = 0, calls = 0; ; calls++) {
        if (calls > records.length) throw new Error('ingest() made no progress');
        const r = native.ingest(view, off, bytes, mem, plan, c.blob, tidPid, pidAddr, state, offsets, starts);
        if (!(r >= off && r <= bytes)) throw new Error(`ingest() returned ${r} for records ${off}..${bytes}`);
        if (state[abi.IS_STOP!] === 0) break;
        if (state[abi.IS_STOP!] !== 1) throw new Error(`stop ${state[abi.IS_STOP!]} without a host-translated field in the plan`);
        off = r + dv.getUint32(r + L.hdr.len!, true); // a process record: the host applies it and goes on
      }
      const n = state[abi.IS_EVENTS]!;
      const want = expectedEvents(L, view, bytes, c.max);
      const got = Array.from(offsets.subarray(0, n));
      if (got.join() !== want.join()) throw new Error(`translated records at [${got}], the well-formed SYSCALL records are at [${want}]`);
      if (state[abi.IS_NUM] !== n) throw new Error(`evt.num advanced ${state[abi.IS_NUM]} for ${n} events`);
      const heapEnd = state[abi.IS_HEAP!]!;
      if (heapEnd > heapStart + c.heapRoom) throw new Error(`string area used to ${heapEnd}, past its end ${heapStart + c.heapRoom}`);
      for (let i = 0; i < GUARD; i++) if (memBuf[i] !== 0xa5 || memBuf[GUARD + MEM + i] !== 0xa5) throw new Error(`a write outside the memory (guard byte ${i})`);
      for (let i = n * STRIDE; i < heapStart; i++) if (mem[i] !== 0) throw new Error(`a write at ${i}, past the last event's record (${n} events)`);
      for (let i = heapStart + c.heapRoom; i < MEM; i++) if (mem[i] !== 0) throw new Error(`a write at ${i}, past the string area`);
      const stray = mem.subarray(heapStart, heapEnd).indexOf(POISON);
      if (stray >= 0) throw new Error(`a byte from outside the records in the string area at ${heapStart + stray}`);
      for (let k = 0; k < n; k++) {
        const nr = dv.getUint16(got[k]! + L.hdr.nr!, true);
        const type = new DataView(mem.buffer, mem.byteOffset).getUint32(k * STRIDE, true);
        if (type !== (nr < abi.NR_SYSCALLS! ? c.typeIds[nr]! : 0)) throw new Error(`event ${k}: evt.type id ${type} for syscall ${nr}`);
      }
      // bounds the addon refuses are a RangeError, never a read past the view
      let refused = false;
      try {
        native.ingest(view, 0, view.length + 1, mem, plan, c.blob, tidPid, pidAddr, state, offsets, starts);
      } catch (err) {
        refused = err instanceof RangeError;
      }
      if (!refused) throw new Error('ingest() over more bytes than the view holds did not throw a RangeError');
      translated += n;
    },
    bounds,
  );
  return { ...report, accepted: translated };
}
