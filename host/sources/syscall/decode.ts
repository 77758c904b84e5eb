// Record decoder for tests and tools: turns a batch of wire records (probes/src/events.h, offsets
// from abi.ts) into plain objects. Not the hot path: the evaluator reads records in place. A
// malformed batch never throws; decodeBatch stops at the first bad record and reports it.
import { AF, EXIT, HDR, KIND, PROC, SIZES, SOCKADDR, SYSCALL } from './abi.js';
import { syscallName } from './syscalls.js';

/** A socket address; family 0 = absent. */
export interface SockAddr {
  family: number;
  port: number;
  /** Dotted IPv4 or IPv6 text; '' for AF_UNIX or absent. */
  addr: string;
}

/** Fields every record has. */
export interface RecordHeader {
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
}

/** RAE_KIND_EXIT. */
export interface ExitRecord extends RecordHeader {
  kind: typeof KIND.EXIT;
  exitCode: number;
  xflags: number;
}

/** Any decoded record. */
export type EventRecord = SyscallRecord | ProcRecord | ExitRecord;

/** Why decoding stopped. */
export interface DecodeError {
  code: 'EBADLEN' | 'EBADKIND' | 'EBADSTR';
  offset: number;
  message: string;
}

const utf8 = new TextDecoder('utf-8');

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
  let off = 0;
  while (off < walked) {
    const got = decodeRecord(view, off);
    if ('code' in got) return { records, error: got };
    records.push(got);
    off += got.len;
  }
  if (walked !== bytes) {
    return { records, error: { code: 'EBADLEN', offset: walked, message: `record at byte ${walked} has a bad length or runs past the batch end (${bytes} bytes)` } };
  }
  return { records };
}

/** Decodes the record at `off`. */
export function decodeRecord(view: Uint8Array, off: number): EventRecord | DecodeError {
  const dv = new DataView(view.buffer, view.byteOffset + off, view.byteLength - off);
  const len = dv.getUint32(HDR.len, true);
  const kind = dv.getUint16(HDR.kind, true);
  const head: RecordHeader = {
    tsNs: dv.getBigUint64(HDR.ts_ns, true),
    len,
    pid: dv.getUint32(HDR.pid, true),
    tid: dv.getUint32(HDR.tid, true),
    uid: dv.getUint32(HDR.uid, true),
    gid: dv.getUint32(HDR.gid, true),
    cgroupId: dv.getBigUint64(HDR.cgroup_id, true),
  };
  const ret = Number(dv.getBigInt64(HDR.ret, true));
  const str = (at: number): string | undefined | DecodeError => {
    const soff = dv.getUint16(at, true);
    const slen = dv.getUint16(at + 2, true);
    if (soff === 0 && slen === 0) return undefined;
    if (soff + slen >= len) return { code: 'EBADSTR', offset: off + at, message: `string at ${soff}+${slen} runs past the record (${len} bytes)` };
    return utf8.decode(view.subarray(off + soff, off + soff + slen));
  };
  const strs = <K extends string>(fields: Record<K, number>): Record<K, string | undefined> | DecodeError => {
    const out = {} as Record<K, string | undefined>;
    for (const key of Object.keys(fields) as K[]) {
      const s = str(fields[key]);
      if (typeof s === 'object') return s;
      out[key] = s;
    }
    return out;
  };
  if (kind === KIND.SYSCALL && len >= SIZES.syscall) {
    const s = strs({ path: SYSCALL.path, path2: SYSCALL.path2, dir: SYSCALL.dir, dir2: SYSCALL.dir2 });
    if ('code' in s) return s as DecodeError;
    const nr = dv.getUint16(HDR.nr, true);
    return {
      ...head, kind, nr, name: syscallName(nr), ret,
      args: [0, 1, 2, 3, 4, 5].map((i) => dv.getBigUint64(SYSCALL.args + 8 * i, true)),
      aux: [0, 1, 2].map((i) => dv.getBigUint64(SYSCALL.aux + 8 * i, true)),
      sflags: dv.getUint32(SYSCALL.sflags, true),
      ...(s as Record<'path' | 'path2' | 'dir' | 'dir2', string | undefined>),
      peer: sockaddr(dv, SYSCALL.peer),
      local: sockaddr(dv, SYSCALL.local),
    };
  }
  if ((kind === KIND.EXEC || kind === KIND.FORK || kind === KIND.PROC) && len >= SIZES.proc) {
    const s = strs({ comm: PROC.comm, exe: PROC.exe, exepath: PROC.exepath, args: PROC.args, cwd: PROC.cwd, cgroup: PROC.cgroup });
    if ('code' in s) return s as DecodeError;
    const { args, ...rest } = s as Record<'comm' | 'exe' | 'exepath' | 'args' | 'cwd' | 'cgroup', string | undefined>;
    const u32 = (at: number) => dv.getUint32(at, true);
    return {
      ...head, kind, ...rest,
      ppid: u32(PROC.ppid), vpid: u32(PROC.vpid), vtid: u32(PROC.vtid), sid: u32(PROC.sid), pgid: u32(PROC.pgid),
      ruid: u32(PROC.ruid), rgid: u32(PROC.rgid), loginuid: u32(PROC.loginuid), tty: u32(PROC.tty),
      pflags: u32(PROC.pflags), startNs: dv.getBigUint64(PROC.start_ns, true), pidns: u32(PROC.pidns), mntns: u32(PROC.mntns),
      args: args === undefined ? [] : args.split('\0'),
    };
  }
  if (kind === KIND.EXIT && len >= SIZES.exit) {
    return { ...head, kind, exitCode: ret, xflags: dv.getUint32(EXIT.xflags, true) };
  }
  return { code: 'EBADKIND', offset: off, message: `record at byte ${off} has kind ${kind} and length ${len}, which do not match any record layout` };
}

function sockaddr(dv: DataView, at: number): SockAddr {
  const family = dv.getUint16(at + SOCKADDR.family, true);
  const port = dv.getUint16(at + SOCKADDR.port, true);
  const a = at + SOCKADDR.addr;
  let addr = '';
  if (family === AF.INET) addr = [0, 1, 2, 3].map((i) => dv.getUint8(a + i)).join('.');
  else if (family === AF.INET6) addr = ipv6(dv, a);
  return { family, port, addr };
}

function ipv6(dv: DataView, a: number): string {
  const words = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => dv.getUint16(a + 2 * i, false));
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return `::ffff:${dv.getUint8(a + 12)}.${dv.getUint8(a + 13)}.${dv.getUint8(a + 14)}.${dv.getUint8(a + 15)}`;
  }
  // RFC 5952: compress the longest run of two or more zero words.
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}
