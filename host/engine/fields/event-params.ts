// Syscall event parameter names and their raw types, for `evt.arg.NAME` / `evt.rawarg.NAME`.
// libsinsp resolves NAME as the longest parameter name (across all events) that is a prefix of
// the written text (sinsp_utils::find_longest_matching_evt_param); the raw type is that of the
// first event in the driver table declaring the name (libs:driver/event_table.c). This list
// covers the parameters of the syscalls the engine's probe and Falco's rule files use; a name
// not listed is reported as `unknown event argument NAME`.
import type { PtType } from './types.js';

const PARAMS: ReadonlyArray<readonly [string, PtType]> = [
  // results and descriptors
  ['res', 'PT_ERRNO'],
  ['fd', 'PT_FD'],
  ['fd1', 'PT_FD'],
  ['fd2', 'PT_FD'],
  ['dirfd', 'PT_FD'],
  ['olddir', 'PT_FD'],
  ['newdir', 'PT_FD'],
  ['olddirfd', 'PT_FD'],
  ['newdirfd', 'PT_FD'],
  ['linkdirfd', 'PT_FD'],
  ['oldfd', 'PT_FD'],
  ['newfd', 'PT_FD'],
  ['fd_in', 'PT_FD'],
  ['fd_out', 'PT_FD'],
  ['in_fd', 'PT_FD'],
  ['out_fd', 'PT_FD'],
  ['fdin', 'PT_FD'],
  ['fdout', 'PT_FD'],
  ['mountfd', 'PT_FD'],
  ['pidfd', 'PT_FD'],
  ['targetfd', 'PT_FD'],
  ['res_or_fd', 'PT_FD'],
  ['fds', 'PT_FDLIST'],
  // paths and names
  ['name', 'PT_FSPATH'],
  ['path', 'PT_FSPATH'],
  ['filename', 'PT_FSPATH'],
  ['pathname', 'PT_FSRELPATH'],
  ['oldpath', 'PT_FSPATH'],
  ['newpath', 'PT_FSPATH'],
  ['target', 'PT_CHARBUF'],
  ['linkpath', 'PT_FSPATH'],
  ['dir', 'PT_FSPATH'],
  ['dev', 'PT_UINT32'],
  ['ino', 'PT_UINT64'],
  ['trusted_exepath', 'PT_FSPATH'],
  ['special', 'PT_CHARBUF'],
  ['type', 'PT_UINT32'],
  ['uargs', 'PT_CHARBUF'],
  ['img', 'PT_BYTEBUF'],
  // flags and modes
  ['flags', 'PT_FLAGS32'],
  ['mode', 'PT_UINT32'],
  ['prot', 'PT_FLAGS32'],
  ['resolve', 'PT_FLAGS32'],
  ['nstype', 'PT_FLAGS32'],
  ['how', 'PT_FLAGS8'],
  ['whence', 'PT_FLAGS8'],
  ['cmd', 'PT_FLAGS8'],
  ['op', 'PT_FLAGS16'],
  ['level', 'PT_FLAGS8'],
  ['optname', 'PT_FLAGS8'],
  ['resource', 'PT_FLAGS8'],
  ['option', 'PT_ENUMFLAGS32'],
  ['domain', 'PT_FLAGS32'],
  ['proto', 'PT_UINT32'],
  // network
  ['addr', 'PT_SOCKADDR'],
  ['tuple', 'PT_SOCKTUPLE'],
  ['backlog', 'PT_UINT32'],
  ['queuepct', 'PT_UINT8'],
  ['queuelen', 'PT_UINT32'],
  ['queuemax', 'PT_UINT32'],
  ['val', 'PT_DYN'],
  ['optlen', 'PT_UINT32'],
  ['msgcontrol', 'PT_BYTEBUF'],
  ['source', 'PT_UINT64'],
  ['peer', 'PT_UINT64'],
  // I/O and memory
  ['size', 'PT_UINT32'],
  ['data', 'PT_BYTEBUF'],
  ['pos', 'PT_UINT64'],
  ['offset', 'PT_UINT64'],
  ['length', 'PT_UINT64'],
  ['pgoffset', 'PT_UINT64'],
  ['len', 'PT_UINT64'],
  ['offin', 'PT_UINT64'],
  ['offout', 'PT_UINT64'],
  ['argument', 'PT_UINT64'],
  ['request', 'PT_UINT64'],
  ['initval', 'PT_UINT64'],
  ['mask', 'PT_UINT32'],
  ['timeout', 'PT_INT64'],
  ['interval', 'PT_RELTIME'],
  ['clockid', 'PT_UINT8'],
  // processes and credentials
  ['exe', 'PT_CHARBUF'],
  ['args', 'PT_BYTEBUF'],
  ['env', 'PT_BYTEBUF'],
  ['comm', 'PT_CHARBUF'],
  ['cgroups', 'PT_BYTEBUF'],
  ['cwd', 'PT_CHARBUF'],
  ['tid', 'PT_PID'],
  ['pid', 'PT_PID'],
  ['ptid', 'PT_PID'],
  ['pgid', 'PT_PID'],
  ['next', 'PT_PID'],
  ['reaper_tid', 'PT_INT64'],
  ['tty', 'PT_UINT32'],
  ['fdlimit', 'PT_UINT64'],
  ['pgft_maj', 'PT_UINT64'],
  ['pgft_min', 'PT_UINT64'],
  ['vm_size', 'PT_UINT32'],
  ['vm_rss', 'PT_UINT32'],
  ['vm_swap', 'PT_UINT32'],
  ['uid', 'PT_UINT32'],
  ['gid', 'PT_UINT32'],
  ['ruid', 'PT_UID'],
  ['euid', 'PT_UID'],
  ['suid', 'PT_UID'],
  ['rgid', 'PT_GID'],
  ['egid', 'PT_GID'],
  ['sgid', 'PT_GID'],
  ['loginuid', 'PT_UID'],
  ['cap_inheritable', 'PT_UINT64'],
  ['cap_permitted', 'PT_UINT64'],
  ['cap_effective', 'PT_UINT64'],
  ['exe_ino', 'PT_UINT64'],
  ['exe_ino_ctime', 'PT_ABSTIME'],
  ['exe_ino_mtime', 'PT_ABSTIME'],
  ['sig', 'PT_SIGTYPE'],
  ['status', 'PT_ERRNO'],
  ['ret', 'PT_ERRNO'],
  ['core', 'PT_UINT8'],
  ['cur', 'PT_INT64'],
  ['max', 'PT_INT64'],
  ['newcur', 'PT_INT64'],
  ['newmax', 'PT_INT64'],
  ['oldcur', 'PT_INT64'],
  ['oldmax', 'PT_INT64'],
  ['arg2_str', 'PT_CHARBUF'],
  ['arg2_int', 'PT_INT64'],
  ['id', 'PT_UINT32'],
];

const BY_NAME: ReadonlyMap<string, PtType> = new Map(PARAMS);

/** The raw type of an event parameter, or undefined if no event declares that name. */
export function eventParamType(name: string): PtType | undefined {
  return BY_NAME.get(name);
}

/** The longest known parameter name that is a prefix of `text`, or undefined. */
export function longestParamPrefix(text: string): string | undefined {
  let best: string | undefined;
  for (const [name] of PARAMS) {
    if (text.startsWith(name) && (best === undefined || name.length > best.length)) best = name;
  }
  return best;
}
