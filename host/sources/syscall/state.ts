// The kernel source's process table: consumes EXEC/FORK/PROC/EXIT wire records (events.h) and
// keeps one immutable ProcInfo per live process (thread group), replaced on exec (and on capset's
// CAPS record), so an event
// that captured its ProcInfo keeps the image it ran under. Exits are applied after the batch they
// arrive in has been evaluated (flushExits), so events of a process that exits later in the same
// batch still find it and its parents. Also a small per-process socket table (socket() results)
// for fd.l4proto/fd.type of later connect/sendto calls.
import { HDR, KIND, PF, XF, EXIT, SYSCALL } from './abi.js';
import { decodeRecord, type ProcRecord } from './decode.js';

/** One process as the rules see it. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  vpid: number;
  sid: number;
  pgid: number;
  loginuid: number;
  tty: number;
  exeWritable: boolean;
  /** CLOCK_BOOTTIME ns. */
  startNs: bigint;
  comm: string;
  /** argv[0] (libsinsp proc.exe), else the path given to execve. */
  exe: string;
  exepath: string;
  /** The path given to execve (the record's `exe`). */
  execPath: string;
  /** argv[1..]. */
  args: string[];
  cwd: string;
  cgroup: string;
  containerId: string;
  /** Capability sets (thread.cap_*; bit N = capability N), as of the last exec/fork/bootstrap. */
  capInheritable: bigint;
  capPermitted: bigint;
  capEffective: bigint;
  /** Lazily built proc.cmdline / proc.args text. */
  cmdline?: string;
  argsText?: string;
}

/** A socket as created by socket(2). */
export interface SocketInfo {
  domain: number;
  type: number;
}

/** Most processes kept; beyond this the table stops growing (counted by `overflow`). */
const MAX_PROCS = 65536;
/** Sockets remembered per process. */
const MAX_SOCKETS = 256;

const CONTAINER_ID = /(?:docker-|crio-|cri-containerd-|libpod-|containerd-)?([0-9a-f]{64})(?:\.scope)?(?:\/|$)/;

/** `host` for a host cgroup path, else the 12-character id of the container's cgroup. */
export function containerIdOf(cgroup: string): string {
  const m = CONTAINER_ID.exec(cgroup);
  return m ? m[1]!.slice(0, 12) : 'host';
}

function fromRecord(r: ProcRecord, base: ProcInfo | undefined): ProcInfo {
  const fork = r.kind === KIND.FORK;
  const args = fork ? (base?.args ?? []) : r.args.slice(1);
  const cgroup = (fork ? base?.cgroup : r.cgroup) ?? '';
  return {
    pid: r.pid,
    ppid: r.ppid,
    vpid: r.vpid,
    sid: r.sid,
    pgid: r.pgid,
    loginuid: r.loginuid,
    tty: r.tty,
    exeWritable: fork ? (base?.exeWritable ?? false) : (r.pflags & PF.EXE_WRITABLE) !== 0,
    startNs: fork || r.kind === KIND.PROC || !base ? r.startNs : base.startNs,
    comm: r.comm ?? base?.comm ?? '',
    exe: fork ? (base?.exe ?? '') : (r.args[0] ?? r.exe ?? ''),
    exepath: (fork ? base?.exepath : r.exepath) ?? '',
    execPath: (fork ? base?.execPath : r.exe) ?? '',
    args,
    cwd: (fork ? base?.cwd : r.cwd) ?? '',
    cgroup,
    containerId: containerIdOf(cgroup),
    // a FORK record carries the child's own credentials (copied from its parent), an EXEC the new image's
    capInheritable: r.capInheritable,
    capPermitted: r.capPermitted,
    capEffective: r.capEffective,
  };
}

/** Live processes by pid, fed by process records. */
export class ProcessTable {
  private readonly procs = new Map<number, ProcInfo>();
  private readonly sockets = new Map<number, Map<number, SocketInfo>>();
  private pendingExits: number[] = [];
  /** Process records not kept because the table was full. */
  overflow = 0;

  get size(): number {
    return this.procs.size;
  }

  get(pid: number): ProcInfo | undefined {
    return this.procs.get(pid);
  }

  /** Applies the process record at `off` of `view` (EXEC, FORK, PROC or EXIT). */
  apply(view: Uint8Array, dv: DataView, off: number, kind: number): void {
    if (kind === KIND.EXIT) {
      if ((dv.getUint32(off + EXIT.xflags, true) & XF.GROUP_DEAD) !== 0) this.pendingExits.push(dv.getUint32(off + HDR.pid, true));
      return;
    }
    const r = decodeRecord(view, off, dv);
    if ('code' in r || r.kind === KIND.SYSCALL || r.kind === KIND.EXIT) return;
    if (r.kind === KIND.CAPS) {
      // capset(2): a new ProcInfo with the new sets, so events captured before keep the old ones
      const p = this.procs.get(r.pid);
      if (p) this.procs.set(r.pid, { ...p, capInheritable: r.capInheritable, capPermitted: r.capPermitted, capEffective: r.capEffective });
      return;
    }
    if (r.kind === KIND.FORK && (r.pflags & PF.THREAD) !== 0 && this.procs.has(r.pid)) return;
    const base = r.kind === KIND.FORK ? this.procs.get(r.ppid) : this.procs.get(r.pid);
    if (!this.procs.has(r.pid) && this.procs.size >= MAX_PROCS) {
      this.overflow++;
      return;
    }
    this.procs.set(r.pid, fromRecord(r, base));
    if (r.kind === KIND.FORK) this.sockets.delete(r.pid);
  }

  /** Removes the processes whose last thread exited (call after the batch was evaluated). */
  flushExits(): void {
    for (const pid of this.pendingExits) {
      this.procs.delete(pid);
      this.sockets.delete(pid);
    }
    this.pendingExits = [];
  }

  /** Records the socket a SYSCALL record of a successful socket(2) at `off` created (domain and type from its arguments). */
  noteSocket(dv: DataView, off: number, pid: number, fd: number): void {
    if (fd < 0) return;
    this.setSocket(pid, fd, { domain: Number(dv.getBigUint64(off + SYSCALL.args, true)), type: Number(dv.getBigUint64(off + SYSCALL.args + 8, true)) & 0xf });
  }

  /** Records a socket created by `pid`. */
  setSocket(pid: number, fd: number, info: SocketInfo): void {
    let m = this.sockets.get(pid);
    if (!m) this.sockets.set(pid, (m = new Map()));
    if (m.size >= MAX_SOCKETS && !m.has(fd)) m.delete(m.keys().next().value!);
    m.set(fd, info);
  }

  socket(pid: number, fd: number): SocketInfo | undefined {
    return this.sockets.get(pid)?.get(fd);
  }

  /** Ancestor `n` of `p` (1 = parent), or undefined. */
  ancestor(p: ProcInfo, n: number): ProcInfo | undefined {
    let cur: ProcInfo | undefined = p;
    for (let i = 0; i < n && cur; i++) cur = cur.ppid > 0 && cur.ppid !== cur.pid ? this.procs.get(cur.ppid) : undefined;
    return cur;
  }
}

/** proc.args text of a process. */
export function argsText(p: ProcInfo): string {
  return (p.argsText ??= p.args.join(' '));
}

/** proc.cmdline text: proc.name followed by the arguments (libsinsp). */
export function cmdlineText(p: ProcInfo): string {
  return (p.cmdline ??= p.args.length > 0 ? `${p.comm} ${argsText(p)}` : p.comm);
}
