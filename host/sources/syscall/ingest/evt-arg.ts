// The evt.arg.* field class of the kernel ingest: the syscall's parameters as libsinsp names and
// prints them (render.ts; sinsp_filtercheck_event TYPE_ARGSTR), written into an eval record's slot
// from the SYSCALL record, its facts (context.ts) and its class bits (syscall-class.ts). evt.arg.uid
// prints the user's name from the thread table, which the native translator does not have: it
// leaves setuid records to this file's translator when a rule reads it. ingest-arg.c is the
// native twin of the rest.
import { posix } from 'node:path';
import { THREAD, TP } from '../../../abi/module.js';
import { SYSCALL } from '../../../abi/records.js';
import { ERRNO } from '../fields.js';
import { atFlags, chmodMode, execveFlags, FD_ARG, fdText, hexMode, MODE_ARG, openFlags, openMode, ptraceRequest, resArgText, socketDomain, uidText } from '../render.js';
import type { IngestContext } from './context.js';
import { modeArg, needsNormalize } from './facts.js';
import { F, IABI, NRC } from './ingest-abi.js';

/** The fields of this class. */
export const EVT_ARG_FIELDS: readonly number[] = [
  F.ARG_FLAGS,
  F.ARG_TARGET,
  F.ARG_NAME,
  F.ARG_PATH,
  F.ARG_FILENAME,
  F.ARG_OLDPATH,
  F.ARG_NEWPATH,
  F.ARG_MODE,
  F.ARG_FD,
  F.ARG_UID,
  F.ARG_CMD,
  F.ARG_PID,
  F.ARG_DIRFD,
  F.ARG_RES,
  F.ARG_LINKPATH,
  F.ARG_DOMAIN,
  F.ARG_REQUEST,
];

/** The field of each path-parameter kind (NRC.PATHARG_SHIFT: 1 name, 2 path, 3 filename, 4 oldpath). */
const PATH_FIELD = [0, F.ARG_NAME, F.ARG_PATH, F.ARG_FILENAME, F.ARG_OLDPATH] as const;
/** A negative return value or argument's errno name (render.ts fdText, resArgText). */
const errnoName = (e: number): string | undefined => ERRNO[e];
/** The record's first argument as an int (a file descriptor, a bpf command). */
const arg0 = (vd: DataView, off: number): number => vd.getInt32(off + SYSCALL.args, true);

/**
 * evt.arg.flags of execve/execveat: the thread entry's EXE_* flags, the new image's after a success
 * (the EXEC record set them before this exit record: source.ts cuts a batch before an EXEC), the
 * calling image's after a failure, as the drivers send (libs execveX_failure: PPM_EXE_WRITABLE of
 * the test program). A thread entry without them gives none (<NA>).
 */
function execFlags(c: IngestContext, to: number): boolean {
  const { thread } = c.f;
  const md = c.memDv;
  if (thread === 0 || (md.getUint32(thread + THREAD.present, true) & TP.EXE_WRITABLE) === 0) return false;
  return c.constant(execveFlags(md.getUint32(thread + THREAD.flags, true)), to);
}

/** Writes the 8 bytes of evt.arg field `field` at `to`; false when the record does not provide it. */
export function evtArgValue(c: IngestContext, field: number, view: Uint8Array, vd: DataView, off: number, to: number): boolean {
  const f = c.f;
  switch (field) {
    case F.ARG_FLAGS:
      if (f.name === 'unlinkat' || f.name === 'linkat') return c.constant(atFlags(f.flags), to);
      if (f.name === 'execve' || f.name === 'execveat') return execFlags(c, to);
      return f.file && c.constant(openFlags(f.flags), to);
    case F.ARG_TARGET:
      return f.rawOff !== 0 && c.copyRange(view, f.rawOff, f.rawLen, to);
    case F.ARG_NAME:
    case F.ARG_PATH:
    case F.ARG_FILENAME:
    case F.ARG_OLDPATH:
      // the syscall's path parameter: a relative one resolved like fd.name, else as passed
      if (PATH_FIELD[(f.cls >> NRC.PATHARG_SHIFT) & 7] !== field || f.rawOff === 0) return false;
      if ((f.cls & NRC.PATH_RAW) === 0 && f.rawLen > 0 && view[f.rawOff] !== 47) return c.fdName(view, to);
      return c.copyRange(view, f.rawOff, f.rawLen, to);
    case F.ARG_NEWPATH:
      return (f.cls & NRC.NEWPATH) !== 0 && newPath(c, view, vd, off, to);
    case F.ARG_LINKPATH:
      return (f.cls & NRC.LINKPATH) !== 0 && newPath(c, view, vd, off, to);
    case F.ARG_MODE: {
      const m = MODE_ARG[f.name];
      if (m === undefined) return false;
      const v = modeArg(vd, off, m[0]);
      return c.constant(m[1] === 'chmod' ? chmodMode(v) : m[1] === 'open' ? openMode(f.flags, v) : hexMode(v), to);
    }
    case F.ARG_FD: {
      const k = FD_ARG[f.name];
      return k !== undefined && c.constant(fdText(k === 'ret' ? f.ret : arg0(vd, off), errnoName), to);
    }
    case F.ARG_UID: {
      if (f.name !== 'setuid') return false;
      const uid = vd.getUint32(off + SYSCALL.args, true);
      return c.constant(uidText(uid, c.threads.userName(uid)), to);
    }
    case F.ARG_CMD:
      return f.name === 'bpf' && c.constant(String(arg0(vd, off)), to);
    case F.ARG_PID:
      return (f.cls & IABI.NRC_PTRACE) !== 0 && c.constant(String(vd.getInt32(off + SYSCALL.args + 8, true)), to);
    case F.ARG_DIRFD:
      return (f.cls & NRC.DIRFD) !== 0 && c.constant(fdText(arg0(vd, off), errnoName), to);
    case F.ARG_RES:
      return (f.cls & NRC.RES) !== 0 && c.constant(resArgText(f.ret, errnoName), to);
    case F.ARG_DOMAIN:
      return f.name === 'socket' && c.constant(socketDomain(Number(vd.getBigInt64(off + SYSCALL.args, true))), to);
    case F.ARG_REQUEST:
      return f.name === 'ptrace' && c.constant(ptraceRequest(Number(vd.getBigInt64(off + SYSCALL.args, true))), to);
    default:
      return false;
  }
}

/** evt.arg.newpath (and linkpath): the second path, a relative one joined with dir2 and normalized as fd.name is. */
function newPath(c: IngestContext, view: Uint8Array, vd: DataView, off: number, to: number): boolean {
  const po = vd.getUint16(off + SYSCALL.path2, true);
  const pl = vd.getUint16(off + SYSCALL.path2 + 2, true);
  const d0 = vd.getUint16(off + SYSCALL.dir2, true);
  const dl = vd.getUint16(off + SYSCALL.dir2 + 2, true);
  if (po === 0) return false;
  if (pl === 0 || view[off + po] === 47 || d0 === 0) return c.copyRange(view, off + po, pl, to);
  const slash = dl > 0 && view[off + d0 + dl - 1] === 47 ? 0 : 1;
  const n = dl + slash + pl;
  const at = c.alloc(n);
  if (at === 0) return false;
  c.u8.set(view.subarray(off + d0, off + d0 + dl), at);
  if (slash) c.u8[at + dl] = 47;
  c.u8.set(view.subarray(off + po, off + po + pl), at + dl + slash);
  if (c.u8[at] !== 47 || !needsNormalize(c.u8, at, n)) return c.ref(to, at, n);
  const norm = Buffer.from(posix.normalize(Buffer.from(c.u8.subarray(at, at + n)).toString('latin1')), 'latin1');
  const nat = c.alloc(norm.length);
  if (nat === 0) return false;
  c.u8.set(norm, nat);
  return c.ref(to, nat, norm.length);
}
