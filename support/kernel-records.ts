// Kernel wire records built by hand (probes/src/events.h layouts, host/abi/records.ts offsets),
// for the byte path's tests and the eval benchmark: SYSCALL records and the /proc snapshots the
// engine's encodeProcRecord turns into PROC records.
import { HDR, KIND, SIZES, SYSCALL } from '../host/abi/records.js';
import type { ProcSnapshot } from '../host/sources/syscall/procfs.js';
import { syscallNr } from '../host/sources/syscall/syscalls.js';

/** What a built SYSCALL record holds; everything else is zero. */
export interface SyscallSpec {
  /** Thread id, also the pid. */
  tid: number;
  /** The syscall's name (its x86-64 number goes into the header). */
  type: string;
  /** The path argument, if any. */
  path?: string;
  /** The return value (default 3). */
  ret?: bigint;
  tsNs?: bigint;
  /** Written to args[1], args[2] and openat2's flags (open flags and mode). */
  flags?: bigint;
  /** An IPv4 peer (connect): port and address as the u32 the kernel stores. */
  peer?: { port: number; addr: number };
}

/** Writes a SYSCALL record at `off` of `out`; returns its length. */
export function syscallRecord(out: Uint8Array, off: number, spec: SyscallSpec): number {
  const s = spec.path === undefined ? Buffer.alloc(0) : Buffer.from(spec.path);
  const len = (SIZES.syscall + (s.length ? s.length + 1 : 0) + 7) & ~7;
  out.fill(0, off, off + len);
  const dv = new DataView(out.buffer, out.byteOffset + off, len);
  dv.setBigUint64(HDR.ts_ns, spec.tsNs ?? 0n, true);
  dv.setUint32(HDR.len, len, true);
  dv.setUint16(HDR.kind, KIND.SYSCALL, true);
  dv.setUint16(HDR.nr, syscallNr(spec.type) ?? 0, true);
  dv.setUint32(HDR.pid, spec.tid, true);
  dv.setUint32(HDR.tid, spec.tid, true);
  dv.setBigInt64(HDR.ret, spec.ret ?? 3n, true);
  if (spec.flags !== undefined) {
    dv.setBigUint64(SYSCALL.args + 8, spec.flags, true);
    dv.setBigUint64(SYSCALL.args + 16, spec.flags, true);
    dv.setBigUint64(SYSCALL.aux, spec.flags, true);
  }
  if (spec.peer) {
    dv.setUint16(SYSCALL.peer, 2, true); // AF_INET
    dv.setUint16(SYSCALL.peer + 2, spec.peer.port, true);
    dv.setUint32(SYSCALL.peer + 8, spec.peer.addr, true);
  }
  if (s.length) {
    out.set(s, off + SIZES.syscall);
    dv.setUint16(SYSCALL.path, SIZES.syscall, true);
    dv.setUint16(SYSCALL.path + 2, s.length, true);
  }
  return len;
}

/** A SYSCALL record (openat of `path` by `tid`). */
export function openat(out: Uint8Array, off: number, tid: number, path: string): number {
  return syscallRecord(out, off, { tid, type: 'openat', path });
}

/** The /proc snapshot of a process (root, in the root namespaces, unless `more` says otherwise) for encodeProcRecord. */
export function procInfo(pid: number, ppid: number, comm: string, more: Partial<ProcSnapshot> = {}): ProcSnapshot {
  return {
    pid,
    ppid,
    vpid: pid,
    sid: pid,
    pgid: pid,
    ruid: 0,
    euid: 0,
    rgid: 0,
    egid: 0,
    loginuid: 4294967295,
    tty: 0,
    startNs: 1n,
    pidns: 1,
    mntns: 1,
    cgroupId: 1n,
    exeWritable: false,
    comm: Buffer.from(comm),
    exepath: Buffer.from(`/usr/bin/${comm}`),
    args: [Buffer.from(comm)],
    cwd: Buffer.from('/'),
    cgroup: Buffer.from('/user.slice'),
    ...more,
  };
}
