// The syscall source's byte path: kernel wire records (probes/src/events.h) as the capture addon
// copies them, turned into eval records in a module's batch region without a JS object per
// event. PROC/EXEC/FORK/EXIT records update the persistent thread table (thread-table.ts); each
// SYSCALL record becomes one eval record whose slots (the module's layout) are filled from the
// record's numbers and byte ranges, its `thread` pointing at the process's entry. Only matched
// events are later decoded into objects (fieldsOf) for alert formatting.
// Fields the kernel record provides: evt.type, evt.num, evt.rawres, evt.res, evt.failed, fd.num,
// fd.name/nameraw/directory/filename, fd.type/typechar/sockfamily, evt.is_open_read/write/create,
// fd.sip/cip/lip/rip, fd.sport/cport/lport/rport, fd.ip/port/net and the networks; process
// fields come from the thread entry. Any other field is missing for kernel events.
import type { Slot } from '../engine/codegen/index.js';
import { decodeRecord, type SockAddr } from '../sources/syscall/decode.js';
import { AF, HDR, KIND, SOCKADDR, SYSCALL } from '../sources/syscall/abi.js';
import { NR_SYSCALLS, syscallName } from '../sources/syscall/syscalls.js';
import { evtTypeId, MEM, REC, THREAD, TP } from './abi.js';
import type { RuleModule } from './evaluator.js';
import { ThreadTable } from './thread-table.js';

const F = {
  NUM: 1, RAWRES: 2, RES: 3, FAILED: 4, FDNUM: 5, NAME: 6, NAMERAW: 7, DIR: 8, FILE: 9, TYPECHAR: 10, TYPE: 11,
  READ: 12, WRITE: 13, CREATE: 14, SIP: 15, CIP: 16, LIP: 17, RIP: 18, SPORT: 19, CPORT: 20, LPORT: 21, RPORT: 22,
  IPS: 23, PORTS: 24, FAMILY: 25,
} as const;
const BY_FIELD: Record<string, number> = {
  'evt.num': F.NUM, 'evt.rawres': F.RAWRES, 'evt.res': F.RES, 'evt.failed': F.FAILED, 'fd.num': F.FDNUM,
  'fd.name': F.NAME, 'fd.nameraw': F.NAMERAW, 'fd.directory': F.DIR, 'fd.filename': F.FILE, 'fd.typechar': F.TYPECHAR,
  'fd.type': F.TYPE, 'evt.is_open_read': F.READ, 'evt.is_open_write': F.WRITE, 'evt.is_open_create': F.CREATE,
  'fd.sip': F.SIP, 'fd.cip': F.CIP, 'fd.lip': F.LIP, 'fd.rip': F.RIP, 'fd.snet': F.SIP, 'fd.cnet': F.CIP,
  'fd.lnet': F.LIP, 'fd.rnet': F.RIP, 'fd.sport': F.SPORT, 'fd.cport': F.CPORT, 'fd.lport': F.LPORT,
  'fd.rport': F.RPORT, 'fd.ip': F.IPS, 'fd.net': F.IPS, 'fd.port': F.PORTS, 'fd.sockfamily': F.FAMILY,
};
const ERRNO: Record<number, string> = {
  1: 'EPERM', 2: 'ENOENT', 3: 'ESRCH', 4: 'EINTR', 5: 'EIO', 6: 'ENXIO', 7: 'E2BIG', 8: 'ENOEXEC', 9: 'EBADF', 10: 'ECHILD',
  11: 'EAGAIN', 12: 'ENOMEM', 13: 'EACCES', 14: 'EFAULT', 16: 'EBUSY', 17: 'EEXIST', 18: 'EXDEV', 19: 'ENODEV', 20: 'ENOTDIR',
  21: 'EISDIR', 22: 'EINVAL', 23: 'ENFILE', 24: 'EMFILE', 25: 'ENOTTY', 26: 'ETXTBSY', 27: 'EFBIG', 28: 'ENOSPC', 29: 'ESPIPE',
  30: 'EROFS', 31: 'EMLINK', 32: 'EPIPE', 36: 'ENAMETOOLONG', 38: 'ENOSYS', 39: 'ENOTEMPTY', 40: 'ELOOP', 95: 'EOPNOTSUPP',
  97: 'EAFNOSUPPORT', 98: 'EADDRINUSE', 99: 'EADDRNOTAVAIL', 101: 'ENETUNREACH', 104: 'ECONNRESET', 110: 'ETIMEDOUT',
  111: 'ECONNREFUSED', 113: 'EHOSTUNREACH', 115: 'EINPROGRESS',
};
const OPENS = new Set(['open', 'openat', 'openat2', 'creat']);
const FD_FROM_RET = new Set([...OPENS, 'socket', 'accept', 'accept4', 'dup', 'dup2', 'dup3', 'memfd_create']);
const FD_FROM_ARG0 = new Set(['connect', 'sendto', 'recvfrom', 'sendmsg', 'recvmsg', 'bind', 'listen', 'close', 'shutdown', 'setsockopt', 'getsockopt', 'fchdir', 'fchmod', 'fcntl']);
const SERVER_SIDE = new Set(['accept', 'accept4']);
const O_ACCMODE = 3;
const O_CREAT = 0x40;
const O_DIRECTORY = 0x10000;

/** Per-syscall-number facts, computed once. */
const TYPE_IDS = Int32Array.from({ length: NR_SYSCALLS }, (_, nr) => evtTypeId(syscallName(nr) || undefined));
const NAMES = Array.from({ length: NR_SYSCALLS }, (_, nr) => syscallName(nr));

interface Plan {
  slots: Array<{ slot: Slot; field: number }>;
  stride: number;
}

/** What one syscall record says, read once (numbers and byte ranges only). */
interface Facts {
  name: string;
  ret: bigint;
  /** fd.name bytes: an absolute range (record-relative offsets), or joined into the heap. */
  fdName: number;
  fdLen: number;
  rawOff: number;
  rawLen: number;
  file: boolean;
  dirFlag: boolean;
  flags: number;
  client: number;
  server: number;
}

/** Turns kernel record batches into eval records for the running module. */
export class KernelIngest {
  readonly threads = new ThreadTable();
  private readonly plans = new WeakMap<RuleModule, Plan>();
  private bound: RuleModule | undefined;
  private num = 0n;
  private u8!: Uint8Array;
  private dv!: DataView;
  private heap = 0;
  private consts = new Map<string, bigint>();

  private plan(m: RuleModule): Plan {
    let p = this.plans.get(m);
    if (!p) {
      const layout = m.compiled.generated.layouts.syscall;
      p = { stride: layout.stride, slots: layout.slots.flatMap((slot) => (BY_FIELD[slot.ref.canonical] && slot.ref.arg === undefined ? [{ slot, field: BY_FIELD[slot.ref.canonical]! }] : [])) };
      this.plans.set(m, p);
    }
    return p;
  }

  /**
   * Applies the process records of view[0..bytes) to the thread table and writes one eval record
   * per SYSCALL record at the module's batch region. Returns the record offsets of the events
   * (event i of the batch = the record at offsets[i]); evaluate with m.evaluateRecords('syscall', n).
   */
  ingest(m: RuleModule, view: Uint8Array, bytes: number): number[] {
    if (this.bound !== m) {
      this.threads.bind(m.memory);
      this.bound = m;
    }
    this.u8 = new Uint8Array(m.memory.buffer);
    this.dv = new DataView(m.memory.buffer);
    const plan = this.plan(m);
    const vd = new DataView(view.buffer, view.byteOffset, view.byteLength);
    const offsets: number[] = [];
    for (let off = 0; off + 48 <= bytes; ) {
      const len = vd.getUint32(off + HDR.len, true);
      if (len < 48 || len % 8 !== 0 || off + len > bytes) break;
      if (vd.getUint16(off + HDR.kind, true) === KIND.SYSCALL) offsets.push(off);
      off += len;
    }
    const n = Math.min(offsets.length, Math.floor((MEM.batchSize / 2) / plan.stride));
    offsets.length = n;
    this.heap = MEM.batchBase + n * plan.stride;
    this.consts.clear();
    this.u8.fill(0, MEM.batchBase, this.heap);
    let i = 0;
    for (let off = 0; off + 48 <= bytes; ) {
      const len = vd.getUint32(off + HDR.len, true);
      if (len < 48 || len % 8 !== 0 || off + len > bytes) break;
      const kind = vd.getUint16(off + HDR.kind, true);
      if (kind === KIND.SYSCALL) {
        if (i < n) this.record(plan, view, vd, off, MEM.batchBase + i * plan.stride);
        i++;
      } else this.threads.apply(view, off);
      off += len;
    }
    return offsets;
  }

  private record(plan: Plan, view: Uint8Array, vd: DataView, off: number, at: number): void {
    const nr = vd.getUint16(off + HDR.nr, true);
    this.dv.setUint32(at + REC.type, nr < NR_SYSCALLS ? TYPE_IDS[nr]! : 0, true);
    this.dv.setUint32(at + REC.thread, this.threads.entryOf(vd.getUint32(off + HDR.tid, true)), true);
    this.num++;
    if (plan.slots.length === 0) return;
    const f = this.facts(view, vd, off, nr);
    for (const { slot, field } of plan.slots) {
      const v = this.value(field, f, view, vd, off);
      if (v === undefined) continue;
      this.dv.setBigUint64(at + slot.offset, v, true);
      const w = at + REC.present + 8 * (slot.index >> 6);
      this.dv.setBigUint64(w, this.dv.getBigUint64(w, true) | (1n << BigInt(slot.index & 63)), true);
    }
  }

  private facts(view: Uint8Array, vd: DataView, off: number, nr: number): Facts {
    const name = nr < NR_SYSCALLS ? NAMES[nr]! : '';
    const path = { o: vd.getUint16(off + SYSCALL.path, true), l: vd.getUint16(off + SYSCALL.path + 2, true) };
    const dir = { o: vd.getUint16(off + SYSCALL.dir, true), l: vd.getUint16(off + SYSCALL.dir + 2, true) };
    let fdName = 0;
    let fdLen = 0;
    if (path.o !== 0) {
      if (view[off + path.o] === 47 || dir.o === 0) {
        fdName = off + path.o;
        fdLen = path.l;
        fdName = -fdName - 1; // negative: a range in the kernel view, copied on demand
      } else {
        const slash = dir.l > 0 && view[off + dir.o + dir.l - 1] === 47 ? 0 : 1;
        const at = this.alloc(dir.l + slash + path.l);
        if (at !== 0) {
          this.u8.set(view.subarray(off + dir.o, off + dir.o + dir.l), at);
          if (slash) this.u8[at + dir.l] = 47;
          this.u8.set(view.subarray(off + path.o, off + path.o + path.l), at + dir.l + slash);
          fdName = at;
          fdLen = dir.l + slash + path.l;
        }
      }
    }
    const argFlags = name === 'open' ? 1 : name === 'openat' ? 2 : -1;
    const flags = name === 'openat2' ? Number(vd.getBigUint64(off + SYSCALL.aux, true) & 0xffffffffn) : name === 'creat' ? 0x241 : argFlags >= 0 ? Number(vd.getBigUint64(off + SYSCALL.args + 8 * argFlags, true) & 0xffffffffn) : 0;
    const server = SERVER_SIDE.has(name);
    return {
      name, ret: vd.getBigInt64(off + HDR.ret, true), fdName, fdLen, rawOff: path.o ? off + path.o : 0, rawLen: path.l,
      file: OPENS.has(name), dirFlag: (flags & O_DIRECTORY) !== 0, flags,
      client: off + (server ? SYSCALL.peer : SYSCALL.local), server: off + (server ? SYSCALL.local : SYSCALL.peer),
    };
  }

  /** The 8 bytes of one field, or undefined when the record does not provide it. */
  private value(field: number, f: Facts, view: Uint8Array, vd: DataView, off: number): bigint | undefined {
    const ok = f.ret >= 0n;
    const fam = (at: number) => vd.getUint16(at + SOCKADDR.family, true);
    const sockFam = fam(off + SYSCALL.peer) || fam(off + SYSCALL.local);
    switch (field) {
      case F.NUM: return this.num;
      case F.RAWRES: return BigInt.asUintN(64, f.ret);
      case F.FAILED: return ok ? 0n : 1n;
      case F.RES: {
        const e = ok ? 'SUCCESS' : ERRNO[Number(-f.ret)];
        return e === undefined ? undefined : this.constant(e);
      }
      case F.FDNUM:
        if (FD_FROM_RET.has(f.name)) return ok ? BigInt.asUintN(64, f.ret) : undefined;
        if (FD_FROM_ARG0.has(f.name)) return BigInt.asUintN(64, BigInt.asIntN(32, vd.getBigUint64(off + SYSCALL.args, true)));
        return undefined;
      case F.NAME:
        if (f.fdLen === 0 && f.fdName === 0) return sockFam === AF.INET ? this.tupleName(vd, f) : undefined;
        return this.fdNameRef(view, f);
      case F.NAMERAW:
        return f.rawOff ? this.copyRange(view, f.rawOff, f.rawLen) : undefined;
      case F.DIR:
      case F.FILE: {
        if (f.fdLen === 0 && f.fdName === 0) return undefined;
        const ref = this.fdNameRef(view, f);
        if (ref === undefined) return undefined;
        const a = Number(ref & 0xffffffffn);
        const l = f.fdLen;
        let k = l - 1;
        while (k >= 0 && this.u8[a + k] !== 47) k--;
        if (field === F.FILE) return BigInt(a + k + 1) | (BigInt(l - k - 1) << 32n);
        if (k < 0) return undefined;
        return BigInt(a) | (BigInt(k === 0 ? 1 : k) << 32n);
      }
      case F.TYPECHAR:
      case F.TYPE: {
        let t: [string, string] | undefined;
        if (f.file) t = f.dirFlag ? ['d', 'directory'] : ['f', 'file'];
        else if (sockFam === AF.INET) t = ['4', 'ipv4'];
        else if (sockFam === AF.INET6) t = ['6', 'ipv6'];
        else if (sockFam === AF.UNIX) t = ['u', 'unix'];
        return t === undefined ? undefined : this.constant(field === F.TYPECHAR ? t[0] : t[1]);
      }
      case F.FAMILY:
        return sockFam === AF.INET || sockFam === AF.INET6 ? this.constant('ip') : sockFam === AF.UNIX ? this.constant('unix') : undefined;
      case F.READ:
      case F.WRITE:
      case F.CREATE: {
        if (!f.file) return undefined;
        const acc = f.flags & O_ACCMODE;
        const v = field === F.READ ? acc === 0 || acc === 2 : field === F.WRITE ? acc === 1 || acc === 2 : (f.flags & O_CREAT) !== 0;
        return v ? 1n : 0n;
      }
      case F.SIP: return this.ip(view, vd, f.server);
      case F.CIP: return this.ip(view, vd, f.client);
      case F.LIP: return this.ip(view, vd, off + SYSCALL.local);
      case F.RIP: return this.ip(view, vd, off + SYSCALL.peer);
      case F.SPORT: return this.port(vd, f.server);
      case F.CPORT: return this.port(vd, f.client);
      case F.LPORT: return this.port(vd, off + SYSCALL.local);
      case F.RPORT: return this.port(vd, off + SYSCALL.peer);
      case F.IPS:
      case F.PORTS: {
        const vals = [f.client, f.server].map((s) => (field === F.IPS ? this.ip(view, vd, s) : this.port(vd, s))).filter((v): v is bigint => v !== undefined);
        if (vals.length === 0) return undefined;
        const at = this.alloc(8 * vals.length);
        if (at === 0) return undefined;
        vals.forEach((v, j) => this.dv.setBigUint64(at + 8 * j, v, true));
        return BigInt(at) | (BigInt(vals.length) << 32n);
      }
      default:
        return undefined;
    }
  }

  private fdNameRef(view: Uint8Array, f: Facts): bigint | undefined {
    if (f.fdName < 0) {
      const at = this.copyRange(view, -f.fdName - 1, f.fdLen);
      if (at === undefined) return undefined;
      f.fdName = Number(at & 0xffffffffn);
    }
    return f.fdName === 0 ? undefined : BigInt(f.fdName) | (BigInt(f.fdLen) << 32n);
  }

  private copyRange(view: Uint8Array, from: number, len: number): bigint | undefined {
    const at = this.alloc(len);
    if (at === 0) return undefined;
    this.u8.set(view.subarray(from, from + len), at);
    return BigInt(at) | (BigInt(len) << 32n);
  }

  private ip(view: Uint8Array, vd: DataView, sa: number): bigint | undefined {
    const fam = vd.getUint16(sa + SOCKADDR.family, true);
    const n = fam === AF.INET ? 4 : fam === AF.INET6 ? 16 : 0;
    return n === 0 ? undefined : this.copyRange(view, sa + SOCKADDR.addr, n);
  }

  private port(vd: DataView, sa: number): bigint | undefined {
    const fam = vd.getUint16(sa + SOCKADDR.family, true);
    return fam === AF.INET || fam === AF.INET6 ? BigInt(vd.getUint16(sa + SOCKADDR.port, true)) : undefined;
  }

  /** `cip:cport->sip:sport` for an IPv4 socket. */
  private tupleName(vd: DataView, f: Facts): bigint | undefined {
    const q = (sa: number) => `${[0, 1, 2, 3].map((i) => vd.getUint8(sa + SOCKADDR.addr + i)).join('.')}:${vd.getUint16(sa + SOCKADDR.port, true)}`;
    if (vd.getUint16(f.client + SOCKADDR.family, true) !== AF.INET || vd.getUint16(f.server + SOCKADDR.family, true) !== AF.INET) return undefined;
    return this.constant(`${q(f.client)}->${q(f.server)}`);
  }

  private constant(s: string): bigint | undefined {
    let v = this.consts.get(s);
    if (v === undefined) {
      const b = Buffer.from(s);
      const at = this.alloc(b.length);
      if (at === 0) return undefined;
      this.u8.set(b, at);
      v = BigInt(at) | (BigInt(b.length) << 32n);
      this.consts.set(s, v);
    }
    return v;
  }

  private alloc(n: number): number {
    const at = this.heap;
    if (at + n > MEM.batchBase + MEM.batchSize) return 0;
    this.heap = (at + n + 7) & ~7;
    return at;
  }

  /**
   * The fields of event i of the last ingested batch (its kernel record at `recordOffset`) as a
   * field-event object, for alert formatting of matches and for tests: the same semantics as
   * the eval record, decoded into strings; process fields from the thread entry the event's
   * eval record points at (the process as it was when the event happened).
   */
  fieldsOf(m: RuleModule, view: Uint8Array, recordOffset: number, event: number): Record<string, unknown> {
    const rec = decodeRecord(view, recordOffset);
    if ('code' in rec || rec.kind !== KIND.SYSCALL) return {};
    const out: Record<string, unknown> = { 'evt.type': rec.name };
    const ok = rec.ret >= 0;
    out['evt.rawres'] = rec.ret;
    out['evt.failed'] = !ok;
    const res = ok ? 'SUCCESS' : ERRNO[-rec.ret];
    if (res) out['evt.res'] = res;
    if (FD_FROM_RET.has(rec.name) && ok) out['fd.num'] = rec.ret;
    if (FD_FROM_ARG0.has(rec.name)) out['fd.num'] = Number(BigInt.asIntN(32, rec.args[0]!));
    const file = OPENS.has(rec.name);
    if (rec.path !== undefined) {
      out['fd.nameraw'] = rec.path;
      const name = rec.path.startsWith('/') || rec.dir === undefined ? rec.path : `${rec.dir}${rec.dir.endsWith('/') ? '' : '/'}${rec.path}`;
      out['fd.name'] = name;
      const k = name.lastIndexOf('/');
      out['fd.filename'] = name.slice(k + 1);
      if (k >= 0) out['fd.directory'] = k === 0 ? '/' : name.slice(0, k);
    }
    const server = SERVER_SIDE.has(rec.name);
    const [client, srv] = server ? [rec.peer, rec.local] : [rec.local, rec.peer];
    const fam = rec.peer.family || rec.local.family;
    const flags = rec.name === 'openat2' ? Number(rec.aux[0]! & 0xffffffffn) : rec.name === 'creat' ? 0x241 : rec.name === 'open' ? Number(rec.args[1]! & 0xffffffffn) : rec.name === 'openat' ? Number(rec.args[2]! & 0xffffffffn) : 0;
    if (file) {
      const acc = flags & O_ACCMODE;
      Object.assign(out, { 'evt.is_open_read': acc === 0 || acc === 2, 'evt.is_open_write': acc === 1 || acc === 2, 'evt.is_open_create': (flags & O_CREAT) !== 0 });
      Object.assign(out, (flags & O_DIRECTORY) !== 0 ? { 'fd.typechar': 'd', 'fd.type': 'directory' } : { 'fd.typechar': 'f', 'fd.type': 'file' });
    } else if (fam === AF.INET || fam === AF.INET6 || fam === AF.UNIX) {
      Object.assign(out, fam === AF.INET ? { 'fd.typechar': '4', 'fd.type': 'ipv4' } : fam === AF.INET6 ? { 'fd.typechar': '6', 'fd.type': 'ipv6' } : { 'fd.typechar': 'u', 'fd.type': 'unix' });
    }
    if (fam === AF.INET || fam === AF.INET6) out['fd.sockfamily'] = 'ip';
    else if (fam === AF.UNIX) out['fd.sockfamily'] = 'unix';
    const ip = (s: SockAddr) => (s.family === AF.INET || s.family === AF.INET6 ? s.addr : undefined);
    const port = (s: SockAddr) => (s.family === AF.INET || s.family === AF.INET6 ? s.port : undefined);
    const put = (k: string, v: unknown) => v !== undefined && (out[k] = v);
    put('fd.cip', ip(client));
    put('fd.sip', ip(srv));
    put('fd.lip', ip(rec.local));
    put('fd.rip', ip(rec.peer));
    put('fd.cport', port(client));
    put('fd.sport', port(srv));
    put('fd.lport', port(rec.local));
    put('fd.rport', port(rec.peer));
    if (out['fd.name'] === undefined && client.family === AF.INET && srv.family === AF.INET) out['fd.name'] = `${client.addr}:${client.port}->${srv.addr}:${srv.port}`;
    const plan = this.plan(m);
    Object.assign(out, this.processFields(m, new DataView(m.memory.buffer).getUint32(MEM.batchBase + event * plan.stride + REC.thread, true)));
    return out;
  }

  /** Process fields of a thread entry and its ancestors, read back from linear memory. */
  private processFields(m: RuleModule, entry: number): Record<string, unknown> {
    const dv = new DataView(m.memory.buffer);
    const u8 = new Uint8Array(m.memory.buffer);
    const out: Record<string, unknown> = {};
    const str = (t: number, off: number, bit: number) => ((dv.getUint32(t + THREAD.present, true) & bit) !== 0 ? Buffer.from(u8.subarray(dv.getUint32(t + off, true), dv.getUint32(t + off, true) + dv.getUint32(t + off + 4, true))).toString('utf8') : undefined);
    const has = (t: number, bit: number) => (dv.getUint32(t + THREAD.present, true) & bit) !== 0;
    if (entry === 0) return out;
    const put = (k: string, v: unknown) => v !== undefined && (out[k] = v);
    put('proc.name', str(entry, THREAD.name, TP.NAME));
    put('proc.exe', str(entry, THREAD.exe, TP.EXE));
    put('proc.exepath', str(entry, THREAD.exepath, TP.EXEPATH));
    put('proc.cmdline', str(entry, THREAD.cmdline, TP.CMDLINE));
    put('proc.args', str(entry, THREAD.args, TP.ARGS));
    put('proc.cwd', str(entry, THREAD.cwd, TP.CWD));
    put('container.id', str(entry, THREAD.container, TP.CONTAINER));
    if (has(entry, TP.PID)) out['proc.pid'] = dv.getUint32(entry + THREAD.pid, true);
    if (has(entry, TP.VPID)) out['proc.vpid'] = dv.getBigInt64(entry + THREAD.vpid, true);
    if (has(entry, TP.LOGINUID)) out['user.loginuid'] = dv.getBigInt64(entry + THREAD.loginuid, true);
    if (has(entry, TP.TTY)) out['proc.tty'] = dv.getUint32(entry + THREAD.tty, true);
    if (has(entry, TP.UID)) out['user.uid'] = dv.getUint32(entry + THREAD.uid, true);
    if (has(entry, TP.GID)) out['group.gid'] = dv.getUint32(entry + THREAD.gid, true);
    if (has(entry, TP.EXE_WRITABLE)) out['proc.is_exe_writable'] = (dv.getUint32(entry + THREAD.flags, true) & 1) !== 0;
    // Ancestors as the walk sees them: the present values in order (un-indexed lists), each
    // level by index, and the parent's value.
    const keys = [['name', 'proc.aname', 'proc.pname'], ['exe', 'proc.aexe', 'proc.pexe'], ['exepath', 'proc.aexepath', 'proc.pexepath'], ['cmdline', 'proc.acmdline', 'proc.pcmdline'], ['pid', 'proc.apid', 'proc.ppid']] as const;
    const lists = new Map<string, unknown[]>(keys.map(([, l]) => [l, []]));
    let level = 1;
    for (let t = dv.getUint32(entry + THREAD.parent, true); t !== 0 && level <= 16; t = dv.getUint32(t + THREAD.parent, true), level++) {
      const vals = { name: str(t, THREAD.name, TP.NAME), exe: str(t, THREAD.exe, TP.EXE), exepath: str(t, THREAD.exepath, TP.EXEPATH), cmdline: str(t, THREAD.cmdline, TP.CMDLINE), pid: has(t, TP.PID) ? dv.getUint32(t + THREAD.pid, true) : undefined };
      for (const [k, list, parent] of keys) {
        const v = vals[k];
        if (v === undefined) continue;
        lists.get(list)!.push(v);
        out[`${list}[${level}]`] = v;
        if (level === 1) out[parent] = v;
      }
    }
    for (const [list, vals] of lists) if (vals.length > 0) out[list] = vals;
    return out;
  }
}
