// /proc bootstrap: the processes that existed before the probe attached. Consumes /proc/<pid>/
// {stat,status,cmdline,environ,comm,exe,cwd,cgroup,loginuid,ns/pid,ns/mnt} and the cgroup v2 mount;
// produces ProcSnapshot values and encodes them as RAE_KIND_PROC wire records (the same layout
// as EXEC records), so the thread table is filled by one code path whatever the source.
// Processes that vanish while being read are skipped; unreadable fields stay empty.
import { type BigIntStats, closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, statSync } from 'node:fs';
import { HDR, KIND, MAX_ARGS, MAX_ENV, MAX_PATH, PF, PROC, SIZES } from '../../abi/records.js';
import { parseCapHex } from './caps.js';

/** One process as read from /proc. Strings are raw bytes (Linux paths need not be UTF-8). */
export interface ProcSnapshot {
  pid: number;
  ppid: number;
  /** pid in the process's own pid namespace (last NStgid entry). */
  vpid: number;
  sid: number;
  pgid: number;
  ruid: number;
  euid: number;
  rgid: number;
  egid: number;
  loginuid: number;
  /** (major << 20) | minor, as in the probe's records; 0 = no controlling tty. */
  tty: number;
  /** Start time, CLOCK_BOOTTIME ns (/proc stat starttime × 10 ms). */
  startNs: bigint;
  pidns: number;
  mntns: number;
  cgroupId: bigint;
  /** Whether the process's euid may write its executable (mode bits; root always). */
  exeWritable: boolean;
  /** The executable file's inode ctime and mtime, epoch ns (libscap's stat of /proc/PID/exe); 0 when unreadable. */
  exeCtimeNs?: bigint;
  exeMtimeNs?: bigint;
  comm: Buffer;
  exepath: Buffer;
  args: Buffer[];
  cwd: Buffer;
  cgroup: Buffer;
  /** CapInh/CapPrm/CapEff of /proc/PID/status (bit N = capability N); absent = empty set. */
  capInheritable?: bigint;
  capPermitted?: bigint;
  capEffective?: bigint;
  /**
   * /proc/PID/environ, NUL-separated, its last NUL dropped, at most MAX_ENV - 1 bytes (libscap
   * reads it into SCAP_MAX_ENV_SIZE bytes); absent when unreadable (proc.env missing).
   */
  env?: Buffer;
}

/** USER_HZ: /proc/<pid>/stat counts in 1/100 s on every Linux architecture Node runs on. */
const TICK_NS = 10_000_000n;
/** Where cgroup v2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host); undefined without one. */
export function cgroup2Mount(): string | undefined {
  const mounts = read('/proc/self/mounts')?.toString('latin1') ?? '';
  return mounts
    .split('\n')
    .map((l) => l.split(' '))
    .find((f) => f[2] === 'cgroup2')?.[1];
}

let cgroupRoot: string | undefined;
/** The directory cgroup paths of /proc/<pid>/cgroup resolve against: the cgroup2 mount, read once. */
export function cgroup2Root(): string {
  cgroupRoot ??= cgroup2Mount() ?? '/sys/fs/cgroup';
  return cgroupRoot;
}

function read(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** The first `max` bytes of a file (environ can be long: only what is kept is read); undefined when unreadable. */
function readHead(path: string, max: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const b = Buffer.alloc(max);
    let n = 0;
    for (let got = 1; got > 0 && n < max; n += got) got = readSync(fd, b, n, max - n, null);
    return b.subarray(0, n);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function link(path: string): Buffer {
  try {
    const target = readlinkSync(path, { encoding: 'buffer' });
    const deleted = Buffer.from(' (deleted)');
    return target.subarray(target.length - deleted.length).equals(deleted) ? target.subarray(0, target.length - deleted.length) : target;
  } catch {
    return Buffer.alloc(0);
  }
}

function nsInode(path: string): number {
  const m = /\[(\d+)\]/.exec(link(path).toString('latin1'));
  return m ? Number(m[1]) : 0;
}

/** Reads one process; undefined when it exited meanwhile or is not readable. */
export function readProcess(pid: number, root = '/proc'): ProcSnapshot | undefined {
  const dir = `${root}/${pid}`;
  const stat = read(`${dir}/stat`)?.toString('latin1');
  const status = read(`${dir}/status`)?.toString('latin1');
  if (stat === undefined || status === undefined) return undefined;
  // comm may hold spaces and parentheses: the fields after it start past the last ')'.
  const close = stat.lastIndexOf(')');
  const f = stat.slice(close + 2).split(' ');
  const ttyNr = Number(f[4]);
  const ids = (key: string): number[] => (new RegExp(`^${key}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '').trim().split(/\s+/).map(Number);
  const uids = ids('Uid');
  const gids = ids('Gid');
  const nstgid = ids('NStgid');
  const cap = (key: string): bigint => parseCapHex(new RegExp(`^${key}:\\s*(\\S+)`, 'm').exec(status)?.[1]);
  const loginuid = Number(read(`${dir}/loginuid`)?.toString('latin1') ?? 4294967295);
  const cmdline = read(`${dir}/cmdline`) ?? Buffer.alloc(0);
  const cgroupLine = (read(`${dir}/cgroup`)?.toString('latin1') ?? '').split('\n').find((l) => l.startsWith('0::'));
  const cgroup = Buffer.from(cgroupLine ? cgroupLine.slice(3) : '', 'latin1');
  let cgroupId = 0n;
  try {
    if (cgroup.length) cgroupId = BigInt(statSync(cgroup2Root() + cgroup.toString('latin1')).ino);
  } catch {
    cgroupId = 0n;
  }
  const euid = uids[1] ?? 0;
  const egid = gids[1] ?? 0;
  const exe = statExe(`${dir}/exe`);
  const args = cmdline.length ? splitNul(cmdline.at(-1) === 0 ? cmdline.subarray(0, -1) : cmdline) : [];
  // the bytes the probe keeps of an exec's environment: MAX_ENV - 1, the last NUL dropped
  const environ = readHead(`${dir}/environ`, MAX_ENV - 1);
  const env = environ && environ.at(-1) === 0 ? environ.subarray(0, -1) : environ;
  return {
    pid,
    ppid: Number(f[1]),
    pgid: Number(f[2]),
    sid: Number(f[3]),
    tty: ttyNr ? (((ttyNr >> 8) & 0xfff) << 20) | ((ttyNr & 0xff) | ((ttyNr >> 12) & 0xfff00)) : 0,
    startNs: BigInt(f[19]) * TICK_NS,
    ruid: uids[0] ?? 0,
    euid,
    rgid: gids[0] ?? 0,
    egid,
    vpid: nstgid.at(-1) || pid,
    loginuid: Number.isFinite(loginuid) ? loginuid : 4294967295,
    pidns: nsInode(`${dir}/ns/pid`),
    mntns: nsInode(`${dir}/ns/mnt`),
    cgroupId,
    exeWritable: exeWritable(exe, euid, egid),
    exeCtimeNs: exe?.ctimeNs ?? 0n,
    exeMtimeNs: exe?.mtimeNs ?? 0n,
    comm: (read(`${dir}/comm`) ?? Buffer.alloc(0)).subarray(0, -1),
    exepath: exePath(link(`${dir}/exe`)),
    args,
    cwd: link(`${dir}/cwd`),
    cgroup,
    capInheritable: cap('CapInh'),
    capPermitted: cap('CapPrm'),
    capEffective: cap('CapEff'),
    env,
  };
}

/**
 * The exe link as the probe writes an exec's exepath: a memfd's "/memfd:<name>" (its " (deleted)"
 * already cut by link()) as "memfd:<name>", libsinsp's trusted exepath (probes/src/helpers.bpf.h put_path).
 */
function exePath(target: Buffer): Buffer {
  return target.subarray(0, 7).toString('latin1') === '/memfd:' ? target.subarray(1) : target;
}

/** The executable file's stat (through the /proc/PID/exe link), undefined when unreadable. */
function statExe(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true });
  } catch {
    return undefined;
  }
}

/** Same rule as the probe's exe_writable(): owner, group or other write bit for euid/egid. */
function exeWritable(st: BigIntStats | undefined, euid: number, egid: number): boolean {
  if (!st) return false;
  if (euid === 0) return true;
  if (st.uid === BigInt(euid)) return (st.mode & 0o200n) !== 0n;
  if (st.gid === BigInt(egid)) return (st.mode & 0o020n) !== 0n;
  return (st.mode & 0o002n) !== 0n;
}

function splitNul(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= b.length; i++) {
    if (i === b.length || b[i] === 0) {
      out.push(b.subarray(start, i));
      start = i + 1;
    }
  }
  return out;
}

/** Every process currently in /proc, ordered by pid (parents mostly before children). */
export function readProcesses(root = '/proc'): ProcSnapshot[] {
  const pids = readdirSync(root)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
  return parentsFirst(pids.flatMap((pid) => readProcess(pid, root) ?? []));
}

/**
 * Snapshots ordered so a parent comes before its children: once pids wrap around (pid_max is
 * 32768 on many hosts) a child's pid can be lower than its parent's, and a table that links a
 * PROC record to its parent when applying it would otherwise lose the child's ancestors.
 */
export function parentsFirst(procs: readonly ProcSnapshot[]): ProcSnapshot[] {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const out: ProcSnapshot[] = [];
  const placed = new Set<number>();
  for (const p of procs) {
    const chain: ProcSnapshot[] = [];
    for (let q: ProcSnapshot | undefined = p; q && !placed.has(q.pid); q = byPid.get(q.ppid)) {
      placed.add(q.pid);
      chain.push(q);
    }
    for (let i = chain.length - 1; i >= 0; i--) out.push(chain[i]!);
  }
  return out;
}

/**
 * Encodes a snapshot as a RAE_KIND_PROC record at view[off..]; returns its length, or 0 when it
 * does not fit. `tsNs` is the record time (CLOCK_BOOTTIME ns).
 */
export function encodeProcRecord(p: ProcSnapshot, view: Uint8Array, off: number, tsNs: bigint): number {
  const argv = Buffer.concat(p.args.flatMap((a, i) => (i ? [Buffer.from([0]), a] : [a]))).subarray(0, MAX_ARGS - 1);
  const strings: [number, Buffer][] = [
    [PROC.comm, p.comm.subarray(0, 15)],
    [PROC.exe, (p.args[0] ?? Buffer.alloc(0)).subarray(0, MAX_PATH - 1)],
    [PROC.exepath, p.exepath.subarray(0, MAX_PATH - 1)],
    [PROC.args, argv],
    [PROC.cwd, p.cwd.subarray(0, MAX_PATH - 1)],
    [PROC.cgroup, p.cgroup.subarray(0, MAX_PATH - 1)],
    [PROC.env, (p.env ?? Buffer.alloc(0)).subarray(0, MAX_ENV - 1)],
  ];
  const size = strings.reduce<number>((n, [, s]) => n + (s.length ? s.length + 1 : 0), SIZES.proc);
  const len = (size + 7) & ~7;
  if (off + len > view.byteLength) return 0;
  view.fill(0, off, off + len);
  const dv = new DataView(view.buffer, view.byteOffset + off, len);
  dv.setBigUint64(HDR.ts_ns, tsNs, true);
  dv.setUint32(HDR.len, len, true);
  dv.setUint16(HDR.kind, KIND.PROC, true);
  dv.setUint32(HDR.pid, p.pid, true);
  dv.setUint32(HDR.tid, p.pid, true);
  dv.setUint32(HDR.uid, p.euid, true);
  dv.setUint32(HDR.gid, p.egid, true);
  dv.setBigUint64(HDR.cgroup_id, p.cgroupId, true);
  const u32: [number, number][] = [
    [PROC.ppid, p.ppid],
    [PROC.vpid, p.vpid],
    [PROC.vtid, p.vpid],
    [PROC.sid, p.sid],
    [PROC.pgid, p.pgid],
    [PROC.ruid, p.ruid],
    [PROC.rgid, p.rgid],
    [PROC.loginuid, p.loginuid],
    [PROC.tty, p.tty],
    [PROC.pidns, p.pidns],
    [PROC.mntns, p.mntns],
  ];
  for (const [at, v] of u32) dv.setUint32(at, v >>> 0, true);
  dv.setUint32(PROC.pflags, p.exeWritable ? PF.EXE_WRITABLE : 0, true);
  dv.setBigUint64(PROC.start_ns, p.startNs, true);
  dv.setBigUint64(PROC.cap_inheritable, p.capInheritable ?? 0n, true);
  dv.setBigUint64(PROC.cap_permitted, p.capPermitted ?? 0n, true);
  dv.setBigUint64(PROC.cap_effective, p.capEffective ?? 0n, true);
  dv.setBigUint64(PROC.exe_ino_ctime, p.exeCtimeNs ?? 0n, true);
  dv.setBigUint64(PROC.exe_ino_mtime, p.exeMtimeNs ?? 0n, true);
  let pos = SIZES.proc;
  for (const [at, s] of strings) {
    if (s.length === 0) continue;
    view.set(s, off + pos);
    dv.setUint16(at, pos, true);
    dv.setUint16(at + 2, s.length, true);
    pos += s.length + 1;
  }
  return len;
}
