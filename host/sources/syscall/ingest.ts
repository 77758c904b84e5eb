// The syscall source's byte path: kernel wire records (probes/src/events.h) as the capture addon
// copies them, turned into eval records in a module's batch region without a JS object per
// event. PROC/EXEC/FORK/EXIT records update the persistent thread table (thread-table.ts); each
// SYSCALL record becomes one eval record whose slots (the module's layout) are filled from the
// record's numbers and byte ranges, its `thread` pointing at the process's entry. Only matched
// events are later read back into objects (fieldsOf): their record translated again into an eval
// record of every field, whose bytes alerts print, so conditions and outputs see one value.
// Fields the kernel record provides: evt.type, evt.num, evt.rawres, evt.res, evt.failed, fd.num,
// fd.name (an absolute path normalized as posix.normalize does)/nameraw/directory/filename, fd.type/typechar/sockfamily
// (of socket(2)'s new socket by its domain, as libsinsp's add_socket), evt.is_open_read/write/create,
// fd.sip/cip/lip/rip, fd.sport/cport/lport/rport, fd.ip/port/net and the networks,
// evt.arg.flags (opens; AT_* flags of unlinkat/linkat), evt.arg.target, evt.arg.domain (socket), evt.arg.request (ptrace) and the
// per-syscall parameters evt.arg.name/path/filename/oldpath/newpath/mode/fd/uid/cmd/pid/dirfd/res/linkpath as libsinsp
// names and prints them (render.ts; evt.arg.uid's user names live here, so the native translator
// leaves setuid records to this file's when a rule reads it), fd.l4proto (socket(2)'s type argument or the
// probe's sock_type), fd.connected, fd.name_changed, proc.duration (the thread table's start times), container.duration (the container entry's start_ts),
// thread.tid, evt.rawtime (boot ns + the caller's boot-to-epoch offset) and evt.time (the
// same number as decimal text), evt.dir '<', evt.source 'syscall', evt.hostname (the
// constructor's) and evt.is_open_exec (an open creating a file with an execute bit, render.ts
// isOpenExec), evt.buffer and evt.arg.data (the record's I/O buffer: its bytes, and its printable
// text, which fieldsOf gives for both, as alerts print them); the endpoints of a bind or listen
// are those of libsinsp's server socket (fields.ts serverSocket), fd.sip.name/cip.name/lip.name/
// rip.name (the name the module's DNS table gives the end's address, ../dns/table.ts); process
// fields come from the thread entry, and proc.env[NAME] from its environment (env-index.ts
// envValue, libsinsp's get_env); evt.args of the syscalls evt-args.ts covers, for alerts only
// (fieldsOf renders it; no slot holds it, so a condition reads it as missing). Any other field is missing for kernel
// events (the list: KERNEL_RECORD_FIELDS, fields.ts).
// A SYSCALL record of a process the thread table has no entry for is first given one when the
// constructor has a reader (unknown-process.ts: /proc for `rae run`, as libsinsp reads a thread it
// does not know).
// When the capture addon loads, the per-event work runs in C (probes/addon/ingest.c, same
// semantics, driven by a per-module plan of slots); this file's JS translator is the fallback
// and the reference the tests compare the native one with.
// The field values are written by field class, as libsinsp's filterchecks are split (ingest/):
// ingest/translate.ts writes one eval record, its slots filled by ingest/evt.ts, evt-arg.ts, fd.ts,
// proc.ts and container.ts from the record's facts (ingest/facts.ts) into the working state of
// ingest/context.ts; ingest/ingest-abi.ts mirrors ingest.h's numbers, ingest/native.ts builds
// the native translator's plan and constants. This file drives batches through either translator.
import { hostname as osHostname } from 'node:os';
import { HDR, KIND, SIZES } from '../../abi/records.js';
import { decodeRaw } from '../../engine/index.js';
import type { NativeIngest } from './addon.js';
import { MEM, REC, THREAD } from '../../abi/module.js';
import { evtArgs } from './evt-args.js';
import type { LateStart, RecordTranslator, RuleModule } from '../../runtime/index.js';
import { ERRNO, processFields, recordFields } from './fields.js';
import { ThreadTable } from './thread-table.js';
import { UnknownProcesses, type UnknownProcessOptions } from './unknown-process.js';
import { ContainerTable, containerFields } from '../container/table.js';
import { DnsTable, domainNames } from '../dns/index.js';
import { NR_SYSCALLS, syscallIds } from './syscalls.js';
import { IngestContext, type Plan } from './ingest/context.js';
import { BY_FIELD, BY_KEYED, SCRATCH } from './ingest/field-table.js';
import { IABI, STOP_HOST_RECORD, STOP_UNKNOWN } from './ingest/ingest-abi.js';
import { constants, nativePlan, nativeTranslator } from './ingest/native.js';
import { envRange } from './ingest/proc.js';
import { NAMES } from './ingest/syscall-class.js';
import { translateRecord } from './ingest/translate.js';

export { nativeTranslator };

/** The syscalls of a process's exec (spawned_process): a container's start is the first of its init. */
const EXEC_NRS = new Set(syscallIds(new Set(['execve', 'execveat'])).ids);
const NO_LATE_STARTS: readonly LateStart[] = [];

/** Bytes of fieldsOf's memory: the record and its strings (a kernel record is at most 16 KiB; its paths are copied a few times). */
const SCRATCH_BYTES = 1 << 18;

/** Turns kernel record batches into eval records for the running module. */
export class KernelIngest implements RecordTranslator {
  readonly threads = new ThreadTable();
  /** The native translator in use, undefined for the JS one. */
  readonly native: NativeIngest | undefined;
  private readonly state = new Float64Array(IABI.IS_WORDS);
  private offs = new Uint32Array(0);

  /** evt.hostname. */
  readonly hostname: string;
  private readonly konst: { blob: Uint8Array; table: Int32Array };
  /** The JS translator's state: where it writes, the record's facts, evt.num, the epoch offset. */
  private readonly c: IngestContext;

  /** container.* and k8s.* values (rae run feeds it from the metadata cache). */
  readonly containers = new ContainerTable();
  /** The addresses of the rules' domain names, for fd.sip.name and friends (rae run's resolver feeds it). */
  readonly dns = new DnsTable();
  /** Entries for processes first seen in a SYSCALL record; none unless the constructor is given a reader. */
  readonly unknown: UnknownProcesses | undefined;

  /**
   * `native: false` forces the JS translator (tests compare the two); `hostname` is evt.hostname
   * (default: the OS's); `unknownProcesses` reads a process the thread table has no entry for when
   * its first SYSCALL record comes (the live source passes /proc; recordings and synthetic records
   * pass a stand-in or nothing, so their pids are never looked up on this machine).
   */
  constructor(opts: { native?: boolean; hostname?: string; unknownProcesses?: UnknownProcessOptions } = {}) {
    this.threads.containers = this.containers;
    this.unknown = opts.unknownProcesses && new UnknownProcesses(this.threads, opts.unknownProcesses);
    this.native = opts.native === false ? undefined : nativeTranslator();
    this.hostname = opts.hostname ?? osHostname();
    this.konst = constants(this.hostname);
    this.c = new IngestContext(this.threads, this.hostname);
  }

  private readonly plans = new WeakMap<RuleModule, Plan>();
  private bound: RuleModule | undefined;
  /** fieldsOf's own memory: one eval record of every field this translator writes (SCRATCH), then its strings. */
  private scratch: Uint8Array | undefined;

  private plan(m: RuleModule): Plan {
    let p = this.plans.get(m);
    if (!p) {
      const layout = m.compiled.generated.layouts.syscall;
      const slots: Plan['slots'] = layout.slots.flatMap((slot) => {
        const keyed = slot.ref.arg !== undefined ? BY_KEYED[slot.ref.def.name] : undefined;
        if (keyed) return [{ slot, field: keyed, key: Buffer.from(slot.ref.arg!) }];
        return BY_FIELD[slot.ref.canonical] && (slot.ref.arg === undefined || slot.ref.canonical.startsWith('evt.arg.')) ? [{ slot, field: BY_FIELD[slot.ref.canonical]! }] : [];
      });
      p = { stride: layout.stride, slots, words: nativePlan(layout.stride, REC.present + 8 * layout.words, slots, this.konst.table) };
      this.plans.set(m, p);
    }
    return p;
  }

  /**
   * Applies the process records of view[0..bytes) to the thread table and writes one eval record
   * per SYSCALL record at the module's batch region. Returns the record offsets of the events
   * (event i of the batch = the record at offsets[i]); evaluate with m.evaluateRecords('syscall', n).
   */
  ingest(m: RuleModule, view: Uint8Array, bytes: number, bootToEpochNs = 0n): number[] {
    const n = this.ingestInto(m, view, bytes, bootToEpochNs);
    return Array.from(this.offs.subarray(0, n));
  }

  /**
   * ingest() without an array per batch: returns the number of events; event i's record offset is
   * offsets[i] of the reused `offsets` array, valid until the next call. `bootToEpochNs` turns
   * record times (CLOCK_BOOTTIME) into evt.rawtime/evt.time.
   */
  ingestInto(m: RuleModule, view: Uint8Array, bytes: number, bootToEpochNs = 0n): number {
    const c = this.c;
    c.epoch = BigInt.asUintN(64, bootToEpochNs);
    if (this.bound !== m) {
      this.threads.bind(m.memory);
      this.containers.bind(m.memory, m.compiled.generated.containerKeys);
      this.dns.bind(m.memory, domainNames(m.rules));
      this.bound = m;
      c.bind(m.memory);
    }
    this.containers.setBootToEpoch(c.epoch);
    this.threads.setBootToEpoch(c.epoch);
    const plan = this.plan(m);
    this.threads.newBatch();
    this.unknown?.newBatch();
    // records in the first half of the batch region, their strings and lists in the second
    const max = Math.floor(MEM.batchSize / 2 / plan.stride);
    if (this.offs.length < max) this.offs = new Uint32Array(max);
    if (this.native) return this.ingestNative(this.native, plan, max, view, bytes);
    const vd = new DataView(view.buffer, view.byteOffset, view.byteLength);
    const offsets = this.offs;
    let n = 0;
    const head = REC.present + 8 * m.compiled.generated.layouts.syscall.words; // header + presence words
    c.heap = MEM.batchBase + MEM.batchSize / 2;
    c.consts.clear();
    for (let off = 0; off + SIZES.hdr <= bytes; ) {
      const len = vd.getUint32(off + HDR.len, true);
      if (len < SIZES.hdr || len % 8 !== 0 || off + len > bytes) break;
      if (vd.getUint16(off + HDR.kind, true) === KIND.SYSCALL) {
        if (n < max && len >= SIZES.syscall) {
          this.unknown?.fill(view, off);
          const at = MEM.batchBase + n * plan.stride;
          c.u8.fill(0, at, at + head);
          translateRecord(c, plan, view, vd, off, at);
          offsets[n++] = off;
        }
      } else this.applyProcess(view, off);
      off += len;
    }
    return n;
  }

  /** The record offsets of the last ingestInto() batch (reused: copy what must outlive the next call). */
  get offsets(): Uint32Array {
    return this.offs;
  }

  /** The same pass in C: the translator stops at each process record, which the table applies here. */
  private ingestNative(native: NativeIngest, plan: Plan, max: number, view: Uint8Array, bytes: number): number {
    const c = this.c;
    const st = this.state;
    st[IABI.IS_EVENTS] = 0;
    st[IABI.IS_MAX] = max;
    st[IABI.IS_HEAP] = MEM.batchBase + MEM.batchSize / 2;
    st[IABI.IS_HEAP_END] = MEM.batchBase + MEM.batchSize;
    st[IABI.IS_NUM] = c.num;
    st[IABI.IS_BASE] = MEM.batchBase;
    st[IABI.IS_CONST] = 0;
    st[IABI.IS_EPOCH_LO] = Number(c.epoch & 0xffffffffn);
    st[IABI.IS_EPOCH_HI] = Number(c.epoch >> 32n);
    st[IABI.IS_LOOKUP] = this.unknown ? 1 : 0;
    const { tidPid, pidAddr } = this.threads;
    c.consts.clear();
    for (let off = 0; ; ) {
      off = native.ingest(view, off, bytes, c.mem, plan.words, this.konst.blob, tidPid, pidAddr, st, this.offs, this.threads.starts);
      if (st[IABI.IS_STOP] === STOP_HOST_RECORD) {
        off = this.hostRecord(plan, view, off);
        continue;
      }
      if (st[IABI.IS_STOP] === STOP_UNKNOWN) {
        // filled, the pass resumes at the record; left unknown (no room in the table), the host writes it
        if (!this.unknown!.fill(view, off)) off = this.hostRecord(plan, view, off);
        continue;
      }
      if (st[IABI.IS_STOP] !== 1) break;
      this.applyProcess(view, off);
      off += view[off + HDR.len]! | (view[off + HDR.len + 1]! << 8) | (view[off + HDR.len + 2]! << 16) | (view[off + HDR.len + 3]! << 24);
    }
    c.num = st[IABI.IS_NUM]!;
    return st[IABI.IS_EVENTS]!;
  }

  /** Applies the process record at view[off..] to the thread table; a FORK's unknown parent is read first (unknown-process.ts). */
  private applyProcess(view: Uint8Array, off: number): void {
    this.unknown?.beforeFork(view, off);
    this.threads.apply(view, off);
  }

  /**
   * The events of the last batch that are a container's start (the successful execve of its init,
   * vpid 1) judged while the container's metadata is missing (ContainerTable.initExec marks them
   * when their EXEC record is applied); each mark is used once. Nothing to scan without marks.
   */
  lateStarts(view: Uint8Array, n: number): readonly LateStart[] {
    const marks = this.containers.initExecs;
    if (marks.size === 0) return NO_LATE_STARTS;
    const vd = new DataView(view.buffer, view.byteOffset, view.byteLength);
    const out: LateStart[] = [];
    for (let i = 0; i < n && marks.size > 0; i++) {
      const off = this.offs[i]!;
      const key = marks.get(vd.getUint32(off + HDR.pid, true));
      if (key === undefined || !EXEC_NRS.has(vd.getUint16(off + HDR.nr, true)) || vd.getBigInt64(off + HDR.ret, true) !== 0n) continue;
      marks.delete(vd.getUint32(off + HDR.pid, true));
      if (!this.containers.knows(key)) out.push({ event: i, key });
    }
    return out;
  }

  /** The container fields of container `key` as the rules read them now (its entry in the container table). */
  containerFieldsOf(key: string): Record<string, unknown> {
    return this.containers.fieldsOf(key);
  }

  /** The native translator's event at `off` written by the JS one (its state in and out); returns the next record's offset. */
  private hostRecord(plan: Plan, view: Uint8Array, off: number): number {
    const c = this.c;
    const st = this.state;
    const n = st[IABI.IS_EVENTS]!;
    const at = MEM.batchBase + n * plan.stride;
    c.heap = st[IABI.IS_HEAP]!;
    c.num = st[IABI.IS_NUM]!;
    c.u8.fill(0, at, at + plan.words[IABI.IP_HEAD]!);
    const vd = new DataView(view.buffer, view.byteOffset, view.byteLength);
    translateRecord(c, plan, view, vd, off, at);
    this.offs[n] = off;
    st[IABI.IS_EVENTS] = n + 1;
    st[IABI.IS_HEAP] = c.heap;
    st[IABI.IS_NUM] = c.num;
    return off + vd.getUint32(off + HDR.len, true);
  }

  /**
   * The fields of event i of the last ingested batch (its kernel record at `recordOffset`) as a
   * field-event object, for alert formatting of matches, the reference interpreter and tests: the
   * record translated once more, by the JS translator, into a scratch eval record holding
   * every field it writes (SCRATCH), whose slots are then read back by kind (fields.ts
   * recordFields); evt.type from the record's syscall number, process fields from the thread
   * entry the batch's eval record points at, container fields from its container entry.
   */
  fieldsOf(m: RuleModule, view: Uint8Array, recordOffset: number, event: number): Record<string, unknown> {
    const c = this.c;
    const mem = new DataView(m.memory.buffer);
    const thread = mem.getUint32(MEM.batchBase + event * this.plan(m).stride + REC.thread, true);
    const vd = new DataView(view.buffer, view.byteOffset, view.byteLength);
    const nr = vd.getUint16(recordOffset + HDR.nr, true);
    const scratch = (this.scratch ??= new Uint8Array(SCRATCH_BYTES));
    const saved = { u8: c.u8, dv: c.dv, heap: c.heap, heapEnd: c.heapEnd, consts: c.consts, num: c.num };
    try {
      c.u8 = scratch;
      c.dv = new DataView(scratch.buffer);
      c.heap = SCRATCH.layout.stride;
      c.heapEnd = scratch.length;
      c.consts = new Map();
      scratch.fill(0, 0, SCRATCH.layout.stride);
      translateRecord(c, SCRATCH.plan, view, vd, recordOffset, 0, thread);
      const name = nr < NR_SYSCALLS ? NAMES[nr]! : '';
      const out: Record<string, unknown> = { 'evt.type': name, ...recordFields(scratch, 0, SCRATCH.layout) };
      // evt.args: an output field, rendered here from the record and the fields above
      const args = evtArgs(name, view, vd, recordOffset, Number(vd.getBigInt64(recordOffset + HDR.ret, true)), out, (e) => ERRNO[e]);
      if (args !== undefined) out['evt.args'] = args;
      Object.assign(out, processFields(m.memory, thread));
      // keyed process fields the module reads (proc.env[NAME]), from the thread entry as its translator wrote them
      for (const { slot, key } of this.plan(m).slots) {
        const v = key && envRange(c, thread, key);
        if (v) out[slot.ref.canonical] = decodeRaw(c.mem.subarray(v[0], v[0] + v[1]));
      }
      if (thread !== 0) Object.assign(out, containerFields(m.memory, mem.getUint32(thread + THREAD.ctr, true), m.compiled.generated.containerKeys));
      return out;
    } finally {
      Object.assign(c, saved);
    }
  }
}
