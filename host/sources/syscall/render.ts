// Text renderings of raw syscall values the way libsinsp prints event arguments (x86-64 values,
// libsinsp's flag names): open flags (O_RDONLY|O_CREAT...), file modes (S_IRUSR|...), ptrace
// requests (PTRACE_ATTACH), socket domains (AF_PACKET) and types.
// Consumes plain numbers; produces strings. Unknown values are printed as their number.

import { TF } from '../../abi/module.js';

type FlagTable = ReadonlyArray<readonly [number, string]>;

/** x86-64 open(2) flags in libsinsp's order; the access mode is handled separately. */
export const OPEN_FLAGS: FlagTable = [
  [0o100, 'O_CREAT'],
  [0o200, 'O_EXCL'],
  [0o400, 'O_NOCTTY'],
  [0o1000, 'O_TRUNC'],
  [0o2000, 'O_APPEND'],
  [0o4000, 'O_NONBLOCK'],
  [0o10000, 'O_DSYNC'],
  [0o20000, 'O_ASYNC'],
  [0o40000, 'O_DIRECT'],
  [0o100000, 'O_LARGEFILE'],
  [0o200000, 'O_DIRECTORY'],
  [0o400000, 'O_NOFOLLOW'],
  [0o1000000, 'O_NOATIME'],
  [0o2000000, 'O_CLOEXEC'],
  [0o4000000, 'O_SYNC'],
  [0o10000000, 'O_PATH'],
  [0o20000000, 'O_TMPFILE'],
];
const O_ACCMODE = 3;

/** open flags as text, e.g. `O_WRONLY|O_CREAT|O_TRUNC`. */
export function openFlags(flags: number): string {
  const acc = flags & O_ACCMODE;
  const out = [acc === 0 ? 'O_RDONLY' : acc === 1 ? 'O_WRONLY' : 'O_RDWR'];
  for (const [bit, name] of OPEN_FLAGS) if ((flags & bit) !== 0) out.push(name);
  return out.join('|');
}

/** chmod mode bits and names in libsinsp's chmod_mode order. */
export const MODE_FLAGS: FlagTable = [
  [0o1, 'S_IXOTH'],
  [0o2, 'S_IWOTH'],
  [0o4, 'S_IROTH'],
  [0o10, 'S_IXGRP'],
  [0o20, 'S_IWGRP'],
  [0o40, 'S_IRGRP'],
  [0o100, 'S_IXUSR'],
  [0o200, 'S_IWUSR'],
  [0o400, 'S_IRUSR'],
  [0o1000, 'S_ISVTX'],
  [0o2000, 'S_ISGID'],
  [0o4000, 'S_ISUID'],
];

/** A file mode as libsinsp's chmod flags, e.g. `S_IXUSR|S_IWUSR|S_IRUSR`. */
function modeFlags(mode: number): string {
  return MODE_FLAGS.filter(([bit]) => (mode & bit) !== 0)
    .map(([, n]) => n)
    .join('|');
}

/** ptrace request names by number. */
export const PTRACE: Record<number, string> = {
  0: 'PTRACE_TRACEME',
  1: 'PTRACE_PEEKTEXT',
  2: 'PTRACE_PEEKDATA',
  3: 'PTRACE_PEEKUSR',
  4: 'PTRACE_POKETEXT',
  5: 'PTRACE_POKEDATA',
  6: 'PTRACE_POKEUSR',
  7: 'PTRACE_CONT',
  8: 'PTRACE_KILL',
  9: 'PTRACE_SINGLESTEP',
  12: 'PTRACE_GETREGS',
  13: 'PTRACE_SETREGS',
  14: 'PTRACE_GETFPREGS',
  15: 'PTRACE_SETFPREGS',
  16: 'PTRACE_ATTACH',
  17: 'PTRACE_DETACH',
  18: 'PTRACE_GETFPXREGS',
  19: 'PTRACE_SETFPXREGS',
  24: 'PTRACE_SYSCALL',
  31: 'PTRACE_SYSEMU',
  32: 'PTRACE_SYSEMU_SINGLESTEP',
  0x4200: 'PTRACE_SETOPTIONS',
  0x4201: 'PTRACE_GETEVENTMSG',
  0x4202: 'PTRACE_GETSIGINFO',
  0x4203: 'PTRACE_SETSIGINFO',
  0x4204: 'PTRACE_GETREGSET',
  0x4205: 'PTRACE_SETREGSET',
  0x4206: 'PTRACE_SEIZE',
  0x4207: 'PTRACE_INTERRUPT',
  0x4208: 'PTRACE_LISTEN',
  0x4209: 'PTRACE_PEEKSIGINFO',
};

/** A ptrace request name, e.g. `PTRACE_ATTACH`. */
export function ptraceRequest(req: number): string {
  return PTRACE[req] ?? String(req);
}

/** Socket domain names by number. */
export const DOMAINS: Record<number, string> = {
  0: 'AF_UNSPEC',
  1: 'AF_UNIX',
  2: 'AF_INET',
  3: 'AF_AX25',
  4: 'AF_IPX',
  5: 'AF_APPLETALK',
  9: 'AF_X25',
  10: 'AF_INET6',
  16: 'AF_NETLINK',
  17: 'AF_PACKET',
  38: 'AF_ALG',
  40: 'AF_VSOCK',
  44: 'AF_XDP',
};

/** A socket domain name, e.g. `AF_PACKET`. */
export function socketDomain(d: number): string {
  return DOMAINS[d] ?? String(d);
}

/** The names of the set bits of `v` among `table`, joined by '|' in its order; `none` when no name matches. */
function bitNames(v: number, table: readonly (readonly [number, string])[], none: string): string {
  const out = table.filter(([bit]) => v & bit).map(([, name]) => name);
  return out.join('|') || none;
}

const AT_FLAGS = [
  [0x200, 'AT_REMOVEDIR'],
  [0x400, 'AT_SYMLINK_FOLLOW'],
  [0x1000, 'AT_EMPTY_PATH'],
] as const;

/** unlinkat/… AT_* flags. */
export function atFlags(flags: number): string {
  return bitNames(flags, AT_FLAGS, String(flags));
}

const EXE_FLAGS = [
  [TF.EXE_WRITABLE, 'EXE_WRITABLE'],
  [TF.EXE_UPPER, 'EXE_UPPER_LAYER'],
  [TF.EXE_MEMFD, 'EXE_FROM_MEMFD'],
  [TF.EXE_LOWER, 'EXE_LOWER_LAYER'],
] as const;

/**
 * execve/execveat's `flags` (PT_FLAGS32, libs execve_flags) from a thread entry's TF bits: the
 * names of the set ones in libs' order (EXE_WRITABLE 1<<0, EXE_UPPER_LAYER 1<<1, EXE_FROM_MEMFD
 * 1<<2, EXE_LOWER_LAYER 1<<3), joined by '|'; none set prints 0, as libsinsp prints a flags
 * parameter no name matches (its raw number).
 */
export function execveFlags(tf: number): string {
  return bitNames(tf, EXE_FLAGS, '0');
}

// ---- evt.arg.* by syscall, as libsinsp names and renders the parameters ----
// Parameter names and types from falcosecurity/libs driver/event_table.c (the current *_X
// events: OPEN/OPENAT_2/OPENAT2/CREAT `name` PT_FSPATH/FSRELPATH and `mode` PT_UINT32 PF_OCT,
// UNLINKAT_2 `name`, MKDIR_2/RMDIR_2/UNLINK_2 `path` PT_FSPATH, MKDIRAT `path` + `mode` PT_UINT32
// PF_HEX, CHDIR `path` PT_CHARBUF (never resolved), MEMFD_CREATE `name` PT_CHARBUF, CHMOD/FCHMODAT
// `filename` + `mode` PT_MODE (chmod_mode), FCHMOD `fd` + `mode`, RENAME/RENAMEAT/RENAMEAT2/
// LINK_2/LINKAT_2 `oldpath` + `newpath`, SETUID `uid` PT_UID, BPF_2 `cmd` PT_INT64/PT_INT32 PF_DEC
// (a plain number: BPF_PROG_LOAD is "5")). Rendering from userspace/libsinsp/event.cpp
// sinsp_evt::get_param_as_str (evt.arg.X takes the resolved string when it is not empty, else the
// plain one: sinsp_filtercheck_event TYPE_ARGSTR): PT_FSPATH/FSRELPATH resolve only a relative
// path (concatenate_paths with the cwd / dirfd's directory), an absolute one stays as passed;
// PT_MODE lists the chmod_mode names of the set bits, "%#o" when none; PT_UINT32 PF_OCT "%#o",
// PF_HEX "%X"; PT_UID the user name, "<NA>" when unknown, "<NONE>" for -1 (render of PT_UID);
// PT_FD (render_fd) the number, "AT_FDCWD" for -100, the errno name of a negative value, and
// "<f>/path" of an fd in libsinsp's fd table, which neither of our paths keeps (the number then).
// The driver sends open's mode only with O_CREAT/O_TMPFILE, else 0 (ppm_flag_helpers.h
// open_modes_to_scap), and chmod/open modes as the 12 permission bits.

/** The evt.arg name of a syscall's first path (the record's `path`), and whether it is resolved against `dir`. */
export const PATH_ARG: Readonly<Record<string, readonly ['name' | 'path' | 'filename' | 'oldpath', boolean]>> = {
  open: ['name', true],
  openat: ['name', true],
  openat2: ['name', true],
  creat: ['name', true],
  unlinkat: ['name', true],
  memfd_create: ['name', false],
  mkdir: ['path', true],
  mkdirat: ['path', true],
  rmdir: ['path', true],
  unlink: ['path', true],
  chdir: ['path', false],
  chmod: ['filename', true],
  fchmodat: ['filename', true],
  fchmodat2: ['filename', true],
  rename: ['oldpath', true],
  renameat: ['oldpath', true],
  renameat2: ['oldpath', true],
  link: ['oldpath', true],
  linkat: ['oldpath', true],
};
/** Syscalls with evt.arg.newpath (the record's `path2`, resolved against `dir2`). */
export const NEWPATH_ARG: ReadonlySet<string> = new Set(['rename', 'renameat', 'renameat2', 'link', 'linkat']);
/** evt.arg.mode: which value (argument index; 6 = openat2's how.mode, aux[1]) and how it prints. */
export const MODE_ARG: Readonly<Record<string, readonly [number, 'chmod' | 'open' | 'hex']>> = {
  chmod: [1, 'chmod'],
  fchmod: [1, 'chmod'],
  fchmodat: [2, 'chmod'],
  fchmodat2: [2, 'chmod'],
  open: [2, 'open'],
  openat: [3, 'open'],
  openat2: [6, 'open'],
  creat: [1, 'open'],
  mkdir: [1, 'hex'],
  mkdirat: [2, 'hex'],
};
/** evt.arg.fd: the return value or the first argument. */
export const FD_ARG: Readonly<Record<string, 'ret' | 'arg0'>> = {
  open: 'ret',
  openat: 'ret',
  openat2: 'ret',
  creat: 'ret',
  socket: 'ret',
  accept: 'ret',
  accept4: 'ret',
  memfd_create: 'ret',
  bpf: 'ret',
  connect: 'arg0',
  fchmod: 'arg0',
  fcntl: 'arg0',
  setsockopt: 'arg0',
  getsockopt: 'arg0',
  finit_module: 'arg0',
};
/** The 12 permission bits of a chmod/open mode (chmod_mode's values). */
const MODE_BITS = 0o7777;
/** O_CREAT | O_TMPFILE: open's mode is sent only with one of them. */
const OPEN_MODE_FLAGS = 0o100 | 0o20000000;

/** evt.arg.mode of chmod/fchmod/fchmodat: `S_IRUSR|S_IWUSR...` (chmod_mode order), "0" when no bit is set. */
export function chmodMode(mode: number): string {
  return modeFlags(mode & MODE_BITS) || '0';
}

/** evt.arg.mode of an open (PT_UINT32 PF_OCT of open_modes_to_scap): "%#o", 0 without O_CREAT/O_TMPFILE. */
export function openMode(flags: number, mode: number): string {
  const m = (flags & OPEN_MODE_FLAGS) !== 0 ? mode & MODE_BITS : 0;
  return m === 0 ? '0' : `0${m.toString(8)}`;
}

/**
 * evt.is_open_exec of an open/openat/openat2/creat: the call creates a file (O_CREAT or O_TMPFILE,
 * creat's flags included) whose mode has an execute bit (S_IXUSR|S_IXGRP|S_IXOTH); whatever it
 * returned. libs userspace/libsinsp/sinsp_filtercheck_event.cpp TYPE_ISOPEN_EXEC (is_exec_mask on
 * the mode parameter, read when the flags have PPM_O_TMPFILE or PPM_O_CREAT; creat's mode always).
 * Not O_PATH, not an exec of the file: the name means "opened to create an executable".
 */
export function isOpenExec(flags: number, mode: number): boolean {
  return (flags & OPEN_MODE_FLAGS) !== 0 && (mode & 0o111) !== 0;
}

/** evt.arg.mode of mkdir/mkdirat (PT_UINT32 PF_HEX): "%X". */
export function hexMode(mode: number): string {
  return (mode >>> 0).toString(16).toUpperCase();
}

/** evt.arg.fd without an fd table: the number, AT_FDCWD, or the errno name (`errno(n)`) of a negative value. */
export function fdText(fd: number, errno: (n: number) => string | undefined): string {
  if (fd >= 0) return String(fd);
  if (fd === -100) return 'AT_FDCWD';
  return errno(-fd) ?? String(fd);
}

/** evt.arg.uid: the user name, <NA> when unknown, <NONE> for -1. */
export function uidText(uid: number, name: string | undefined): string {
  if (uid >>> 0 === 0xffffffff) return '<NONE>';
  return name ?? '<NA>';
}

// evt.arg.pid/dirfd/res/linkpath (event_table.c, event.cpp get_param_as_str):
// PTRACE_X `pid` PT_PID (args[1] as pid_t): the number ("%" PRId64; libsinsp prints the thread's comm when
// it knows the thread, neither of our paths looks it up); `dirfd` PT_FD (args[0]) of OPENAT_2,
// OPENAT2, UNLINKAT_2, MKDIRAT, FCHMODAT, FCHOWNAT, EXECVEAT, NEWFSTATAT rendered as evt.arg.fd is
// (fdText: AT_FDCWD for -100); `res` PT_ERRNO of every exit event whose return value is not its
// `fd` parameter: the errno name of a negative value, else the number ("0" on success, unlike
// evt.res's SUCCESS); SYMLINK_X `linkpath` PT_FSPATH / SYMLINKAT_X PT_FSRELPATH (DIRFD_PARAM(2)):
// the record's second path, a relative one joined with its directory (as evt.arg.newpath).

/** Syscalls with evt.arg.dirfd (args[0], PT_FD). */
export const DIRFD_ARG: ReadonlySet<string> = new Set(['openat', 'openat2', 'unlinkat', 'mkdirat', 'fchmodat', 'fchownat', 'execveat', 'newfstatat']);
/** Syscalls with evt.arg.linkpath (the record's `path2`, resolved against `dir2`). */
export const LINKPATH_ARG: ReadonlySet<string> = new Set(['symlink', 'symlinkat']);

/** Whether the syscall has evt.arg.res (its return value is not its `fd` parameter). */
export function hasResArg(name: string): boolean {
  return FD_ARG[name] !== 'ret';
}

/** evt.arg.res (PT_ERRNO): the errno name (`errno(n)`) of a negative value, else the number. */
export function resArgText(ret: number, errno: (n: number) => string | undefined): string {
  return ret < 0 ? (errno(-ret) ?? String(ret)) : String(ret);
}

/**
 * Syscalls whose exit event has the I/O buffer parameter `data` (PT_BYTEBUF: evt.buffer,
 * evt.arg.data): the read/write family and the socket calls with a payload, as libsinsp's event
 * table gives READ_X, PREAD_X, READV_X, PREADV_X, RECVFROM_X, RECVMSG_X and their writing twins.
 */
export const DATA_ARG: ReadonlySet<string> = new Set(['read', 'pread64', 'readv', 'preadv', 'recvfrom', 'recvmsg', 'write', 'pwrite64', 'writev', 'pwritev', 'sendto', 'sendmsg']);

/**
 * evt.arg.data and the printed evt.buffer: libsinsp renders a PT_BYTEBUF parameter in PF_NORMAL
 * with binary_buffer_to_string_dots (userspace/libsinsp/event.cpp): each byte that isprint() in the
 * C locale (0x20..0x7e) as itself, any other as '.'. One character per byte.
 */
export function printableData(bytes: Uint8Array): Uint8Array {
  return bytes.map((b) => (b >= 0x20 && b <= 0x7e ? b : 0x2e));
}
