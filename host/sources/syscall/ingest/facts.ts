// The facts of one SYSCALL record that several field classes read (context.ts Facts): its
// syscall's name and class bits, fd.name (a relative path joined with the record's directory and
// normalized as posix.normalize does), the open flags, the socket ends by side. Consumes the
// kernel record (host/abi/records.ts layout); writes a joined or normalized fd.name into the
// string area. probes/addon/ingest.c facts() is the native twin.
import { posix } from 'node:path';
import { HDR, SOCKADDR, SYSCALL } from '../../../abi/records.js';
import { O_DIRECTORY, OPENS, SERVER_SIDE, serverSocket } from '../fields.js';
import { NR_SYSCALLS } from '../syscalls.js';
import type { IngestContext } from './context.js';
import { NAMES, NR_CLASS } from './syscall-class.js';

/** Whether an absolute path would change under posix.normalize ('//', '.' or '..' components). */
export function needsNormalize(b: Uint8Array, at: number, len: number): boolean {
  if (b[at] !== 47) return false;
  for (let i = at; i + 1 < at + len; i++) if (b[i] === 47 && (b[i + 1] === 47 || b[i + 1] === 46)) return true;
  return false;
}

/** The mode parameter of a MODE_ARG entry: argument `i`, or openat2's how.mode (i = 6, aux[1]). */
export function modeArg(vd: DataView, off: number, i: number): number {
  return vd.getUint32(off + (i === 6 ? SYSCALL.aux + 8 : SYSCALL.args + 8 * i), true);
}

/** Fills c.f with the facts of the SYSCALL record at `off` (syscall number `nr`); f.thread is the caller's. */
export function readFacts(c: IngestContext, view: Uint8Array, vd: DataView, off: number, nr: number): void {
  const f = c.f;
  const name = nr < NR_SYSCALLS ? NAMES[nr]! : '';
  fdNameFacts(c, view, vd, off);
  const flagsAt = name === 'openat2' ? SYSCALL.aux : name === 'open' ? SYSCALL.args + 8 : name === 'openat' || name === 'unlinkat' ? SYSCALL.args + 16 : name === 'linkat' ? SYSCALL.args + 32 : name === 'socket' ? SYSCALL.args : -1;
  f.flags = name === 'creat' ? 0x241 : flagsAt >= 0 ? vd.getUint32(off + flagsAt, true) : 0;
  const server = SERVER_SIDE.has(name);
  f.name = name;
  f.cls = nr < NR_SYSCALLS ? NR_CLASS[nr]! : 0;
  f.ret = Number(vd.getBigInt64(off + HDR.ret, true));
  f.file = OPENS.has(name);
  f.dirFlag = (f.flags & O_DIRECTORY) !== 0;
  f.client = off + (server ? SYSCALL.peer : SYSCALL.local);
  f.server = off + (server ? SYSCALL.local : SYSCALL.peer);
  f.local = off + SYSCALL.local;
  f.peer = off + SYSCALL.peer;
  f.fam = vd.getUint16(off + SYSCALL.peer + SOCKADDR.family, true) || vd.getUint16(off + SYSCALL.local + SOCKADDR.family, true);
  // a bound socket: the local end is the server's, the other ends have no value (-1)
  f.servSock = serverSocket(name, f.ret, vd.getUint16(off + SYSCALL.local + SOCKADDR.family, true), vd.getUint16(off + SYSCALL.local + SOCKADDR.port, true));
  if (f.servSock) {
    f.server = f.local;
    f.client = f.local = f.peer = -1;
  }
}

/** f.fdName/fdLen (a range of the kernel view until first used, or the joined path in the string area) and f.rawOff/rawLen. */
function fdNameFacts(c: IngestContext, view: Uint8Array, vd: DataView, off: number): void {
  const f = c.f;
  const po = vd.getUint16(off + SYSCALL.path, true);
  const pl = vd.getUint16(off + SYSCALL.path + 2, true);
  const d0 = vd.getUint16(off + SYSCALL.dir, true);
  const dl = vd.getUint16(off + SYSCALL.dir + 2, true);
  f.rawOff = po ? off + po : 0;
  f.rawLen = pl;
  f.fdName = 0;
  f.fdLen = 0;
  if (po !== 0) {
    if (view[off + po] === 47 || d0 === 0) {
      f.fdName = -(off + po) - 1; // a range in the kernel view, copied on first use
      f.fdLen = pl;
    } else {
      const slash = dl > 0 && view[off + d0 + dl - 1] === 47 ? 0 : 1;
      const at = c.alloc(dl + slash + pl);
      if (at !== 0) {
        c.u8.set(view.subarray(off + d0, off + d0 + dl), at);
        if (slash) c.u8[at + dl] = 47;
        c.u8.set(view.subarray(off + po, off + po + pl), at + dl + slash);
        f.fdName = at;
        f.fdLen = dl + slash + pl;
      }
    }
  }
  if (f.fdLen > 0 && needsNormalize(f.fdName < 0 ? view : c.u8, f.fdName < 0 ? -f.fdName - 1 : f.fdName, f.fdLen)) {
    const from = f.fdName < 0 ? view.subarray(-f.fdName - 1, -f.fdName - 1 + f.fdLen) : c.u8.subarray(f.fdName, f.fdName + f.fdLen);
    const norm = Buffer.from(posix.normalize(Buffer.from(from).toString('latin1')), 'latin1');
    const at = c.alloc(norm.length);
    f.fdName = at;
    f.fdLen = at === 0 ? 0 : norm.length;
    if (at !== 0) c.u8.set(norm, at);
  }
}
