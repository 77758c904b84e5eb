// Kernel wire records built by hand for the byte path's tests (probes/src/events.h layouts).
import { HDR, KIND, SIZES, SYSCALL } from '../../host/abi/records.js';
import { syscallNr } from '../../host/sources/syscall/syscalls.js';

/** A SYSCALL record (openat of `path` by `tid`). */
export function openat(out: Uint8Array, off: number, tid: number, path: string): number {
  const s = Buffer.from(path);
  const len = (SIZES.syscall + s.length + 1 + 7) & ~7;
  out.fill(0, off, off + len);
  const dv = new DataView(out.buffer, out.byteOffset + off, len);
  dv.setUint32(HDR.len, len, true);
  dv.setUint16(HDR.kind, KIND.SYSCALL, true);
  dv.setUint16(HDR.nr, syscallNr('openat')!, true);
  dv.setUint32(HDR.pid, tid, true);
  dv.setUint32(HDR.tid, tid, true);
  dv.setBigInt64(HDR.ret, 3n, true);
  out.set(s, off + SIZES.syscall);
  dv.setUint16(SYSCALL.path, SIZES.syscall, true);
  dv.setUint16(SYSCALL.path + 2, s.length, true);
  return len;
}

/** The /proc snapshot of a process (root, in the root namespaces) for encodeProcRecord. */
export function procInfo(pid: number, ppid: number, comm: string) {
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
  };
}
