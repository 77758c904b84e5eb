// The JS translator's working state, shared by the field classes (evt.ts, evt-arg.ts, fd.ts,
// proc.ts, container.ts): where an eval record's slots and strings are written (the module's
// batch region, or fieldsOf's scratch memory), the facts of the SYSCALL record being written, and
// the batch-wide values (evt.num, the boot-to-epoch offset, the host name, the thread table).
// Consumes the module ABI (host/abi/module.ts); produces 8-byte slot values: a number, or a
// (address, length) reference into the string area.
import { MEM } from '../../../abi/module.js';
import type { Slot } from '../../../engine/codegen/index.js';
import type { ThreadTable } from '../thread-table.js';

/** A module's plan: the slots its rules read, each with the field that fills it. */
export interface Plan {
  /** `key`: the argument of a keyed field (proc.env[NAME]'s NAME). */
  slots: Array<{ slot: Slot; field: number; key?: Uint8Array }>;
  stride: number;
  /** The native translator's plan (probes/addon/ingest.h RAE_IP_*). */
  words: Int32Array;
}

/** The facts of the SYSCALL record being written (facts.ts readFacts). */
export interface Facts {
  /** The syscall's name, '' when its number has none. */
  name: string;
  /** Its class bits (syscall-class.ts NR_CLASS). */
  cls: number;
  ret: number;
  /** fd.name: an address in the string area, or -(offset in the kernel view) - 1 until first copied; 0 none. */
  fdName: number;
  fdLen: number;
  /** The first path as passed: its offset in the kernel view (0 none) and length. */
  rawOff: number;
  rawLen: number;
  /** An open (fd.type file). */
  file: boolean;
  /** O_DIRECTORY in the open flags. */
  dirFlag: boolean;
  /** Open flags, AT_* flags of unlinkat/linkat or socket(2)'s domain. */
  flags: number;
  /** The socket ends: offsets of their sockaddr in the kernel view, -1 for no such end (a server socket's). */
  client: number;
  server: number;
  local: number;
  peer: number;
  /** A bound socket (bind or listen): the local end is the server's. */
  servSock: boolean;
  /** The address family of the peer end, else of the local one. */
  fam: number;
  /** The event's thread entry address, 0 = unknown. */
  thread: number;
}

/** The JS translator's state and the writes every field class uses. */
export class IngestContext {
  /** The memory eval records and strings are written to: the module's, or fieldsOf's scratch. */
  u8!: Uint8Array;
  dv!: DataView;
  /** Next free byte of the string area. */
  heap = 0;
  /** End of the string area: the batch region's, or the scratch memory's while fieldsOf writes there. */
  heapEnd = MEM.batchBase + MEM.batchSize;
  /** Constant strings already written in this batch, by text. */
  consts = new Map<string, [number, number]>();
  /** The module's memory, also while fieldsOf translates into its scratch record (thread and container entries live there). */
  mem!: Uint8Array;
  memDv!: DataView;
  /** evt.num of the last event written. */
  num = 0;
  /** Boot ns -> epoch ns of the current batch (evt.time, evt.rawtime). */
  epoch = 0n;
  /** The argument of the keyed field being written (proc.env[NAME]'s NAME). */
  key: Uint8Array | undefined;
  // The facts of the record being written (one reused object, no allocation per event).
  readonly f: Facts = { name: '', cls: 0, ret: 0, fdName: 0, fdLen: 0, rawOff: 0, rawLen: 0, file: false, dirFlag: false, flags: 0, client: 0, server: 0, local: 0, peer: 0, servSock: false, fam: 0, thread: 0 };

  /** `threads`: process entries (proc.duration, user names); `hostname`: evt.hostname. */
  constructor(
    readonly threads: ThreadTable,
    readonly hostname: string,
  ) {}

  /** Writes into `memory` (a newly bound module's) from now on. */
  bind(memory: WebAssembly.Memory): void {
    this.mem = new Uint8Array(memory.buffer);
    this.u8 = this.mem;
    this.dv = new DataView(memory.buffer);
    this.memDv = this.dv;
  }

  num64(to: number, v: number): true {
    this.dv.setUint32(to, v >>> 0, true);
    this.dv.setInt32(to + 4, Math.floor(v / 4294967296), true);
    return true;
  }

  ref(to: number, addr: number, len: number): true {
    this.dv.setUint32(to, addr, true);
    this.dv.setUint32(to + 4, len, true);
    return true;
  }

  /** fd.name as a ref (copying the kernel range into the heap on first use). */
  fdName(view: Uint8Array, to: number): boolean {
    const f = this.f;
    if (f.fdName < 0) {
      const at = this.alloc(f.fdLen);
      if (at === 0) return false;
      const from = -f.fdName - 1;
      this.u8.set(view.subarray(from, from + f.fdLen), at);
      f.fdName = at;
    }
    return f.fdName !== 0 && this.ref(to, f.fdName, f.fdLen);
  }

  copyRange(view: Uint8Array, from: number, len: number, to: number): boolean {
    const at = this.alloc(len);
    if (at === 0) return false;
    this.u8.set(view.subarray(from, from + len), at);
    return this.ref(to, at, len);
  }

  /** A string as a ref, written once per batch. */
  constant(s: string, to: number): boolean {
    let v = this.consts.get(s);
    if (v === undefined) {
      const b = Buffer.from(s);
      const at = this.alloc(b.length);
      if (at === 0) return false;
      this.u8.set(b, at);
      v = [at, b.length];
      this.consts.set(s, v);
    }
    return this.ref(to, v[0], v[1]);
  }

  /** `n` bytes of the string area (8-aligned), 0 when it is full. */
  alloc(n: number): number {
    const at = this.heap;
    if (at + n > this.heapEnd) return 0;
    this.heap = (at + n + 7) & ~7;
    return at;
  }
}
