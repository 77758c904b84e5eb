// TypeScript mirror of probes/src/events.h, the wire format of kernel event records (ABI
// version, record kinds, flags, byte offsets and sizes). Consumed by the decoder, the /proc
// bootstrap encoder and (later) the evaluator's host side. test/probes/layout.test.ts checks
// every number here against the offsets the C compiler computes for events.h.
//
// A record: 48-byte header, a fixed body per kind, then a string area. A string field is a
// {u16 off, u16 len} pair; `off` counts from the record start, a NUL follows the bytes, {0,0} is
// absent. All integers little-endian; times CLOCK_BOOTTIME ns.

/** RAE_ABI_VERSION: bumped on any layout change; one number for the records and the module ABI (module.ts). */
export { ABI_VERSION } from './module.js';

/** RAE_MAX_RECORD: no record is larger; poll() views must hold at least this many bytes. */
export const MAX_RECORD = 16384;
/** RAE_MAX_PATH: longest path/name string, NUL included. */
export const MAX_PATH = 4096;
/** RAE_MAX_ARGS: longest argv, NUL-separated. */
export const MAX_ARGS = 4096;
/** RAE_MAX_ENV: longest environment, NUL-separated, NUL included (libscap SCAP_MAX_ENV_SIZE). */
export const MAX_ENV = 4096;
/** RAE_MAX_DATA: most bytes of a syscall's I/O buffer in a record (the largest snaplen). */
export const MAX_DATA = 4096;
/** Values of the probe's per-syscall table (RAE_INT_*): record the syscall, its I/O buffer, read-only opens only of the open_paths trie's paths. */
export const INT = { RECORD: 0x1, DATA: 0x2, PATHS: 0x4 } as const;
/** RAE_OPEN_KEY_BYTES: the bytes of a path in the probe's open_paths trie key (rae_open_key.data). */
export const OPEN_KEY_BYTES = 256;

/** Record kinds (rae_hdr.kind). */
export const KIND = { SYSCALL: 1, EXEC: 2, FORK: 3, EXIT: 4, PROC: 5, CAPS: 6 } as const;

/** rae_syscall.sflags bits. */
export const SF = { COMPAT: 0x1, PATH_TRUNC: 0x2, PATH_FAULT: 0x4 } as const;
/** rae_proc.pflags bits. */
export const PF = { ARGS_TRUNC: 0x1, PATH_TRUNC: 0x2, THREAD: 0x4, EXE_WRITABLE: 0x8, EXE_UPPER: 0x10, ENV_TRUNC: 0x20, EXE_LOWER: 0x40 } as const;
/** rae_exit.xflags bits. */
export const XF = { GROUP_DEAD: 0x1 } as const;

/** struct rae_hdr (48 bytes), common to every record. */
export const HDR = {
  ts_ns: 0, // u64
  len: 8, // u32, whole record, multiple of 8
  kind: 12, // u16
  nr: 14, // u16 syscall number
  pid: 16, // u32 thread group id
  tid: 20, // u32
  uid: 24, // u32 effective
  gid: 28, // u32 effective
  cgroup_id: 32, // u64
  ret: 40, // s64
} as const;

/** struct rae_syscall (192 bytes + strings). */
export const SYSCALL = {
  args: 48, // u64[6]
  aux: 96, // u64[2] openat2 {flags, mode}, then at 112 its how.resolve (u64)
  data: 112, // rae_str in place of resolve: the I/O buffer's first snaplen bytes (syscalls with one, marked INT.DATA)
  sflags: 120, // u32
  sock_type: 124, // u32 type of the socket whose tuple was read (SOCK_STREAM 1...), 0 = none
  path: 128, // rae_str
  path2: 132,
  dir: 136,
  dir2: 140,
  peer: 144, // rae_sockaddr
  local: 168,
} as const;

/** struct rae_proc (176 bytes + strings), for EXEC, FORK and PROC. */
export const PROC = {
  ppid: 48,
  vpid: 52,
  vtid: 56,
  sid: 60,
  pgid: 64,
  ruid: 68,
  rgid: 72,
  loginuid: 76,
  tty: 80,
  pflags: 84,
  start_ns: 88, // u64
  pidns: 96,
  mntns: 100,
  comm: 104, // rae_str from here on
  exe: 108,
  exepath: 112,
  args: 116,
  cwd: 120,
  cgroup: 124,
  cap_inheritable: 128, // u64 capability bit set (bit N = capability N)
  cap_permitted: 136, // u64
  cap_effective: 144, // u64
  env: 152, // rae_str: the environment, NUL-separated
  exe_ino_ctime: 160, // u64 epoch ns, 0 = unknown
  exe_ino_mtime: 168, // u64 epoch ns, 0 = unknown
} as const;

/** struct rae_caps (72 bytes): the caller's sets after a successful capset(2). */
export const CAPS = { cap_inheritable: 48, cap_permitted: 56, cap_effective: 64 } as const;

/** struct rae_exit (56 bytes). */
export const EXIT = { xflags: 48 } as const;

/** struct rae_sockaddr (24 bytes). */
export const SOCKADDR = { family: 0, port: 2, addr: 8 } as const;

/** sizeof of each struct in events.h. */
export const SIZES = { hdr: 48, syscall: 192, proc: 176, exit: 56, caps: 72, sockaddr: 24, str: 4, stats: 32 } as const;

/** Address families in rae_sockaddr.family. */
export const AF = { UNIX: 1, INET: 2, INET6: 10 } as const;
