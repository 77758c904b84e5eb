// Field access over one SYSCALL wire record in the poll buffer plus the process table: the
// EventAccessor the detection engine reads while it evaluates the batch (synchronously, so the
// record bytes are still in place). Values are computed on demand from the record (raw
// arguments, return value, path strings, socket addresses) and the ProcInfo captured when the
// record was read; they follow host/sources/field-event.ts and libsinsp's renderings (render.ts).
// An accessor must not be used after the batch's evaluate() returned: the buffer is reused.
import { posix } from 'node:path';
import type { EventAccessor, RawValue } from '../../engine/interpreter.js';
import type { FieldRef } from '../../engine/ir.js';
import { AF, HDR, SYSCALL } from './abi.js';
import { sockaddr, type SockAddr } from './decode.js';
import { atFlags, chmodMode, DIRFD_ARG, errnoName, FD_ARG, fdText, hasResArg, hexMode, LINKPATH_ARG, MODE_ARG, NEWPATH_ARG, openFlags, openMode, openReads, openWrites, PATH_ARG, ptraceRequest, resArgText, resText, SOCK, socketDomain, uidText } from './render.js';
import { argsText, cmdlineText, type ProcessTable, type ProcInfo } from './state.js';
import { capsText } from './caps.js';
import type { UserNames } from './users.js';

/** What every event of a source shares. */
export interface EventContext {
  table: ProcessTable;
  names: UserNames;
  hostname: string;
}

const ANCESTOR_BASE: Record<string, string> = { 'proc.aname': 'proc.name', 'proc.aexe': 'proc.exe', 'proc.aexepath': 'proc.exepath', 'proc.apid': 'proc.pid', 'proc.acmdline': 'proc.cmdline' };
const PARENT_BASE: Record<string, string> = { 'proc.pname': 'proc.name', 'proc.pexe': 'proc.exe', 'proc.pexepath': 'proc.exepath', 'proc.ppid': 'proc.pid', 'proc.pcmdline': 'proc.cmdline' };
const MAX_DEPTH = 16;
const OPEN = new Set(['open', 'openat', 'openat2', 'creat']);
/** Syscalls whose first argument is the socket fd the record's addresses belong to. */
const SOCK_ARG0 = new Set(['connect', 'sendto', 'sendmsg', 'recvfrom', 'recvmsg', 'bind', 'listen', 'shutdown', 'getsockopt', 'setsockopt']);

/** Executed through an fd whose file lives on no mounted path: the probe's exepath walk yields
 * only `/` for a memfd (its dentry sits at the root of the kernel's internal shmem mount). */
const FD_PATH = /^\/(?:proc\/(?:self|\d+)\/fd|dev\/fd)\/\d+$/;
function isMemfdExe(p: ProcInfo): boolean {
  return p.exepath.startsWith('memfd:') || p.exepath.startsWith('/memfd:') || (p.exepath === '/' && FD_PATH.test(p.execPath));
}

/** A process field of `p` (proc.name, proc.exe, ...). */
function procField(p: ProcInfo, name: string): RawValue | undefined {
  switch (name) {
    case 'proc.name': return p.comm;
    case 'proc.exe': return p.exe;
    case 'proc.exepath': return p.exepath;
    case 'proc.cmdline': return cmdlineText(p);
    case 'proc.args': return argsText(p);
    case 'proc.pid': return p.pid;
    case 'proc.vpid': return p.vpid;
    case 'proc.cwd': return p.cwd.endsWith('/') ? p.cwd : `${p.cwd}/`;
    case 'proc.tty': return p.tty;
    case 'proc.sid': return p.sid;
    case 'proc.vpgid': return p.pgid;
    case 'proc.is_exe_writable': return p.exeWritable;
    case 'proc.is_exe_from_memfd': return isMemfdExe(p);
    case 'proc.is_exe_upper_layer': return false;
    case 'user.loginuid': return p.loginuid | 0;
    case 'container.id': return p.containerId;
    case 'container.name': return p.containerId === 'host' ? 'host' : undefined;
    case 'thread.cap_inheritable': return capsText(p.capInheritable);
    case 'thread.cap_permitted': return capsText(p.capPermitted);
    case 'thread.cap_effective': return capsText(p.capEffective);
    default: return undefined;
  }
}

/**
 * The fields SyscallEvent answers (any evt.arg.* too, and the parent/ancestor forms of the proc
 * fields): the objects path's side of `rae run`'s choice between the paths (source.ts).
 */
export const EVENT_FIELDS: readonly string[] = [
  'proc.name', 'proc.exe', 'proc.exepath', 'proc.cmdline', 'proc.args', 'proc.pid', 'proc.vpid', 'proc.cwd', 'proc.tty', 'proc.sid',
  'proc.vpgid', 'proc.is_exe_writable', 'proc.is_exe_from_memfd', 'proc.is_exe_upper_layer', 'user.loginuid', 'container.id',
  'container.name', 'proc.sname', 'proc.duration', 'proc.ppid', ...Object.keys(ANCESTOR_BASE), ...Object.keys(PARENT_BASE),
  'evt.type', 'evt.time', 'evt.rawtime', 'evt.num', 'evt.dir', 'evt.source', 'evt.hostname', 'evt.res', 'evt.rawres', 'evt.failed',
  'evt.is_open_read', 'evt.is_open_write', 'evt.is_open_exec', 'thread.tid', 'user.uid', 'user.name', 'user.loginname', 'group.gid',
  'group.name', 'fd.num', 'fd.name', 'fd.nameraw', 'fd.typechar', 'fd.type', 'fd.directory', 'fd.filename', 'fd.sockfamily',
  'fd.l4proto', 'fd.connected', 'fd.name_changed', 'fd.cip', 'fd.cnet', 'fd.sip', 'fd.snet', 'fd.lip', 'fd.lnet', 'fd.rip', 'fd.rnet',
  'fd.cport', 'fd.sport', 'fd.lport', 'fd.rport', 'fd.ip', 'fd.net', 'fd.port',
  'thread.cap_inheritable', 'thread.cap_permitted', 'thread.cap_effective',
];

/** Field access for one SYSCALL record. */
export class SyscallEvent implements EventAccessor {
  private resolvedPath: string | undefined | null = null;

  constructor(
    private readonly ctx: EventContext,
    private readonly view: Uint8Array,
    private readonly dv: DataView,
    private readonly off: number,
    readonly type: string,
    readonly proc: ProcInfo | undefined,
    readonly timeNs: bigint,
    readonly num: number,
  ) {}

  private u32(at: number): number {
    return this.dv.getUint32(this.off + at, true);
  }

  get ret(): number {
    return Number(this.dv.getBigInt64(this.off + HDR.ret, true));
  }

  /** Raw argument `i` as a signed number (fds, flags and small values fit). */
  arg(i: number): number {
    return Number(this.dv.getBigInt64(this.off + SYSCALL.args + 8 * i, true));
  }

  private str(at: number): string | undefined {
    const soff = this.dv.getUint16(this.off + at, true);
    const slen = this.dv.getUint16(this.off + at + 2, true);
    if (soff === 0 && slen === 0) return undefined;
    return Buffer.from(this.view.buffer, this.view.byteOffset + this.off + soff, slen).toString('utf8');
  }

  /** A path argument made absolute against its directory (or the process's cwd) and normalised. */
  private resolve(pathAt: number, dirAt: number): string | undefined {
    const p = this.str(pathAt);
    if (p === undefined || p === '') return p;
    if (p.startsWith('/')) return posix.normalize(p);
    const dir = this.str(dirAt) ?? this.proc?.cwd;
    return dir ? posix.join(dir, p) : p;
  }

  private path(): string | undefined {
    if (this.resolvedPath === null) this.resolvedPath = this.resolve(SYSCALL.path, SYSCALL.dir);
    return this.resolvedPath;
  }

  private openFlagsRaw(): number {
    switch (this.type) {
      case 'open': return this.arg(1);
      case 'openat': return this.arg(2);
      case 'openat2': return Number(this.dv.getBigUint64(this.off + SYSCALL.aux, true));
      default: return 0o1101; // creat: O_WRONLY|O_CREAT|O_TRUNC
    }
  }

  private openMode(): number {
    switch (this.type) {
      case 'open': return this.arg(2);
      case 'openat': return this.arg(3);
      case 'openat2': return Number(this.dv.getBigUint64(this.off + SYSCALL.aux + 8, true));
      default: return this.arg(1);
    }
  }

  private sock(at: number): SockAddr {
    return sockaddr(this.dv, this.off + at);
  }

  /** Client and server ends: connect/send: local -> peer; accept: peer -> local. */
  private ends(): { client: SockAddr; server: SockAddr } {
    const peer = this.sock(SYSCALL.peer);
    const local = this.sock(SYSCALL.local);
    return this.type === 'accept' || this.type === 'accept4' ? { client: peer, server: local } : { client: local, server: peer };
  }

  private family(): number {
    return this.sock(SYSCALL.peer).family || this.sock(SYSCALL.local).family;
  }

  private isSocket(): boolean {
    return SOCK_ARG0.has(this.type) || this.type === 'accept' || this.type === 'accept4' || this.type === 'socket';
  }

  private fdNum(): number | undefined {
    if (OPEN.has(this.type) || this.type === 'accept' || this.type === 'accept4' || this.type === 'socket' || this.type === 'memfd_create' || this.type.startsWith('dup')) {
      const r = this.ret;
      return r < 0 ? -1 : r;
    }
    if (SOCK_ARG0.has(this.type) || this.type === 'fchmod' || this.type === 'fchdir') return this.arg(0);
    return undefined;
  }

  private sockType(): number | undefined {
    if (this.type === 'socket') return this.arg(1) & 0xf;
    const wire = this.u32(SYSCALL.sock_type) & 0xf; // the probe read the socket's type
    if (wire !== 0) return wire;
    const fd = this.type === 'accept' || this.type === 'accept4' ? this.arg(0) : this.fdNum();
    if (fd === undefined || !this.proc) return undefined;
    return this.ctx.table.socket(this.proc.pid, fd)?.type ?? (this.type === 'accept' || this.type === 'accept4' ? SOCK.STREAM : undefined);
  }

  private typechar(): string | undefined {
    if (OPEN.has(this.type)) return (this.openFlagsRaw() & 0o200000) !== 0 ? 'd' : 'f';
    if (this.type === 'memfd_create') return 'm';
    if (this.type === 'socket') {
      const d = this.arg(0);
      return d === AF.INET ? '4' : d === AF.INET6 ? '6' : d === AF.UNIX ? 'u' : 'o';
    }
    if (!this.isSocket()) return undefined;
    const f = this.family();
    return f === AF.INET ? '4' : f === AF.INET6 ? '6' : f === AF.UNIX ? 'u' : undefined;
  }

  private fdName(): string | undefined {
    if (OPEN.has(this.type)) return this.path();
    if (this.type === 'memfd_create') return `memfd:${this.str(SYSCALL.path) ?? ''}`;
    if (!this.isSocket()) return undefined;
    const f = this.family();
    if (f === AF.UNIX) return this.str(SYSCALL.path);
    if (f !== AF.INET && f !== AF.INET6) return undefined;
    const { client, server } = this.ends();
    const ep = (s: SockAddr) => (s.family === AF.INET6 ? `${s.addr || '::'}:${s.port}` : `${s.addr || '0.0.0.0'}:${s.port}`);
    return `${ep(client)}->${ep(server)}`;
  }

  /**
   * A path parameter as libsinsp's evt.arg renders PT_FSPATH/PT_FSRELPATH (render.ts): an
   * absolute or empty path as passed, a relative one joined with its directory (the record's, else
   * the process's cwd) and normalised; `resolved` false (PT_CHARBUF) keeps it as passed.
   */
  private argPath(pathAt: number, dirAt: number, resolved: boolean): string | undefined {
    const p = this.str(pathAt);
    if (p === undefined || p === '' || p.startsWith('/') || !resolved) return p;
    const dir = this.str(dirAt) ?? this.proc?.cwd;
    return dir ? posix.join(dir, p) : p;
  }

  /** evt.arg.NAME: the syscall's parameter of that name as libsinsp renders it (render.ts), undefined when it has none. */
  private evtArg(name: string | undefined): RawValue | undefined {
    const t = this.type;
    switch (name) {
      case 'res': return hasResArg(t) ? resArgText(this.ret, errnoName) : undefined;
      case 'fd': {
        const from = FD_ARG[t];
        return from === undefined ? undefined : fdText(from === 'ret' ? this.ret : this.arg(0) | 0, errnoName);
      }
      case 'flags':
        if (OPEN.has(t)) return openFlags(this.openFlagsRaw());
        if (t === 'unlinkat' || t === 'fchmodat' || t === 'linkat') return atFlags(this.arg(t === 'linkat' ? 4 : 2));
        return String(this.arg(t === 'memfd_create' ? 1 : t === 'unshare' ? 0 : 1));
      case 'mode': {
        const m = MODE_ARG[t];
        if (m === undefined) return undefined;
        const v = m[0] === 6 ? this.openMode() : this.arg(m[0]);
        return m[1] === 'chmod' ? chmodMode(v) : m[1] === 'open' ? openMode(this.openFlagsRaw(), v) : hexMode(v);
      }
      case 'name':
      case 'path':
      case 'filename':
      case 'oldpath': {
        const p = PATH_ARG[t];
        return p !== undefined && p[0] === name ? this.argPath(SYSCALL.path, SYSCALL.dir, p[1]) : undefined;
      }
      case 'newpath': return NEWPATH_ARG.has(t) ? this.argPath(SYSCALL.path2, SYSCALL.dir2, true) : undefined;
      case 'linkpath': return LINKPATH_ARG.has(t) ? this.argPath(SYSCALL.path2, SYSCALL.dir2, true) : undefined;
      case 'target': return this.str(SYSCALL.path);
      case 'request': return t === 'ptrace' ? ptraceRequest(this.arg(0)) : undefined;
      case 'pid': return t === 'ptrace' ? String(this.arg(1) | 0) : undefined;
      case 'domain': return t === 'socket' ? socketDomain(this.arg(0)) : undefined;
      case 'uid': return t === 'setuid' ? uidText(this.u32(SYSCALL.args), this.ctx.names.user(this.u32(SYSCALL.args))) : undefined;
      case 'cmd': return t === 'bpf' ? String(this.arg(0) | 0) : undefined;
      case 'dirfd': return DIRFD_ARG.has(t) ? fdText(this.arg(0) | 0, errnoName) : undefined;
      default: return undefined;
    }
  }

  private ancestor(base: string, arg: string | undefined): RawValue | undefined {
    const p = this.proc;
    if (!p) return undefined;
    if (arg === undefined) {
      const out: Array<string | number> = [];
      let cur = this.ctx.table.ancestor(p, 1);
      for (let i = 0; cur && i < MAX_DEPTH; i++, cur = this.ctx.table.ancestor(cur, 1)) {
        const v = procField(cur, base);
        if (typeof v === 'string' || typeof v === 'number') out.push(v);
      }
      return out;
    }
    const n = Number(arg);
    if (!Number.isInteger(n) || n < 0) return undefined;
    const a = this.ctx.table.ancestor(p, n);
    return a ? procField(a, base) : undefined;
  }

  field(ref: FieldRef): RawValue | undefined {
    const name = ref.def.name;
    const p = this.proc;
    if (name.startsWith('proc.') || name === 'user.loginuid' || name.startsWith('container.')) {
      const anc = ANCESTOR_BASE[name];
      if (anc) return this.ancestor(anc, ref.arg);
      const parent = PARENT_BASE[name];
      if (parent) return p ? (name === 'proc.ppid' ? p.ppid : this.ancestor(parent, '1')) : undefined;
      if (!p) return undefined;
      if (name === 'proc.sname') return this.ctx.table.get(p.sid)?.comm;
      if (name === 'proc.duration') return Number(this.dv.getBigUint64(this.off + HDR.ts_ns, true) - p.startNs);
      return procField(p, name);
    }
    switch (name) {
      case 'evt.type': return this.type;
      case 'evt.time':
      case 'evt.rawtime': return this.timeNs;
      case 'evt.num': return this.num;
      case 'evt.dir': return '<';
      case 'evt.source': return 'syscall';
      case 'evt.hostname': return this.ctx.hostname;
      case 'evt.res': return resText(this.ret);
      case 'evt.rawres': return this.ret;
      case 'evt.failed': return this.ret < 0;
      case 'evt.arg': return this.evtArg(ref.arg);
      case 'evt.is_open_read': return OPEN.has(this.type) && openReads(this.openFlagsRaw());
      case 'evt.is_open_write': return OPEN.has(this.type) && openWrites(this.openFlagsRaw());
      case 'evt.is_open_exec': return false;
      case 'thread.tid': return this.u32(HDR.tid);
      case 'thread.cap_inheritable':
      case 'thread.cap_permitted':
      case 'thread.cap_effective': return p ? procField(p, name) : undefined;
      case 'user.uid': return this.u32(HDR.uid);
      case 'user.name': return this.ctx.names.user(this.u32(HDR.uid));
      case 'user.loginname': return p && p.loginuid !== 0xffffffff ? this.ctx.names.user(p.loginuid) : undefined;
      case 'group.gid': return this.u32(HDR.gid);
      case 'group.name': return this.ctx.names.group(this.u32(HDR.gid));
      default: return this.fdField(name);
    }
  }

  private fdField(name: string): RawValue | undefined {
    switch (name) {
      case 'fd.num': return this.fdNum();
      case 'fd.name': return this.fdName();
      case 'fd.nameraw': return OPEN.has(this.type) ? this.str(SYSCALL.path) : this.fdName();
      case 'fd.typechar': return this.typechar();
      case 'fd.type': {
        const c = this.typechar();
        return c === undefined ? undefined : ({ f: 'file', d: 'directory', '4': 'ipv4', '6': 'ipv6', u: 'unix', m: 'memfd' } as Record<string, string>)[c] ?? 'unknown';
      }
      case 'fd.directory':
      case 'fd.filename': {
        if (!OPEN.has(this.type)) return undefined;
        const n = this.path();
        if (n === undefined) return undefined;
        return name === 'fd.directory' ? posix.dirname(n) : posix.basename(n);
      }
      case 'fd.sockfamily': {
        const c = this.typechar();
        return c === '4' || c === '6' ? 'ip' : c === 'u' ? 'unix' : undefined;
      }
      case 'fd.l4proto': {
        const c = this.typechar();
        if (c !== '4' && c !== '6') return undefined;
        const st = this.sockType();
        return st === SOCK.STREAM ? 'tcp' : st === SOCK.DGRAM ? 'udp' : st === SOCK.RAW ? 'raw' : undefined;
      }
      case 'fd.connected': return this.type === 'connect' ? this.ret >= 0 || this.ret === -115 : this.type === 'accept' || this.type === 'accept4';
      case 'fd.name_changed': return (this.type === 'sendto' || this.type === 'sendmsg') && this.sock(SYSCALL.peer).family !== 0;
      default: return this.netField(name);
    }
  }

  private netField(name: string): RawValue | undefined {
    const c = this.typechar();
    if (c !== '4' && c !== '6') return undefined;
    const { client, server } = this.ends();
    const accept = this.type === 'accept' || this.type === 'accept4';
    const local = accept ? server : client;
    const remote = accept ? client : server;
    const ip = (s: SockAddr) => (s.family ? s.addr : undefined);
    const port = (s: SockAddr) => (s.family ? s.port : undefined);
    switch (name) {
      case 'fd.cip': case 'fd.cnet': return ip(client);
      case 'fd.sip': case 'fd.snet': return ip(server);
      case 'fd.lip': case 'fd.lnet': return ip(local);
      case 'fd.rip': case 'fd.rnet': return ip(remote);
      case 'fd.cport': return port(client);
      case 'fd.sport': return port(server);
      case 'fd.lport': return port(local);
      case 'fd.rport': return port(remote);
      case 'fd.ip': case 'fd.net': return [ip(client), ip(server)].filter((v): v is string => v !== undefined);
      case 'fd.port': return [port(client), port(server)].filter((v): v is number => v !== undefined);
      default: return undefined;
    }
  }
}
