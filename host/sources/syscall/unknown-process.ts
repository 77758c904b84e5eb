// Processes first seen in a SYSCALL record: the thread table has no entry for their pid (no
// PROC, EXEC or FORK record of them was applied: started between the probe's attach and the
// /proc bootstrap's read of it, a lost FORK, a full table, a capture started after them). Such a
// record would be judged with every process field missing, and a rule such as 'Non sudo setuid'
// (`not (user.name=root or user.uid=0)`) matches every one. libsinsp reads /proc for a thread it
// does not know (sinsp_thread_manager::get_thread_ref with query_os_if_not_found, scap_proc_get,
// libs userspace/libsinsp/thread_manager.cpp); this module does the same through an injected
// reader, before the record is translated (ingest.ts, and ingest.c's RAE_IS_LOOKUP stop).
// Consumes: the SYSCALL record's header (pid, tid, effective uid/gid, time). Produces: a PROC
// record applied to the thread table, and one count per lookup by result.
//
// Bounded: a /proc read is about a dozen small file reads (bench/lookup.ts: read_us); a batch
// makes at most `readsPerBatch` of them (32) and starts none once its reads took `batchBudgetMs`
// (5 ms), the first always (so deferred ones progress); the hot path waits at most that plus one
// read per batch. A process past the bound, or gone from /proc (exited before the batch was
// read), or whose /proc entry started after the record (its pid reused), gets an entry from the
// record header: its pid and effective uid/gid (user.*, group.*: what scap_proc_get reads from
// /proc/PID/status had the process been there), proc.name and proc.exe '<NA>' and user.loginuid
// -1 as libsinsp's fake entry for a thread it cannot read, no cwd and no container. A process
// deferred by the bound is read again at the start of the next batches, within their bound.
import { HDR, KIND, MAX_RECORD, PF, PROC } from '../../abi/records.js';
import { encodeProcRecord, type ProcSnapshot } from './procfs.js';
import type { ThreadTable } from './thread-table.js';
import type { ProcessLookupResult } from '../../metrics/names.js';

/** Reads one process by pid (procfs.ts readProcess over /proc, or a test's stand-in); undefined when it is not there. */
type ProcessReader = (pid: number) => ProcSnapshot | undefined;

/** How an unknown process's entry was filled: read (procfs), from the header because it was gone (gone) or past the bound (deferred). */
export type LookupResult = ProcessLookupResult;

/** Options of KernelIngest's unknown-process lookup. */
export interface UnknownProcessOptions {
  read: ProcessReader;
  /** Told of each lookup (the syscall source counts them in enginesecurity_engine_process_lookups_total). */
  onLookup?: (result: LookupResult) => void;
  /** /proc reads per batch at most (default 32). */
  readsPerBatch?: number;
  /** No read starts once a batch's reads took this long (default 5 ms). */
  batchBudgetMs?: number;
}

/** /proc stat's start time has 10 ms ticks: a process that started later than this after the record is another one. */
const START_SLACK_NS = 20_000_000n;
/** Deferred pids kept for a later read at most (past it, a deferred entry keeps its header values until an EXEC). */
const DEFERRED_MAX = 4096;
const NA = Buffer.from('<NA>');
const EMPTY = Buffer.alloc(0);

/** Fills thread entries for processes first seen in a SYSCALL record. */
export class UnknownProcesses {
  /** Lookups so far, by result. */
  readonly counts: Record<LookupResult, number> = { procfs: 0, gone: 0, deferred: 0 };
  private readonly scratch = new Uint8Array(MAX_RECORD);
  private readonly readsPerBatch: number;
  private readonly budgetNs: bigint;
  private reads = 0;
  private spentNs = 0n;
  /** Deferred pids, read again in later batches while their entry lives. */
  private readonly deferred = new Set<number>();

  constructor(
    private readonly threads: ThreadTable,
    private readonly opts: UnknownProcessOptions,
  ) {
    this.readsPerBatch = opts.readsPerBatch ?? 32;
    this.budgetNs = BigInt(Math.round((opts.batchBudgetMs ?? 5) * 1e6));
  }

  /** `pid` read within the batch's bound: its snapshot, undefined when not in /proc, 'deferred' past the bound. */
  private read(pid: number): ProcSnapshot | undefined | 'deferred' {
    if (this.reads > 0 && (this.reads >= this.readsPerBatch || this.spentNs >= this.budgetNs)) return 'deferred';
    const t = process.hrtime.bigint();
    const p = this.opts.read(pid);
    this.spentNs += process.hrtime.bigint() - t;
    this.reads++;
    return p;
  }

  /** Starts a batch: a new read budget, first spent on processes deferred before. */
  newBatch(): void {
    this.reads = 0;
    this.spentNs = 0n;
    for (const pid of this.deferred) {
      if (this.threads.entryOfPid(pid) !== 0) {
        const p = this.read(pid);
        if (p === 'deferred') break;
        if (p) this.apply(p, p.pid, p.startNs);
      }
      this.deferred.delete(pid);
    }
  }

  /** Gives the process of the SYSCALL record at view[off..] an entry when it has none; false when it still has none (pid 0, no room in the table). */
  fill(view: Uint8Array, off: number): boolean {
    const vd = new DataView(view.buffer, view.byteOffset + off, HDR.ret + 8);
    const pid = vd.getUint32(HDR.pid, true);
    if (this.threads.entryOfPid(pid) !== 0) return true;
    if (pid === 0) return false;
    const tid = vd.getUint32(HDR.tid, true);
    const ts = vd.getBigUint64(HDR.ts_ns, true);
    const got = this.read(pid);
    let p = got === 'deferred' || (got && got.startNs > ts + START_SLACK_NS) ? undefined : got;
    const result: LookupResult = got === 'deferred' ? 'deferred' : p ? 'procfs' : 'gone';
    const uid = vd.getUint32(HDR.uid, true);
    const gid = vd.getUint32(HDR.gid, true);
    // libsinsp's entry for a thread it cannot read (thread_manager.cpp get_thread_ref): comm and exe '<NA>'
    p ??= {
      pid,
      ppid: 0,
      vpid: pid,
      sid: 0,
      pgid: 0,
      ruid: uid,
      euid: uid,
      rgid: gid,
      egid: gid,
      loginuid: 0xffffffff,
      tty: 0,
      startNs: 0n,
      pidns: 0,
      mntns: 0,
      cgroupId: vd.getBigUint64(HDR.cgroup_id, true),
      exeWritable: false,
      comm: NA,
      exepath: EMPTY,
      args: [NA],
      cwd: EMPTY,
      cgroup: EMPTY,
    };
    if (!this.apply(p, tid, ts)) return false;
    if (result !== 'procfs') this.threads.headerOnly(pid);
    if (result === 'deferred' && this.deferred.size < DEFERRED_MAX) this.deferred.add(pid);
    this.counts[result]++;
    this.opts.onLookup?.(result);
    return true;
  }

  /**
   * Before the FORK record at view[off..] is applied: its parent read from /proc when the table
   * has no entry for it, so the child inherits its executable, command line, cwd and container
   * (libsinsp looks the caller of a clone up the same way, parsers.cpp parse_clone_exit_child,
   * get_thread_ref with query_os_if_not_found). Past the bound or gone, the child keeps what its
   * FORK record carries (ids and comm).
   */
  beforeFork(view: Uint8Array, off: number): void {
    if ((view[off + HDR.kind]! | (view[off + HDR.kind + 1]! << 8)) !== KIND.FORK) return;
    const vd = new DataView(view.buffer, view.byteOffset + off, PROC.pflags + 4);
    if ((vd.getUint32(PROC.pflags, true) & PF.THREAD) !== 0) return;
    const ppid = vd.getUint32(PROC.ppid, true);
    if (ppid === 0 || this.threads.entryOfPid(ppid) !== 0) return;
    const ts = vd.getBigUint64(HDR.ts_ns, true);
    const p = this.read(ppid);
    const result: LookupResult = p === 'deferred' ? 'deferred' : p && p.startNs <= ts + START_SLACK_NS && this.apply(p, ppid, ts) ? 'procfs' : 'gone';
    this.counts[result]++;
    this.opts.onLookup?.(result);
  }

  /** Applies `p` as a PROC record and maps thread `tid` to it (the record names only the leader); false when the table had no room. */
  private apply(p: ProcSnapshot, tid: number, ts: bigint): boolean {
    if (encodeProcRecord(p, this.scratch, 0, ts) === 0) return false;
    this.threads.apply(this.scratch, 0);
    if (this.threads.entryOfPid(p.pid) === 0) return false;
    this.threads.tidPid[tid] = p.pid;
    return true;
  }
}
