// Per-syscall-number facts of the kernel ingest, computed once: the syscall's name, its evt.type
// id in the module ABI, and its class bits (ingest.h RAE_NRC_*), which both translators read to
// know which fields a record of that syscall can give. Consumes the syscall table, the field
// facts of fields.ts and the parameter tables of render.ts.
import { evtTypeId } from '../../../abi/module.js';
import { FD_FROM_ARG0, FD_FROM_RET, OPENS, SERVER_SIDE } from '../fields.js';
import { DATA_ARG, DIRFD_ARG, FD_ARG, hasResArg, LINKPATH_ARG, MODE_ARG, NEWPATH_ARG, PATH_ARG } from '../render.js';
import { NR_SYSCALLS, syscallName } from '../syscalls.js';
import { IABI, NRC } from './ingest-abi.js';

/** evt.type id by syscall number. */
export const TYPE_IDS = Int32Array.from({ length: NR_SYSCALLS }, (_, nr) => evtTypeId(syscallName(nr) || undefined));
/** Name by syscall number ('' for a number without one). */
export const NAMES = Array.from({ length: NR_SYSCALLS }, (_, nr) => syscallName(nr));

/**
 * Where facts.flags comes from by syscall (RAE_NRC_FLAGS_*): open flags, the AT_* flags of
 * unlinkat/linkat, socket(2)'s domain; execve's kind reads none (its evt.arg.flags is the thread's).
 */
const FLAGS_FROM: Readonly<Record<string, number>> = {
  creat: 1,
  openat2: 2,
  open: 3,
  openat: 4,
  unlinkat: IABI.NRC_FLAGS_AT2,
  linkat: IABI.NRC_FLAGS_AT4,
  socket: IABI.NRC_FLAGS_DOMAIN,
  execve: IABI.NRC_FLAGS_EXEC,
  execveat: IABI.NRC_FLAGS_EXEC,
};

/** Per syscall number: class bits of the native plan (RAE_NRC_*). */
export const NR_CLASS = Int32Array.from({ length: NR_SYSCALLS }, (_, nr) => {
  const name = NAMES[nr]!;
  const flagsFrom = Object.hasOwn(FLAGS_FROM, name) ? FLAGS_FROM[name]! : 0;
  const base =
    (OPENS.has(name) ? IABI.NRC_OPEN : 0) |
    (FD_FROM_RET.has(name) ? IABI.NRC_FD_RET : 0) |
    (FD_FROM_ARG0.has(name) ? IABI.NRC_FD_ARG0 : 0) |
    (SERVER_SIDE.has(name) ? IABI.NRC_SERVER : 0) |
    (flagsFrom << IABI.NRC_FLAGS_SHIFT) |
    (name === 'socket' ? IABI.NRC_SOCKET : 0) |
    (name === 'ptrace' ? IABI.NRC_PTRACE : 0) |
    (name === 'connect' ? IABI.NRC_CONNECT : 0) |
    (name === 'sendto' || name === 'sendmsg' ? IABI.NRC_SENDTO : 0) |
    (name === 'bind' ? IABI.NRC_BIND : 0) |
    (name === 'listen' ? IABI.NRC_LISTEN : 0);
  // the evt.arg.* parameters libsinsp gives this syscall (render.ts)
  const p = PATH_ARG[name];
  const mode = MODE_ARG[name];
  const fd = FD_ARG[name];
  return (
    base |
    (p ? ((['name', 'path', 'filename', 'oldpath'].indexOf(p[0]) + 1) << NRC.PATHARG_SHIFT) | (p[1] ? 0 : NRC.PATH_RAW) : 0) |
    (NEWPATH_ARG.has(name) ? NRC.NEWPATH : 0) |
    (mode ? ((mode[0] === 6 ? 7 : mode[0] + 1) << NRC.MODE_SHIFT) | ((['chmod', 'open', 'hex'].indexOf(mode[1]) + 1) << NRC.MODEFMT_SHIFT) : 0) |
    (fd ? (fd === 'ret' ? 1 : 2) << NRC.FDARG_SHIFT : 0) |
    (name === 'setuid' ? NRC.SETUID : 0) |
    (name === 'bpf' ? NRC.BPF : 0) |
    (DIRFD_ARG.has(name) ? NRC.DIRFD : 0) |
    (LINKPATH_ARG.has(name) ? NRC.LINKPATH : 0) |
    (hasResArg(name) ? NRC.RES : 0) |
    (DATA_ARG.has(name) ? IABI.NRC_DATA : 0)
  );
});
