// Record decoder for tests: turns a batch of wire records (probes/src/events.h, offsets from
// host/abi/records.ts) into plain objects. The engine never decodes records (the evaluator reads
// them in place, the C translator writes eval records from them); tests read what the probe and
// the /proc bootstrap wrote. A malformed batch never throws; decodeBatch stops at the first bad
// record and reports it.
import { CAPS, EXIT, HDR, KIND, PROC, SIZES, SYSCALL } from '../../host/abi/records.js';
import { sockaddr, type SockAddr } from '../../host/sources/syscall/sockaddr.js';
import { syscallName } from '../../host/sources/syscall/syscalls.js';

/** Fields every record has. */
interface RecordHeader {
  tsNs: bigint;
  len: number;
  pid: number;
  tid: number;
  uid: number;
  gid: number;
  cgroupId: bigint;
}

/** RAE_KIND_SYSCALL. */
export interface SyscallRecord extends RecordHeader {
  kind: typeof KIND.SYSCALL;
  nr: number;
  name: string;
  ret: number;
  args: bigint[];
  aux: bigint[];
  sflags: number;
  path: string | undefined;
  path2: string | undefined;
  dir: string | undefined;
  dir2: string | undefined;
  peer: SockAddr;
  local: SockAddr;
}

/** RAE_KIND_EXEC, RAE_KIND_FORK and RAE_KIND_PROC. */
export interface ProcRecord extends RecordHeader {
  kind: typeof KIND.EXEC | typeof KIND.FORK | typeof KIND.PROC;
  ppid: number;
  vpid: number;
  vtid: number;
  sid: number;
  pgid: number;
  ruid: number;
  rgid: number;
  loginuid: number;
  tty: number;
  pflags: number;
  startNs: bigint;
  pidns: number;
  mntns: number;
  comm: string | undefined;
  exe: string | undefined;
  exepath: string | undefined;
  args: string[];
  cwd: string | undefined;
  cgroup: string | undefined;
  /** Capability sets of the task's credentials (bit N = capability N). */
  capInheritable: bigint;
  capPermitted: bigint;
  capEffective: bigint;
  /** The environment's variables (EXEC: the new image's; PROC: /proc/PID/environ; none in a FORK). */
  env: string[];
  /** The executable file's inode ctime and mtime, epoch ns (0: unknown, and in a FORK). */
  exeCtimeNs: bigint;
  exeMtimeNs: bigint;
}

/** RAE_KIND_EXIT. */
export interface ExitRecord extends RecordHeader {
  kind: typeof KIND.EXIT;
  exitCode: number;
  xflags: number;
}

/** RAE_KIND_CAPS: a successful capset(2), the caller's new sets. */
interface CapsRecord extends RecordHeader {
  kind: typeof KIND.CAPS;
  capInheritable: bigint;
  capPermitted: bigint;
  capEffective: bigint;
}

/** Any decoded record. */
export type EventRecord = SyscallRecord | ProcRecord | ExitRecord | CapsRecord;

/** Why decoding stopped. */
export interface DecodeError {
  code: 'EBADLEN' | 'EBADKIND' | 'EBADSTR';
  offset: number;
  message: string;
}

/** Calls fn(offset, len, kind) for each record in view[0..bytes); returns the bytes walked. */
export function forEachRecord(view: Uint8Array, bytes: number, fn: (off: number, len: number, kind: number) => void): number {
  const dv = new DataView(view.buffer, view.byteOffset, view.byteLength);
  let off = 0;
  while (off + SIZES.hdr <= bytes) {
    const len = dv.getUint32(off + HDR.len, true);
    if (len < SIZES.hdr || len % 8 !== 0 || off + len > bytes) break;
    fn(off, len, dv.getUint16(off + HDR.kind, true));
    off += len;
  }
  return off;
}

/** Decodes every record of a batch; stops at the first malformed one. */
export function decodeBatch(view: Uint8Array, bytes: number): { records: EventRecord[]; error?: DecodeError } {
  const records: EventRecord[] = [];
  const walked = forEachRecord(view, bytes, () => undefined);
  const dv = new DataView(view.buffer, view.byteOffset, view.byteLength);
  let off = 0;
  while (off < walked) {
    const got = decodeRecord(view, off, dv);
    if ('code' in got) return { records, error: got };
    records.push(got);
    off += got.len;
  }
  if (walked !== bytes) {
    return { records, error: { code: 'EBADLEN', offset: walked, message: `record at byte ${walked} has a bad length or runs past the batch end (${bytes} bytes)` } };
  }
  return { records };
}

/** A string field of the record at `off`: the text, undefined when absent, or why it is bad. */
function readStr(view: Uint8Array, dv: DataView, off: number, len: number, at: number): string | undefined | DecodeError {
  const soff = dv.getUint16(off + at, true);
  const slen = dv.getUint16(off + at + 2, true);
  if (soff === 0 && slen === 0) return undefined;
  if (soff + slen >= len) return { code: 'EBADSTR', offset: off + at, message: `string at ${soff}+${slen} runs past the record (${len} bytes)` };
  return Buffer.from(view.buffer, view.byteOffset + off + soff, slen).toString('utf8');
}

/** Several string fields, or the first error. */
function readStrs<K extends string>(view: Uint8Array, dv: DataView, off: number, len: number, fields: Record<K, number>): Record<K, string | undefined> | DecodeError {
  const out = {} as Record<K, string | undefined>;
  for (const key in fields) {
    const s = readStr(view, dv, off, len, fields[key]);
    if (typeof s === 'object') return s;
    out[key] = s;
  }
  return out;
}

/**
 * The fields every record starts with, and its kind. The object is written out, and each record
 * kind adds its own fields to it with Object.assign: spreading `head` into each kind's literal made
 * decoding 20x slower (measured).
 */
function header<K extends number>(dv: DataView, off: number, len: number, kind: K): RecordHeader & { kind: K } {
  return {
    tsNs: dv.getBigUint64(off + HDR.ts_ns, true),
    len,
    pid: dv.getUint32(off + HDR.pid, true),
    tid: dv.getUint32(off + HDR.tid, true),
    uid: dv.getUint32(off + HDR.uid, true),
    gid: dv.getUint32(off + HDR.gid, true),
    cgroupId: dv.getBigUint64(off + HDR.cgroup_id, true),
    kind,
  };
}

/** Decodes the record at `off` (pass `dv`, a DataView over all of `view`, when decoding many). */
export function decodeRecord(view: Uint8Array, off: number, dv = new DataView(view.buffer, view.byteOffset, view.byteLength)): EventRecord | DecodeError {
  const len = dv.getUint32(off + HDR.len, true);
  const kind = dv.getUint16(off + HDR.kind, true);
  const u32 = (at: number) => dv.getUint32(off + at, true);
  const u64 = (at: number) => dv.getBigUint64(off + at, true);
  const ret = Number(dv.getBigInt64(off + HDR.ret, true));
  if (kind === KIND.SYSCALL && len >= SIZES.syscall) {
    const s = readStrs(view, dv, off, len, { path: SYSCALL.path, path2: SYSCALL.path2, dir: SYSCALL.dir, dir2: SYSCALL.dir2 });
    if ('code' in s) return s as DecodeError;
    const nr = dv.getUint16(off + HDR.nr, true);
    const str = s as Record<'path' | 'path2' | 'dir' | 'dir2', string | undefined>;
    return Object.assign(header(dv, off, len, kind), {
      nr,
      name: syscallName(nr),
      ret,
      args: [u64(SYSCALL.args), u64(SYSCALL.args + 8), u64(SYSCALL.args + 16), u64(SYSCALL.args + 24), u64(SYSCALL.args + 32), u64(SYSCALL.args + 40)],
      aux: [u64(SYSCALL.aux), u64(SYSCALL.aux + 8), u64(SYSCALL.aux + 16)],
      sflags: u32(SYSCALL.sflags),
      path: str.path,
      path2: str.path2,
      dir: str.dir,
      dir2: str.dir2,
      peer: sockaddr(dv, off + SYSCALL.peer),
      local: sockaddr(dv, off + SYSCALL.local),
    });
  }
  if ((kind === KIND.EXEC || kind === KIND.FORK || kind === KIND.PROC) && len >= SIZES.proc) {
    const s = readStrs(view, dv, off, len, { comm: PROC.comm, exe: PROC.exe, exepath: PROC.exepath, args: PROC.args, cwd: PROC.cwd, cgroup: PROC.cgroup, env: PROC.env });
    if ('code' in s) return s as DecodeError;
    const str = s as Record<'comm' | 'exe' | 'exepath' | 'args' | 'cwd' | 'cgroup' | 'env', string | undefined>;
    return Object.assign(header(dv, off, len, kind), {
      ppid: u32(PROC.ppid),
      vpid: u32(PROC.vpid),
      vtid: u32(PROC.vtid),
      sid: u32(PROC.sid),
      pgid: u32(PROC.pgid),
      ruid: u32(PROC.ruid),
      rgid: u32(PROC.rgid),
      loginuid: u32(PROC.loginuid),
      tty: u32(PROC.tty),
      pflags: u32(PROC.pflags),
      startNs: u64(PROC.start_ns),
      pidns: u32(PROC.pidns),
      mntns: u32(PROC.mntns),
      comm: str.comm,
      exe: str.exe,
      exepath: str.exepath,
      cwd: str.cwd,
      cgroup: str.cgroup,
      args: str.args === undefined ? [] : str.args.split('\0'),
      capInheritable: u64(PROC.cap_inheritable),
      capPermitted: u64(PROC.cap_permitted),
      capEffective: u64(PROC.cap_effective),
      env: str.env === undefined ? [] : str.env.split('\0'),
      exeCtimeNs: u64(PROC.exe_ino_ctime),
      exeMtimeNs: u64(PROC.exe_ino_mtime),
    });
  }
  if (kind === KIND.EXIT && len >= SIZES.exit) return Object.assign(header(dv, off, len, kind), { exitCode: ret, xflags: u32(EXIT.xflags) });
  if (kind === KIND.CAPS && len >= SIZES.caps) {
    return Object.assign(header(dv, off, len, kind), { capInheritable: u64(CAPS.cap_inheritable), capPermitted: u64(CAPS.cap_permitted), capEffective: u64(CAPS.cap_effective) });
  }
  return { code: 'EBADKIND', offset: off, message: `record at byte ${off} has kind ${kind} and length ${len}, which do not match any record layout` };
}
