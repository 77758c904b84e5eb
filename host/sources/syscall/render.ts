// Text renderings of raw syscall values the way libsinsp prints event arguments (x86-64 values,
// libsinsp's flag names): open flags (O_RDONLY|O_CREAT...), file modes (S_IRUSR|...), ptrace
// requests (PTRACE_ATTACH), socket domains (AF_PACKET) and types, errno names for evt.res.
// Consumes plain numbers; produces strings. Unknown values are printed as their number.
import { constants } from 'node:os';

type FlagTable = ReadonlyArray<readonly [number, string]>;

/** x86-64 open(2) flags in libsinsp's order; the access mode is handled separately. */
export const OPEN_FLAGS: FlagTable = [
  [0o100, 'O_CREAT'], [0o200, 'O_EXCL'], [0o400, 'O_NOCTTY'], [0o1000, 'O_TRUNC'], [0o2000, 'O_APPEND'],
  [0o4000, 'O_NONBLOCK'], [0o10000, 'O_DSYNC'], [0o20000, 'O_ASYNC'], [0o40000, 'O_DIRECT'], [0o100000, 'O_LARGEFILE'],
  [0o200000, 'O_DIRECTORY'], [0o400000, 'O_NOFOLLOW'], [0o1000000, 'O_NOATIME'], [0o2000000, 'O_CLOEXEC'],
  [0o4000000, 'O_SYNC'], [0o10000000, 'O_PATH'], [0o20000000, 'O_TMPFILE'],
];
const O_ACCMODE = 3;

/** open flags as text, e.g. `O_WRONLY|O_CREAT|O_TRUNC`. */
export function openFlags(flags: number): string {
  const acc = flags & O_ACCMODE;
  const out = [acc === 0 ? 'O_RDONLY' : acc === 1 ? 'O_WRONLY' : 'O_RDWR'];
  for (const [bit, name] of OPEN_FLAGS) if ((flags & bit) !== 0) out.push(name);
  return out.join('|');
}

/** Whether open flags allow reading / writing (libsinsp evt.is_open_read / is_open_write). */
export function openReads(flags: number): boolean {
  return (flags & O_ACCMODE) !== 1;
}
export function openWrites(flags: number): boolean {
  return (flags & O_ACCMODE) !== 0;
}

const MODE_FLAGS: FlagTable = [
  [0o1, 'S_IXOTH'], [0o2, 'S_IWOTH'], [0o4, 'S_IROTH'], [0o10, 'S_IXGRP'], [0o20, 'S_IWGRP'], [0o40, 'S_IRGRP'],
  [0o100, 'S_IXUSR'], [0o200, 'S_IWUSR'], [0o400, 'S_IRUSR'], [0o1000, 'S_ISVTX'], [0o2000, 'S_ISGID'], [0o4000, 'S_ISUID'],
];

/** A file mode as libsinsp's chmod flags, e.g. `S_IXUSR|S_IWUSR|S_IRUSR`. */
export function modeFlags(mode: number): string {
  return MODE_FLAGS.filter(([bit]) => (mode & bit) !== 0).map(([, n]) => n).join('|');
}

/** ptrace request names by number. */
export const PTRACE: Record<number, string> = {
  0: 'PTRACE_TRACEME', 1: 'PTRACE_PEEKTEXT', 2: 'PTRACE_PEEKDATA', 3: 'PTRACE_PEEKUSR', 4: 'PTRACE_POKETEXT',
  5: 'PTRACE_POKEDATA', 6: 'PTRACE_POKEUSR', 7: 'PTRACE_CONT', 8: 'PTRACE_KILL', 9: 'PTRACE_SINGLESTEP',
  12: 'PTRACE_GETREGS', 13: 'PTRACE_SETREGS', 14: 'PTRACE_GETFPREGS', 15: 'PTRACE_SETFPREGS', 16: 'PTRACE_ATTACH',
  17: 'PTRACE_DETACH', 18: 'PTRACE_GETFPXREGS', 19: 'PTRACE_SETFPXREGS', 24: 'PTRACE_SYSCALL', 31: 'PTRACE_SYSEMU',
  32: 'PTRACE_SYSEMU_SINGLESTEP', 0x4200: 'PTRACE_SETOPTIONS', 0x4201: 'PTRACE_GETEVENTMSG', 0x4202: 'PTRACE_GETSIGINFO',
  0x4203: 'PTRACE_SETSIGINFO', 0x4204: 'PTRACE_GETREGSET', 0x4205: 'PTRACE_SETREGSET', 0x4206: 'PTRACE_SEIZE',
  0x4207: 'PTRACE_INTERRUPT', 0x4208: 'PTRACE_LISTEN', 0x4209: 'PTRACE_PEEKSIGINFO',
};

/** A ptrace request name, e.g. `PTRACE_ATTACH`. */
export function ptraceRequest(req: number): string {
  return PTRACE[req] ?? String(req);
}

/** Socket domain names by number. */
export const DOMAINS: Record<number, string> = {
  0: 'AF_UNSPEC', 1: 'AF_UNIX', 2: 'AF_INET', 3: 'AF_AX25', 4: 'AF_IPX', 5: 'AF_APPLETALK', 9: 'AF_X25', 10: 'AF_INET6',
  16: 'AF_NETLINK', 17: 'AF_PACKET', 38: 'AF_ALG', 40: 'AF_VSOCK', 44: 'AF_XDP',
};

/** A socket domain name, e.g. `AF_PACKET`. */
export function socketDomain(d: number): string {
  return DOMAINS[d] ?? String(d);
}

/** SOCK_* base types (flags SOCK_NONBLOCK/SOCK_CLOEXEC masked off). */
export const SOCK = { STREAM: 1, DGRAM: 2, RAW: 3 } as const;

const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([k, v]) => [v, k]));
ERRNO_NAMES.set(11, 'EAGAIN');
ERRNO_NAMES.set(95, 'EOPNOTSUPP');

/** evt.res text: SUCCESS, or the errno name of a negative return value. */
export function resText(ret: number): string {
  if (ret >= 0) return 'SUCCESS';
  return ERRNO_NAMES.get(-ret) ?? String(ret);
}

/** unlinkat/… AT_* flags. */
export function atFlags(flags: number): string {
  const out: string[] = [];
  if (flags & 0x200) out.push('AT_REMOVEDIR');
  if (flags & 0x400) out.push('AT_SYMLINK_FOLLOW');
  if (flags & 0x1000) out.push('AT_EMPTY_PATH');
  return out.join('|') || String(flags);
}
