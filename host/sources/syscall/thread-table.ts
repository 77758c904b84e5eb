// The persistent thread table in a module's state region (probes/src/eval_abi.h): one
// struct rae_thread per process, written once from the kernel's PROC/EXEC/FORK records (bytes
// copied from the record, never decoded into JS strings; user.name and group.name of the
// record's effective ids from the host's passwd and group files; proc.is_exe_from_memfd from the
// exe path, proc.is_exe_upper/lower_layer from the probe's overlayfs check (EXEC; a fork keeps
// them); proc.exe_ino.ctime/mtime from the record, ctime_duration_proc_start from them and the
// start time (exeTimes; a fork keeps them); proc.sid/vpgid from the record, user.loginname the passwd
// name of user.loginuid, the start of each pid namespace's init (its vpid-1 process) reported to
// the container table as container.start_ts of the containers running in it, the address of the
// process's container entry there (container.* and k8s.* fields; initExec marks an init's EXEC
// in a container with no metadata there, to judge its start again), proc.sname the comm of the
// live process whose pid is the session id, kept current when that leader is written again or has exited;
// thread.cap_inheritable/permitted/effective as libsinsp's caps_to_string text of the record's
// sets (FORK: the child's, EXEC/PROC: the new image's, CAPS: capset's; a set*id call's CAPS record
// rewrites user.* and group.*), one heap copy per distinct set); proc.env as libsinsp's
// concatenate_all_env text (the EXEC/PROC record's NUL-separated environment joined by blanks, at
// most MAX_ENV - 1 bytes; a FORK shares its parent's) followed in the heap by the length of each
// variable (env-index.ts: proc.env[NAME] finds whole variables), one heap copy per distinct
// environment; linked to the parent's entry, freed when the process has exited and no child
// points at it any more. The tid -> entry index lives here on the host as two dense arrays (tid ->
// pid, pid -> entry address; 0 = unknown), which the native translator (probes/addon/ingest.c)
// reads directly; the entries and their strings live in linear memory and move with a hot swap
// (RuleModule.adoptState copies the used part).
import { CAPS, EXIT, HDR, KIND, MAX_ENV, PF, PROC, XF } from '../../abi/records.js';
import { envBytes, envSpan, writeEnv } from './env-index.js';
import { capsText } from './caps.js';
import type { ContainerTable } from '../container/table.js';
import { UserNames } from './users.js';
import { ABI_VERSION, MEM, STATE, TF, THREAD, TP } from '../../abi/module.js';

interface Proc {
  addr: number;
  pid: number;
  parent: Proc | undefined;
  children: number;
  /** proc.sid as last written (its members set below). */
  sid: number;
  exited: boolean;
  /** The pid namespace (inode) this process is the init of (vpid 1), if it is one. */
  initOf?: number;
}
/** x86-64 capset(2): its CAPS record carries sets; every other CAPS record (set*id) carries ids. */
const NR_CAPSET = 126;

/** Kernel pids and tids are below PID_MAX_LIMIT (4194304 on 64-bit); the arrays cover them all. */
const PID_LIMIT = 4194304;

/** Offsets of the state header (struct rae_state_hdr). */
const H = { abi: 0, threads: 4, heapTop: 8 } as const;

/** Writes and indexes thread entries; call `bind` with the live module's memory first. */
export class ThreadTable {
  private readonly procs = new Map<number, Proc>();
  /** tid -> pid (0 = unknown), indexed directly; lazily committed pages. */
  readonly tidPid = new Uint32Array(PID_LIMIT);
  /** pid -> thread entry address (0 = none). */
  readonly pidAddr = new Uint32Array(PID_LIMIT);
  /** Process start time (boot ns) by thread entry slot, 0 = unknown: proc.duration (ingest.c reads it). */
  readonly starts = new BigUint64Array(STATE.threadSlots);
  /** Start (boot ns) of the init of each pid namespace (inode) with a live init: container.start_ts, libsinsp's pidns_init_start_ts. */
  private readonly pidnsInit = new Map<number, bigint>();
  /** setBootToEpoch's offset. */
  private bootToEpoch = 0n;
  /** Live processes by session id (proc.sname follows its leader). */
  private readonly members = new Map<number, Set<Proc>>();
  /** Processes that exited in the current batch: they leave their session at the next (newBatch). */
  private readonly leaving: Proc[] = [];
  /** Session ids whose leader exited in the current batch: their members' proc.sname is cleared at the next (newBatch). */
  private readonly leaderGone: number[] = [];
  /** Processes that exited in the current batch, by pid (still session leaders until newBatch). */
  private readonly exitedNow = new Map<number, Proc>();
  /** Heap address of each capability set's text written since the last compaction (shared by entries). */
  private readonly capRefs = new Map<bigint, number>();
  /** Heap address of each environment written since the last compaction (siblings mostly share one), by its bytes. */
  private readonly envRefs = new Map<string, number>();
  private readonly free: number[] = [];
  /** Entries released during the current batch: reused only from the next one (newBatch), so an event earlier in the batch still points at its process. */
  private readonly freeing: number[] = [];
  private highWater = 0;
  private heapTop: number = STATE.heap;
  /** heapTop after the last compaction, and the entries released since: whether compacting again can free anything. */
  private compactedTop: number = STATE.heap;
  private releasedSinceCompact = 0;
  /** Environments not kept (proc.env missing) because the heap's live strings were past ENV_HEAP_SHARE of its size. */
  envDropped = 0;
  private u8!: Uint8Array;
  private dv!: DataView;
  /** Container entries (container.* and k8s.* fields) the entries point at; none in tests that do not need them. */
  containers: ContainerTable | undefined;
  /** Running totals (metrics read them at scrape time): full, process records with no free entry (untracked, libs' n_drops_full_threadtable); strings_cut, strings not kept, the heap full even after compaction. */
  readonly drops = { full: 0, strings_cut: 0 };
  private readonly names = new UserNames();
  private readonly nameCache = new Map<string, Buffer | undefined>();
  private readonly userBytes = (uid: number) => this.nameOf('u', uid, () => this.names.user(uid));
  private readonly groupBytes = (gid: number) => this.nameOf('g', gid, () => this.names.group(gid));

  /** A user or group name as bytes, cached per id for a second (the files can change). */
  private nameOf(kind: string, id: number, look: () => string | undefined): Buffer | undefined {
    const now = Math.floor(Date.now() / 1000);
    if (now !== this.nameEpoch) {
      this.nameCache.clear();
      this.nameEpoch = now;
    }
    const key = `${kind}${id}`;
    if (this.nameCache.has(key)) return this.nameCache.get(key);
    const name = look();
    const b = name === undefined ? undefined : Buffer.from(name);
    this.nameCache.set(key, b);
    return b;
  }
  private nameEpoch = 0;

  /** Points the writer at a module's memory (after a swap, the state region has moved with it). */
  bind(memory: WebAssembly.Memory): void {
    this.u8 = new Uint8Array(memory.buffer);
    this.dv = new DataView(memory.buffer);
    this.header();
  }

  /** Starts a batch: entries released during the previous one become reusable. */
  newBatch(): void {
    for (const a of this.freeing) {
      this.starts[(a - STATE.threads) / THREAD.size] = 0n;
      this.free.push(a);
    }
    this.freeing.length = 0;
    // an exited process is dropped after its batch: until then an
    // exited member's events still follow its leader, and an exited leader still names its session
    for (const p of this.leaving) this.leave(p);
    this.leaving.length = 0;
    this.exitedNow.clear();
    for (const sid of this.leaderGone) this.refreshSession(sid);
    this.leaderGone.length = 0;
  }

  /** The entry address of a process by its thread group id (0 when unknown). */
  entryOfPid(pid: number): number {
    return pid < PID_LIMIT ? this.pidAddr[pid]! : 0;
  }

  /**
   * Marks what an entry made from a SYSCALL record's header alone (unknown-process.ts) cannot know
   * as missing: proc.cwd, proc.env, and the container (its cgroup path is unknown, so not 'host' either).
   */
  headerOnly(pid: number): void {
    const at = this.entryOfPid(pid);
    if (at === 0) return;
    this.dv.setUint32(at + THREAD.present, this.dv.getUint32(at + THREAD.present, true) & ~(TP.CWD | TP.CONTAINER | TP.ENV | TP.EXE_CTIME | TP.EXE_MTIME | TP.EXE_CTIME_PROC), true);
    this.dv.setUint32(at + THREAD.ctr, 0, true);
  }

  /** The entry address of a thread (0 when unknown). */
  entryOf(tid: number): number {
    return tid < PID_LIMIT ? this.pidAddr[this.tidPid[tid]!]! : 0;
  }

  /** CLOCK_BOOTTIME -> epoch offset (ns) of the records applied next: proc.exe_ino.ctime_duration_proc_start compares an epoch ctime with a boot-time start. */
  setBootToEpoch(ns: bigint): void {
    this.bootToEpoch = ns;
  }

  /** Start time (boot ns) of the process whose entry is at `addr`, undefined when unknown. */
  startOf(addr: number): bigint | undefined {
    const i = (addr - STATE.threads) / THREAD.size;
    const v = Number.isInteger(i) && i >= 0 && i < this.starts.length ? this.starts[i]! : 0n;
    return v === 0n ? undefined : v;
  }

  /** user.name of a uid (the host's passwd file, cached for a second), undefined when unknown. */
  userName(uid: number): string | undefined {
    return this.userBytes(uid)?.toString('utf8');
  }

  /** Live processes. */
  get size(): number {
    return this.procs.size;
  }

  /** Applies one PROC, EXEC, FORK, CAPS or EXIT record at view[off..]. */
  apply(view: Uint8Array, off: number): void {
    const rv = new DataView(view.buffer, view.byteOffset + off);
    const kind = rv.getUint16(HDR.kind, true);
    const pid = rv.getUint32(HDR.pid, true);
    const tid = rv.getUint32(HDR.tid, true);
    if (pid >= PID_LIMIT || tid >= PID_LIMIT || pid === 0) return;
    if (kind === KIND.EXIT) {
      this.tidPid[tid] = 0;
      if (tid === pid || (rv.getUint32(EXIT.xflags, true) & XF.GROUP_DEAD) !== 0) {
        const p = this.procs.get(pid);
        if (p) {
          p.exited = true;
          this.procs.delete(pid);
          this.leaving.push(p);
          this.exitedNow.set(pid, p);
          if (this.members.has(pid)) this.leaderGone.push(pid);
          this.pidAddr[pid] = 0;
          if (p.initOf !== undefined) this.pidnsInit.delete(p.initOf);
          this.release(p);
        }
      }
      return;
    }
    if (kind === KIND.CAPS) {
      // capset(2): the process's new sets (parsers.cpp parse_capset_exit); a set*id call: its new
      // effective uid and gid, user.* and group.* (parse_setuid_exit, parse_setresuid_exit and their
      // siblings set the thread's user and group, never its sets). The source cuts the batch before
      // the record when the process has events earlier in it, so the call's own event sees the new ids.
      const p = this.procs.get(pid);
      if (!p) return;
      const present = this.dv.getUint32(p.addr + THREAD.present, true);
      this.dv.setUint32(p.addr + THREAD.present, rv.getUint16(HDR.nr, true) === NR_CAPSET ? this.caps(p.addr, rv, CAPS, present) : this.ids(p.addr, rv, present), true);
      return;
    }
    if (kind === KIND.FORK && (rv.getUint32(PROC.pflags, true) & PF.THREAD) !== 0) {
      this.tidPid[tid] = pid;
      return;
    }
    let p = this.procs.get(pid);
    if (!p || kind === KIND.FORK) {
      const old = p;
      const addr = this.free.pop() ?? this.allocEntry();
      if (addr === 0) return;
      p = { addr, pid, parent: undefined, children: 0, exited: false, sid: -1 };
      this.starts[(addr - STATE.threads) / THREAD.size] = rv.getBigUint64(PROC.start_ns, true);
      this.procs.set(pid, p);
      this.pidAddr[pid] = addr;
      if (old) {
        this.leaving.push(old);
        old.exited = true;
        this.release(old);
      }
      const parent = this.procs.get(rv.getUint32(PROC.ppid, true));
      if (kind === KIND.FORK && parent) this.u8.copyWithin(p.addr, parent.addr, parent.addr + THREAD.size);
      else this.u8.fill(0, p.addr, p.addr + THREAD.size);
      p.parent = parent;
      if (parent) parent.children++;
    }
    if (kind === KIND.PROC) this.starts[(p.addr - STATE.threads) / THREAD.size] = rv.getBigUint64(PROC.start_ns, true);
    this.tidPid[tid] = pid;
    this.write(p, rv, view, off, kind);
    const sid = rv.getUint32(PROC.sid, true);
    if (sid !== p.sid) {
      this.leave(p);
      p.sid = sid;
      let set = this.members.get(sid);
      if (!set) this.members.set(sid, (set = new Set()));
      set.add(p);
    }
    this.sessionName(p);
    // a session leader's (new) name is its members' proc.sname
    if (this.members.has(pid)) this.refreshSession(pid);
  }

  /** Takes a process out of its session's member set. */
  private leave(p: Proc): void {
    const set = this.members.get(p.sid);
    if (!set) return;
    set.delete(p);
    if (set.size === 0) this.members.delete(p.sid);
  }

  /** Rewrites proc.sname of every live member of session `sid`. */
  private refreshSession(sid: number): void {
    for (const m of this.members.get(sid) ?? []) this.sessionName(m);
  }

  /** proc.sname of `p`: the name ref of the live process whose pid is its session id (shared bytes), else absent. */
  private sessionName(p: Proc): void {
    const dv = this.dv;
    const leader = this.procs.get(p.sid) ?? this.exitedNow.get(p.sid);
    const present = dv.getUint32(p.addr + THREAD.present, true);
    if (leader && (dv.getUint32(leader.addr + THREAD.present, true) & TP.NAME) !== 0) {
      dv.setUint32(p.addr + THREAD.sname, dv.getUint32(leader.addr + THREAD.name, true), true);
      dv.setUint32(p.addr + THREAD.sname + 4, dv.getUint32(leader.addr + THREAD.name + 4, true), true);
      dv.setUint32(p.addr + THREAD.present, present | TP.SNAME, true);
    } else dv.setUint32(p.addr + THREAD.present, present & ~TP.SNAME, true);
  }

  private write(p: Proc, rv: DataView, view: Uint8Array, off: number, kind: number): void {
    const dv = this.dv;
    const at = p.addr;
    let present = kind === KIND.FORK ? dv.getUint32(at + THREAD.present, true) : 0;
    dv.setUint32(at + THREAD.tid, rv.getUint32(HDR.tid, true), true);
    dv.setUint32(at + THREAD.pid, p.pid, true);
    dv.setUint32(at + THREAD.parent, p.parent?.addr ?? 0, true);
    dv.setBigInt64(at + THREAD.vpid, BigInt(rv.getUint32(PROC.vpid, true)), true);
    const login = rv.getUint32(PROC.loginuid, true);
    dv.setBigInt64(at + THREAD.loginuid, login === 0xffffffff ? -1n : BigInt(login), true);
    dv.setUint32(at + THREAD.sid, rv.getUint32(PROC.sid, true), true);
    dv.setUint32(at + THREAD.vpgid, rv.getUint32(PROC.pgid, true), true);
    dv.setUint32(at + THREAD.tty, rv.getUint32(PROC.tty, true), true);
    // a fork keeps its parent's executable flags (memfd, overlay layer), an exec decides them
    const inherited = kind === KIND.FORK ? dv.getUint32(at + THREAD.flags, true) & (TF.EXE_MEMFD | TF.EXE_UPPER | TF.EXE_LOWER) : 0;
    const pf = (bit: number, tf: number) => ((rv.getUint32(PROC.pflags, true) & bit) !== 0 ? tf : 0);
    dv.setUint32(at + THREAD.flags, inherited | pf(PF.EXE_WRITABLE, TF.EXE_WRITABLE) | pf(PF.EXE_UPPER, TF.EXE_UPPER) | pf(PF.EXE_LOWER, TF.EXE_LOWER), true);
    present |= TP.PID | TP.VPID | TP.LOGINUID | TP.TTY | TP.EXE_WRITABLE | TP.EXE_UPPER | TP.SID | TP.VPGID;
    // user.loginname: the passwd name of the login uid (none when unset)
    const loginName = login === 0xffffffff ? undefined : this.userBytes(login);
    present = loginName ? this.copy(at + THREAD.loginname, TP.LOGINNAME, present, loginName, 0, 0, loginName.length, true) : present & ~TP.LOGINNAME;
    present = this.ids(at, rv, present);
    // thread.cap_*: every process record kind carries the task's three sets
    present = this.caps(at, rv, PROC, present);
    const str = (field: number) => ({ o: rv.getUint16(field, true), l: rv.getUint16(field + 2, true) });
    const comm = str(PROC.comm);
    present = this.copy(at + THREAD.name, TP.NAME, present, view, off, comm.o, comm.l, comm.o !== 0);
    if (kind === KIND.FORK) {
      dv.setUint32(at + THREAD.present, present, true);
      return;
    }
    present = this.exeTimes(at, rv, kind, present);
    const exepath = str(PROC.exepath);
    const exe = str(PROC.exe);
    const text = (o: number, l: number) => Buffer.from(view.buffer, view.byteOffset + off + o, l).toString('latin1');
    const ep = text(exepath.o, exepath.l);
    if (ep.startsWith('memfd:') || ep.startsWith('/memfd:') || (ep === '/' && FD_PATH.test(text(exe.o, exe.l)))) dv.setUint32(at + THREAD.flags, dv.getUint32(at + THREAD.flags, true) | TF.EXE_MEMFD, true);
    present |= TP.EXE_MEMFD;
    // argv: args = argv[1..] joined by blanks; cmdline = comm + ' ' + args (libsinsp).
    const args = str(PROC.args);
    let first = 0;
    while (first < args.l && view[off + args.o + first] !== 0) first++;
    // proc.exe is argv[0] (the file executed when there is no argv), as libsinsp has it
    present = args.l > 0 ? this.copy(at + THREAD.exe, TP.EXE, present, view, off, args.o, first, true) : this.copy(at + THREAD.exe, TP.EXE, present, view, off, exe.o, exe.l, true);
    present = this.copy(at + THREAD.exepath, TP.EXEPATH, present, view, off, exepath.o, exepath.l, true);
    // proc.cwd ends with '/' (libsinsp)
    const cwd = str(PROC.cwd);
    const slash = cwd.l === 0 || view[off + cwd.o + cwd.l - 1] !== 47 ? 1 : 0;
    const cwdAt = this.heap(cwd.l + slash);
    if (cwdAt === 0) present &= ~TP.CWD;
    else {
      this.u8.set(view.subarray(off + cwd.o, off + cwd.o + cwd.l), cwdAt);
      if (slash) this.u8[cwdAt + cwd.l] = 47;
      this.dv.setUint32(at + THREAD.cwd, cwdAt, true);
      this.dv.setUint32(at + THREAD.cwd + 4, cwd.l + slash, true);
      present |= TP.CWD;
    }
    const restOff = args.o + Math.min(args.l, first + 1);
    const restLen = Math.max(0, args.l - first - 1);
    present = this.copy(at + THREAD.args, TP.ARGS, present, view, off, restOff, restLen, true, true);
    const cmd = this.heap(comm.l + (restLen > 0 ? 1 + restLen : 0));
    if (cmd !== 0) {
      this.u8.set(view.subarray(off + comm.o, off + comm.o + comm.l), cmd);
      if (restLen > 0) {
        this.u8[cmd + comm.l] = 32;
        for (let i = 0; i < restLen; i++) {
          const b = view[off + restOff + i]!;
          this.u8[cmd + comm.l + 1 + i] = b === 0 ? 32 : b;
        }
      }
      dv.setUint32(at + THREAD.cmdline, cmd, true);
      dv.setUint32(at + THREAD.cmdline + 4, comm.l + (restLen > 0 ? 1 + restLen : 0), true);
      present |= TP.CMDLINE;
    }
    const env = str(PROC.env);
    present = this.env(at, view.subarray(off + env.o, off + env.o + Math.min(env.l, MAX_ENV - 1)), present);
    const cg = str(PROC.cgroup);
    const id = containerId(view.subarray(off + cg.o, off + cg.o + cg.l));
    const cid = this.heap(id.length);
    if (cid !== 0) {
      this.u8.set(id, cid);
      dv.setUint32(at + THREAD.container, cid, true);
      dv.setUint32(at + THREAD.container + 4, id.length, true);
      present |= TP.CONTAINER;
    } else present &= ~TP.CONTAINER;
    // the container's entry in the container table (container.name 'host' for a host process)
    const ctrId = Buffer.from(id).toString('latin1');
    dv.setUint32(at + THREAD.ctr, this.containers?.slotFor(ctrId) ?? 0, true);
    // container.start_ts: the start of the process's pid-namespace init (vpid 1 of that namespace);
    // an init's EXEC without the container's metadata is marked, its start judged again (table.ts initExec)
    const pidns = rv.getUint32(PROC.pidns, true);
    if (rv.getUint32(PROC.vpid, true) === 1) {
      if (kind === KIND.EXEC) this.containers?.initExec(p.pid, ctrId);
      this.pidnsInit.set(pidns, rv.getBigUint64(PROC.start_ns, true));
      p.initOf = pidns;
    }
    const init = this.pidnsInit.get(pidns);
    if (init !== undefined) this.containers?.started(ctrId, init);
    dv.setUint32(at + THREAD.present, present, true);
  }

  /**
   * proc.exe_ino.ctime and .mtime (the record's, epoch ns) and, for an EXEC,
   * proc.exe_ino.ctime_duration_proc_start: the process's start (epoch ns) minus that ctime,
   * modulo 2^64, as libsinsp's parse_execve_exit computes m_exe_ino_ctime_duration_clone_ts (a
   * uint64; libscap's /proc scan leaves it 0, so a PROC record has none). Each reads as missing
   * when 0, as libsinsp's extract has it; a FORK keeps its parent's three (parse_clone_exit).
   */
  private exeTimes(at: number, rv: DataView, kind: number, present: number): number {
    const ctime = rv.getBigUint64(PROC.exe_ino_ctime, true);
    const start = rv.getBigUint64(PROC.start_ns, true);
    const sinceChange = kind === KIND.EXEC && start !== 0n ? BigInt.asUintN(64, start + this.bootToEpoch - ctime) : 0n;
    const values = [
      [THREAD.exe_ino_ctime, TP.EXE_CTIME, ctime],
      [THREAD.exe_ino_mtime, TP.EXE_MTIME, rv.getBigUint64(PROC.exe_ino_mtime, true)],
      [THREAD.exe_ino_ctime_proc, TP.EXE_CTIME_PROC, sinceChange],
    ] as const;
    for (const [off, bit, v] of values) {
      this.dv.setBigUint64(at + off, v, true);
      present = v === 0n ? present & ~bit : present | bit;
    }
    return present;
  }

  /** Writes user.uid/group.gid and user.name/group.name (the host's passwd and group files) of the record's effective ids into the entry at `at`; returns the new present bits. */
  private ids(at: number, rv: DataView, present: number): number {
    const uid = rv.getUint32(HDR.uid, true);
    const gid = rv.getUint32(HDR.gid, true);
    this.dv.setUint32(at + THREAD.uid, uid, true);
    this.dv.setUint32(at + THREAD.gid, gid, true);
    present |= TP.UID | TP.GID;
    for (const [id, dst, bit, lookup] of [
      [uid, THREAD.user, TP.USER, this.userBytes],
      [gid, THREAD.group, TP.GROUP, this.groupBytes],
    ] as const) {
      const b = lookup(id);
      present = b ? this.copy(at + dst, bit, present, b, 0, 0, b.length, true) : present & ~bit;
    }
    return present;
  }

  /** Writes the three capability sets of the record `rv` (at the offsets `o`) into the entry at `at`; returns the new present bits. */
  private caps(at: number, rv: DataView, o: { cap_inheritable: number; cap_permitted: number; cap_effective: number }, present: number): number {
    present = this.capRef(at + THREAD.cap_inh, TP.CAP_INH, present, rv.getBigUint64(o.cap_inheritable, true));
    present = this.capRef(at + THREAD.cap_prm, TP.CAP_PRM, present, rv.getBigUint64(o.cap_permitted, true));
    return this.capRef(at + THREAD.cap_eff, TP.CAP_EFF, present, rv.getBigUint64(o.cap_effective, true));
  }

  /** Points `ref` at the text of capability set `set` (written to the heap once per set) and sets `bit`. */
  private capRef(ref: number, bit: number, present: number, set: bigint): number {
    let at = this.capRefs.get(set);
    const text = capsText(set);
    if (at === undefined) {
      at = this.heap(text.length);
      if (at === 0) return present & ~bit;
      this.u8.set(Buffer.from(text, 'latin1'), at);
      this.capRefs.set(set, at);
    }
    this.dv.setUint32(ref, at, true);
    this.dv.setUint32(ref + 4, text.length, true);
    return present | bit;
  }

  /**
   * proc.env of the entry at `at` from an environment's NUL-separated bytes (empty: no variables,
   * libsinsp's "" that is still a value): its heap text and variable lengths, written once per
   * distinct environment.
   */
  private env(at: number, raw: Uint8Array, present: number): number {
    const key = Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('latin1');
    let addr = this.envRefs.get(key);
    if (addr === undefined) {
      // environments (up to MAX_ENV each) never take the room the other strings of new processes
      // need: past the share of live strings, none is kept. heapTop counts exited processes' garbage
      // too, so past the share the heap is compacted first (at most once per eighth of it written)
      // and the share judged again; without it proc.env went missing between the share and full
      const bytes = envBytes(raw);
      const over = () => this.heapTop + bytes > STATE.heap + ENV_HEAP_SHARE * (STATE.dns - STATE.heap);
      if (over() && this.heapTop - this.compactedTop >= (STATE.dns - STATE.heap) / 8) this.compact();
      if (over()) {
        this.envDropped++;
        return present & ~TP.ENV;
      }
      addr = this.heap(bytes);
      if (addr === 0) return present & ~TP.ENV;
      writeEnv(this.u8, addr, raw);
      this.envRefs.set(key, addr);
    }
    this.dv.setUint32(at + THREAD.env, addr, true);
    this.dv.setUint32(at + THREAD.env + 4, raw.length, true);
    return present | TP.ENV;
  }

  /** Copies a record string into the heap and sets its ref and present bit. */
  private copy(ref: number, bit: number, present: number, view: Uint8Array, off: number, so: number, sl: number, ok: boolean, nulToBlank = false): number {
    if (!ok) return present & ~bit;
    const at = this.heap(sl);
    if (at === 0) return present & ~bit;
    if (nulToBlank) for (let i = 0; i < sl; i++) this.u8[at + i] = view[off + so + i] === 0 ? 32 : view[off + so + i]!;
    else this.u8.set(view.subarray(off + so, off + so + sl), at);
    this.dv.setUint32(ref, at, true);
    this.dv.setUint32(ref + 4, sl, true);
    return present | bit;
  }

  private allocEntry(): number {
    if (this.highWater >= STATE.threadSlots) {
      this.drops.full++;
      return 0;
    }
    const addr = STATE.threads + this.highWater * THREAD.size;
    this.highWater++;
    this.header();
    return addr;
  }

  private release(p: Proc): void {
    if (!p.exited || p.children > 0) return;
    this.freeing.push(p.addr);
    this.releasedSinceCompact++;
    const parent = p.parent;
    p.parent = undefined;
    if (parent) {
      parent.children--;
      this.release(parent);
    }
  }

  /**
   * Heap bytes for a string (compacting when full, if anything may have become garbage since the
   * last compaction: entries released or an eighth of the heap written; a heap full of live
   * strings would otherwise be compacted on every allocation); 0 when there is no room.
   */
  private heap(n: number): number {
    const end = STATE.dns;
    if (this.heapTop + n > end && this.mayFree()) this.compact();
    if (this.heapTop + n > end) {
      this.drops.strings_cut++;
      return 0;
    }
    const at = this.heapTop;
    this.heapTop = (at + n + 7) & ~7;
    this.header();
    return at;
  }

  /** Whether a compaction may free heap bytes: entries were released, or an eighth of the heap was written, since the last. */
  private mayFree(): boolean {
    return this.releasedSinceCompact > 0 || this.heapTop - this.compactedTop >= (STATE.dns - STATE.heap) / 8;
  }

  /** Rewrites the strings of live entries to the start of the heap. */
  private compact(): void {
    this.releasedSinceCompact = 0;
    const live = new Set<number>();
    const mark = (p: Proc | undefined) => {
      for (; p && !live.has(p.addr); p = p.parent) live.add(p.addr);
    };
    for (const p of this.procs.values()) mark(p);
    const refs = [THREAD.name, THREAD.exe, THREAD.exepath, THREAD.cmdline, THREAD.args, THREAD.cwd, THREAD.env, THREAD.user, THREAD.group, THREAD.container, THREAD.sname, THREAD.loginname, THREAD.cap_inh, THREAD.cap_prm, THREAD.cap_eff];
    // bytes shared by several refs (a leader's name as proc.sname, a capability set's text) stay shared
    const saved: Array<[number, string, Uint8Array]> = [];
    for (const addr of live)
      for (const r of refs) {
        const len = this.dv.getUint32(addr + r + 4, true);
        const a = this.dv.getUint32(addr + r, true);
        // proc.env's variable lengths follow its text
        if (a !== 0) saved.push([addr + r, `${a}:${len}`, this.u8.slice(a, a + (r === THREAD.env ? envSpan(this.u8, a, len) : len))]);
      }
    this.heapTop = STATE.heap;
    this.capRefs.clear();
    this.envRefs.clear();
    const moved = new Map<string, number>();
    for (const [ref, key, bytes] of saved) {
      let at = moved.get(key);
      if (at === undefined) {
        at = this.heapTop;
        this.u8.set(bytes, at);
        this.heapTop = (at + bytes.length + 7) & ~7;
        moved.set(key, at);
      }
      this.dv.setUint32(ref, at, true);
    }
    this.compactedTop = this.heapTop;
    this.header();
  }

  private header(): void {
    this.dv.setUint32(MEM.stateBase + H.abi, ABI_VERSION, true);
    this.dv.setUint32(MEM.stateBase + H.threads, this.highWater, true);
    this.dv.setUint32(MEM.stateBase + H.heapTop, this.heapTop, true);
  }
}

/** The part of the heap environments may fill (counted from its start, after a compaction if an eighth of the heap was written since the last). */
const ENV_HEAP_SHARE = 0.75;

const FD_PATH = /^\/(?:proc\/(?:self|\d+)\/fd|dev\/fd)\/\d+$/;

/**
 * One path component naming a container by its 64-hex id, in the shapes of Falco's container
 * plugin matchers (plugins/container/src/matchers): cgroupfs `<id>` (docker, CRI under kubepods),
 * `libpod-<id>`, systemd `docker-|crio-|cri-containerd-|libpod-<id>.scope`, and containerd
 * without SystemdCgroup `<parent>.slice:cri-containerd:<id>`. `libpod-conmon-<id>` is the host.
 */
const HEX_ID = /^(?:(?:docker|crio|cri-containerd|libpod)-)?([0-9a-f]{64})(?:\.scope)?$|:cri-containerd:([0-9a-f]{64})$/;
/** Plain containerd (`ctr run`): `/<namespace>/<id>`, any id of 1-64 characters (Falco's containerd matcher). */
const CONTAINERD = /^\/[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*\/([^/]{1,64})$/;
/** systemd units on a systemd host are the host, not a containerd namespace/id pair. */
const SYSTEMD_UNIT = /\.(?:service|slice|scope)$/;

/** container.id from a cgroup v2 path: the first 12 characters of the container's id, else 'host'. */
export function containerId(cgroup: Uint8Array): Uint8Array {
  const text = Buffer.from(cgroup).toString('latin1');
  for (const part of text.split('/').reverse()) {
    const m = HEX_ID.exec(part);
    if (m) return Buffer.from((m[1] ?? m[2]!).slice(0, 12));
  }
  const c = CONTAINERD.exec(text);
  if (c && !SYSTEMD_UNIT.test(text)) return Buffer.from(c[1]!.slice(0, 12));
  return Buffer.from('host');
}
