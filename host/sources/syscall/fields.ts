// What the syscall byte path provides and how matched events are read back: the fields kernel
// records give conditions (KERNEL_RECORD_FIELDS) and the load-time check of the rules' fields
// against them (missingFields); the syscalls whose I/O buffer the rules read (dataSyscalls); the per-syscall facts the translator (ingest.ts) shares; and the
// byte-layout readers of matched events: an eval record's slots by kind (recordFields) and the
// process fields of a thread entry and its ancestors in linear memory (processFields, ancestors
// by walking parent links, as the compiled rules do). No field is computed here.
import { sockaddr, ipText } from './sockaddr.js';
import { AF, SYSCALL } from '../../abi/records.js';
import { DATA_ARG } from './render.js';
import { ARGS_SYSCALLS } from './evt-args.js';
import { decodeRaw, type LoadedRule, type Operand, typeClass, walkChecked } from '../../engine/index.js';
import type { SourceLayout } from '../../engine/codegen/index.js';
import { CTR_FLAGS, CTR_KEYED, CTR_STRINGS, REC, TF, THREAD, TP } from '../../abi/module.js';

/**
 * The fields the byte path provides to conditions: the slots the translators fill (the keys of
 * ingest.ts's field table, checked equal at load), evt.type and the thread entry's fields.
 */
export const KERNEL_RECORD_FIELDS: readonly string[] = [
  'evt.num',
  'evt.rawres',
  'evt.res',
  'evt.failed',
  'fd.num',
  'fd.name',
  'fd.nameraw',
  'fd.directory',
  'fd.filename',
  'fd.typechar',
  'fd.type',
  'evt.is_open_read',
  'evt.is_open_write',
  'evt.is_open_create',
  'fd.sip',
  'fd.cip',
  'fd.lip',
  'fd.rip',
  'fd.snet',
  'fd.cnet',
  'fd.lnet',
  'fd.rnet',
  'fd.sport',
  'fd.cport',
  'fd.lport',
  'fd.rport',
  'fd.ip',
  'fd.net',
  'fd.port',
  'fd.sockfamily',
  'fd.l4proto',
  'evt.arg.flags',
  'evt.arg.target',
  'evt.arg.oldpath',
  'evt.arg.domain',
  'evt.arg.request',
  'fd.connected',
  'fd.name_changed',
  'proc.duration',
  'container.duration',
  'evt.arg.name',
  'evt.arg.path',
  'evt.arg.filename',
  'evt.arg.newpath',
  'evt.arg.mode',
  'evt.arg.fd',
  'evt.arg.uid',
  'evt.arg.cmd',
  'thread.tid',
  'evt.time',
  'evt.rawtime',
  'evt.dir',
  'evt.source',
  'evt.hostname',
  'evt.is_open_exec',
  'evt.arg.pid',
  'evt.arg.dirfd',
  'evt.arg.res',
  'evt.arg.linkpath',
  'fd.sip.name',
  'fd.cip.name',
  'fd.lip.name',
  'fd.rip.name',
  'evt.buffer',
  'evt.arg.data',
];
/** Thread-entry fields the thread table fills (thread-table.ts), with their parent and ancestor forms. */
const THREAD_PROVIDED = [
  'proc.pid',
  'proc.vpid',
  'user.loginuid',
  'proc.tty',
  'user.uid',
  'group.gid',
  'proc.name',
  'proc.exe',
  'proc.exepath',
  'proc.cmdline',
  'proc.args',
  'proc.cwd',
  'proc.env',
  'user.name',
  'group.name',
  'container.id',
  'proc.is_exe_writable',
  'proc.is_exe_upper_layer',
  'proc.is_exe_lower_layer',
  'proc.is_exe_from_memfd',
  'proc.sid',
  'proc.vpgid',
  'proc.sname',
  'user.loginname',
  'thread.cap_inheritable',
  'thread.cap_permitted',
  'thread.cap_effective',
  'proc.exe_ino.ctime',
  'proc.exe_ino.mtime',
  'proc.exe_ino.ctime_duration_proc_start',
];
/** Parent/ancestor fields (any index argument): their level-0 field is in the thread entry. */
const WALKED = ['proc.pname', 'proc.pexe', 'proc.pexepath', 'proc.pcmdline', 'proc.ppid', 'proc.aname', 'proc.aexe', 'proc.aexepath', 'proc.acmdline', 'proc.apid'];
/** Fields of the process's container entry (the container table), keyed ones with any argument. */
const CONTAINER_PROVIDED = [...CTR_STRINGS, ...CTR_FLAGS, 'container.start_ts'];
/**
 * Keyed fields the translators fill for any argument (proc.env[NAME], ingest.ts BY_KEYED): in a
 * slot of the module, so in conditions, and in outputs of a rule whose condition reads the same.
 */
const KEYED = ['proc.env'];
const CONDITION_FIELDS = new Set(['evt.type', ...KERNEL_RECORD_FIELDS, ...THREAD_PROVIDED, ...CONTAINER_PROVIDED]);
function provided(name: string, arg: string | undefined, canonical: string, slotted: ReadonlySet<string> | undefined): boolean {
  if (WALKED.includes(name) || (CTR_KEYED.has(name) && arg !== undefined)) return true;
  if (KEYED.includes(name) && arg !== undefined) return slotted === undefined || slotted.has(canonical);
  return (arg === undefined || canonical.startsWith('evt.arg.')) && CONDITION_FIELDS.has(canonical);
}

/** A field an enabled syscall rule uses that kernel events do not provide (it reads as missing). */
export interface MissingField {
  rule: string;
  field: string;
  where: 'condition' | 'output';
}

/** A node of a rule's checked condition. */
type CheckedNode = LoadedRule['condition'];

/**
 * Each field a rule reads, in its condition (transformers' arguments too) and its output: (name,
 * arg, canonical, where, and for a condition's field the comparison or test that reads it).
 */
export function forEachField(r: LoadedRule, visit: (name: string, arg: string | undefined, canonical: string, where: MissingField['where'], node?: CheckedNode) => void): void {
  const operand = (o: Operand | { kind: 'const'; value: string }, node: CheckedNode): void => {
    if (o.kind === 'field') visit(o.def.name, o.arg, o.canonical, 'condition', node);
    else if (o.kind === 'transform') for (const a of o.args) operand(a, node);
  };
  walkChecked(r.condition, (n) => {
    if (n.kind === 'exists') operand(n.operand, n);
    if (n.kind === 'cmp' || n.kind === 'cmpfield') operand(n.left, n);
    if (n.kind === 'cmpfield') operand(n.right, n);
  });
  for (const t of r.output) if (t.kind === 'field') visit(t.name, t.arg, t.canonical, 'output');
}

/**
 * Whether alerts of rule `r` print evt.args: rendered from the matched record (evt-args.ts) for
 * the syscalls it covers, so for a rule whose event types are all among them; no translator
 * writes it in a slot, so a condition reads it as missing.
 */
function argsPrinted(r: LoadedRule, canonical: string, where: MissingField['where']): boolean {
  return canonical === 'evt.args' && where === 'output' && r.evttypes !== undefined && r.evttypes.size > 0 && [...r.evttypes].every((t) => ARGS_SYSCALLS.has(t));
}

/** The fields the enabled syscall rules use (conditions and outputs) that the byte path does not provide, rule by rule, each once. */
export function missingFields(rules: readonly LoadedRule[]): MissingField[] {
  const out: MissingField[] = [];
  for (const r of rules) {
    if (r.source !== 'syscall' || !r.enabled) continue;
    const seen = new Set<string>();
    const inCondition = new Set<string>();
    forEachField(r, (_name, _arg, canonical, where) => {
      if (where === 'condition') inCondition.add(canonical);
    });
    forEachField(r, (name, arg, canonical, where) => {
      if (provided(name, arg, canonical, where === 'condition' ? undefined : inCondition) || argsPrinted(r, canonical, where) || seen.has(`${where} ${canonical}`)) return;
      seen.add(`${where} ${canonical}`);
      out.push({ rule: r.name, field: canonical, where });
    });
  }
  return out;
}

/** The fields of a syscall's I/O buffer (rae_syscall.data). */
const DATA_FIELDS: ReadonlySet<string> = new Set(['evt.buffer', 'evt.arg.data']);

/**
 * The syscalls whose I/O buffer the probe is to copy into their records (its first snaplen bytes):
 * those with a `data` parameter (render.ts DATA_ARG) that an enabled syscall rule reading
 * evt.buffer or evt.arg.data, in its condition or its output, can match (its evttypes). Empty
 * when no such rule is loaded: the probe then copies no buffer (Falco always does).
 */
export function dataSyscalls(rules: readonly LoadedRule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) {
    if (r.source !== 'syscall' || !r.enabled) continue;
    let reads = false;
    forEachField(r, (_name, _arg, canonical) => {
      reads ||= DATA_FIELDS.has(canonical);
    });
    if (reads) for (const t of r.evttypes ?? DATA_ARG) if (DATA_ARG.has(t)) out.add(t);
  }
  return out;
}

/** missingFields by canonical name, sorted; empty when the byte path judges and renders every field the rules use. */
export function kernelFieldGaps(rules: readonly LoadedRule[]): { condition: string[]; output: string[] } {
  const missing = missingFields(rules);
  const names = (where: MissingField['where']) => [...new Set(missing.filter((m) => m.where === where).map((m) => m.field))].sort();
  return { condition: names('condition'), output: names('output') };
}

/** errno names of evt.res for failed syscalls (x86-64 numbers). */
export const ERRNO: Record<number, string> = {
  1: 'EPERM',
  2: 'ENOENT',
  3: 'ESRCH',
  4: 'EINTR',
  5: 'EIO',
  6: 'ENXIO',
  7: 'E2BIG',
  8: 'ENOEXEC',
  9: 'EBADF',
  10: 'ECHILD',
  11: 'EAGAIN',
  12: 'ENOMEM',
  13: 'EACCES',
  14: 'EFAULT',
  16: 'EBUSY',
  17: 'EEXIST',
  18: 'EXDEV',
  19: 'ENODEV',
  20: 'ENOTDIR',
  21: 'EISDIR',
  22: 'EINVAL',
  23: 'ENFILE',
  24: 'EMFILE',
  25: 'ENOTTY',
  26: 'ETXTBSY',
  27: 'EFBIG',
  28: 'ENOSPC',
  29: 'ESPIPE',
  30: 'EROFS',
  31: 'EMLINK',
  32: 'EPIPE',
  36: 'ENAMETOOLONG',
  38: 'ENOSYS',
  39: 'ENOTEMPTY',
  40: 'ELOOP',
  95: 'EOPNOTSUPP',
  97: 'EAFNOSUPPORT',
  98: 'EADDRINUSE',
  99: 'EADDRNOTAVAIL',
  101: 'ENETUNREACH',
  104: 'ECONNRESET',
  110: 'ETIMEDOUT',
  111: 'ECONNREFUSED',
  113: 'EHOSTUNREACH',
  115: 'EINPROGRESS',
};
/** Syscalls whose path is a file opened (fd.type file, evt.is_open_*). */
export const OPENS = new Set(['open', 'openat', 'openat2', 'creat']);
/** Syscalls whose return value is the new fd (fd.num). */
export const FD_FROM_RET = new Set([...OPENS, 'socket', 'accept', 'accept4', 'dup', 'dup2', 'dup3', 'memfd_create']);
/** Syscalls whose first argument is the fd they act on (fd.num). */
export const FD_FROM_ARG0 = new Set(['connect', 'sendto', 'recvfrom', 'sendmsg', 'recvmsg', 'bind', 'listen', 'close', 'shutdown', 'setsockopt', 'getsockopt', 'fchdir', 'fchmod', 'fcntl']);
/** Syscalls where the local end is the server (fd.sip/fd.sport are local). */
export const SERVER_SIDE = new Set(['accept', 'accept4']);
/**
 * Whether the socket of a bind or listen record is libsinsp's server socket: parse_bind_exit
 * (userspace/libsinsp/parsers.cpp) makes an IP socket bound with a port SCAP_FD_IPV4_SERVSOCK (or
 * IPV6) with that address and port, and a failed bind leaves the socket as it was; listen changes
 * nothing, so a socket bound before is still one whatever listen returns. On such a socket
 * fd.sip/fd.sport are the bound address and port, fd.cip/cport/lip/lport/rip/rport have no value,
 * fd.ip/net/port match the bound end alone (sinsp_filtercheck_fd.cpp TYPE_SERVERIP, TYPE_SERVERPORT,
 * TYPE_LIP..., compare_ip/compare_net/compare_port) and fd.name is `addr:port` (bind's address
 * parameter as text). The record's local end is the kernel's: a socket bound to port 0 has the port
 * the kernel picked, where libsinsp, reading the address as passed, leaves the socket unclassified
 * (fd.sip missing); a listen that bound the socket itself (no bind before) is a server socket here too.
 */
export function serverSocket(name: string, ret: number, family: number, port: number): boolean {
  return (name === 'listen' || (name === 'bind' && ret >= 0)) && (family === AF.INET || family === AF.INET6) && port !== 0;
}
/** open(2) flag bits: access mode mask, O_CREAT, O_DIRECTORY. */
export const O_ACCMODE = 3;
/** O_CREAT. */
export const O_CREAT = 0x40;
/** O_DIRECTORY. */
export const O_DIRECTORY = 0x10000;

/**
 * The present slots of the eval record at `at` of `u8` (laid out as `layout`) as field values,
 * read by kind: strings as UTF-8 text (addresses as IP text), numbers as numbers, booleans,
 * lists (fd.ip, fd.port) as arrays. A byte-layout reader, no field knowledge: the values are
 * what the translator wrote (ingest.ts fieldsOf).
 */
export function recordFields(u8: Uint8Array, at: number, layout: SourceLayout): Record<string, unknown> {
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const out: Record<string, unknown> = {};
  for (const slot of layout.slots) {
    if ((dv.getUint32(at + REC.present + 4 * (slot.index >> 5), true) & (1 << (slot.index & 31))) === 0) continue;
    const cls = typeClass(slot.ref.type);
    const ip = cls === 'ipaddr' || cls === 'ipnet';
    const one = (a: number): unknown => {
      switch (slot.kind) {
        case 'str': {
          const from = dv.getUint32(a, true);
          const len = dv.getUint32(a + 4, true);
          return ip ? ipText(dv, from, len) : decodeRaw(u8.subarray(from, from + len)); // raw bytes kept (raw-text.ts)
        }
        case 'bool':
          return dv.getBigUint64(a, true) !== 0n;
        case 'u64':
          return Number(dv.getBigUint64(a, true));
        case 'f64':
          return dv.getFloat64(a, true);
        default:
          return Number(dv.getBigInt64(a, true));
      }
    };
    const a = at + slot.offset;
    out[slot.ref.canonical] = slot.list ? Array.from({ length: dv.getUint32(a + 4, true) }, (_, k) => one(dv.getUint32(a, true) + 8 * k)) : one(a);
  }
  return out;
}

/** The socket type (1 stream, 2 dgram, 3 raw) behind fd.l4proto of a record, undefined when none. */
export function l4Type(name: string, fam: number, vd: DataView, off: number): number | undefined {
  let t: number;
  if (name === 'socket') {
    const d = vd.getBigUint64(off + SYSCALL.args, true);
    if (d !== BigInt(AF.INET) && d !== BigInt(AF.INET6)) return undefined;
    t = Number(vd.getBigUint64(off + SYSCALL.args + 8, true) & 0xfn);
  } else {
    if (fam !== AF.INET && fam !== AF.INET6) return undefined;
    t = vd.getUint32(off + SYSCALL.sock_type, true) & 0xf;
    if (t === 0 && SERVER_SIDE.has(name)) t = 1; // accept: a stream socket
  }
  return t >= 1 && t <= 3 ? t : undefined;
}

/**
 * fd.name of an IP socket: `client->server`, each end `addr:port` (IPv6 as RFC 5952 text, an
 * absent end 0.0.0.0:0).
 */
export function connTuple(dv: DataView, client: number, server: number): string {
  return `${endpointText(dv, client)}->${endpointText(dv, server)}`;
}

/** One end of an IP socket as `addr:port` (fd.name of a server socket, serverSocket()). */
export function endpointText(dv: DataView, at: number): string {
  const s = sockaddr(dv, at);
  return `${s.addr || (s.family === AF.INET6 ? '::' : '0.0.0.0')}:${s.port}`;
}

/** Process fields of a thread entry and its ancestors, read back from linear memory. */
export function processFields(memory: WebAssembly.Memory, entry: number): Record<string, unknown> {
  const dv = new DataView(memory.buffer);
  const u8 = new Uint8Array(memory.buffer);
  const out: Record<string, unknown> = {};
  const str = (t: number, off: number, bit: number) => ((dv.getUint32(t + THREAD.present, true) & bit) !== 0 ? decodeRaw(u8.subarray(dv.getUint32(t + off, true), dv.getUint32(t + off, true) + dv.getUint32(t + off + 4, true))) : undefined);
  const has = (t: number, bit: number) => (dv.getUint32(t + THREAD.present, true) & bit) !== 0;
  if (entry === 0) return out;
  const put = (k: string, v: unknown) => v !== undefined && (out[k] = v);
  put('proc.name', str(entry, THREAD.name, TP.NAME));
  put('proc.exe', str(entry, THREAD.exe, TP.EXE));
  put('proc.exepath', str(entry, THREAD.exepath, TP.EXEPATH));
  put('proc.cmdline', str(entry, THREAD.cmdline, TP.CMDLINE));
  put('proc.args', str(entry, THREAD.args, TP.ARGS));
  put('proc.cwd', str(entry, THREAD.cwd, TP.CWD));
  put('proc.env', str(entry, THREAD.env, TP.ENV));
  put('container.id', str(entry, THREAD.container, TP.CONTAINER));
  put('user.name', str(entry, THREAD.user, TP.USER));
  put('group.name', str(entry, THREAD.group, TP.GROUP));
  put('proc.sname', str(entry, THREAD.sname, TP.SNAME));
  put('user.loginname', str(entry, THREAD.loginname, TP.LOGINNAME));
  put('thread.cap_inheritable', str(entry, THREAD.cap_inh, TP.CAP_INH));
  put('thread.cap_permitted', str(entry, THREAD.cap_prm, TP.CAP_PRM));
  put('thread.cap_effective', str(entry, THREAD.cap_eff, TP.CAP_EFF));
  if (has(entry, TP.SID)) out['proc.sid'] = dv.getUint32(entry + THREAD.sid, true);
  if (has(entry, TP.VPGID)) out['proc.vpgid'] = dv.getUint32(entry + THREAD.vpgid, true);
  if (has(entry, TP.PID)) out['proc.pid'] = dv.getUint32(entry + THREAD.pid, true);
  if (has(entry, TP.VPID)) out['proc.vpid'] = dv.getBigInt64(entry + THREAD.vpid, true);
  if (has(entry, TP.LOGINUID)) out['user.loginuid'] = dv.getBigInt64(entry + THREAD.loginuid, true);
  if (has(entry, TP.TTY)) out['proc.tty'] = dv.getUint32(entry + THREAD.tty, true);
  if (has(entry, TP.UID)) out['user.uid'] = dv.getUint32(entry + THREAD.uid, true);
  if (has(entry, TP.GID)) out['group.gid'] = dv.getUint32(entry + THREAD.gid, true);
  if (has(entry, TP.EXE_WRITABLE)) out['proc.is_exe_writable'] = (dv.getUint32(entry + THREAD.flags, true) & TF.EXE_WRITABLE) !== 0;
  if (has(entry, TP.EXE_MEMFD)) out['proc.is_exe_from_memfd'] = (dv.getUint32(entry + THREAD.flags, true) & TF.EXE_MEMFD) !== 0;
  if (has(entry, TP.EXE_UPPER)) {
    out['proc.is_exe_upper_layer'] = (dv.getUint32(entry + THREAD.flags, true) & TF.EXE_UPPER) !== 0;
    out['proc.is_exe_lower_layer'] = (dv.getUint32(entry + THREAD.flags, true) & TF.EXE_LOWER) !== 0;
  }
  // epoch nanoseconds past 2^53: bigints, printed whole
  if (has(entry, TP.EXE_CTIME)) out['proc.exe_ino.ctime'] = dv.getBigUint64(entry + THREAD.exe_ino_ctime, true);
  if (has(entry, TP.EXE_MTIME)) out['proc.exe_ino.mtime'] = dv.getBigUint64(entry + THREAD.exe_ino_mtime, true);
  if (has(entry, TP.EXE_CTIME_PROC)) out['proc.exe_ino.ctime_duration_proc_start'] = dv.getBigUint64(entry + THREAD.exe_ino_ctime_proc, true);
  // Ancestors as the walk sees them: the present values in order (un-indexed lists), each
  // level by index, and the parent's value.
  const keys = [
    ['name', 'proc.aname', 'proc.pname'],
    ['exe', 'proc.aexe', 'proc.pexe'],
    ['exepath', 'proc.aexepath', 'proc.pexepath'],
    ['cmdline', 'proc.acmdline', 'proc.pcmdline'],
    ['pid', 'proc.apid', 'proc.ppid'],
  ] as const;
  const lists = new Map<string, unknown[]>(keys.map(([, l]) => [l, []]));
  let level = 1;
  for (let t = dv.getUint32(entry + THREAD.parent, true); t !== 0 && level <= 16; t = dv.getUint32(t + THREAD.parent, true), level++) {
    const vals = {
      name: str(t, THREAD.name, TP.NAME),
      exe: str(t, THREAD.exe, TP.EXE),
      exepath: str(t, THREAD.exepath, TP.EXEPATH),
      cmdline: str(t, THREAD.cmdline, TP.CMDLINE),
      pid: has(t, TP.PID) ? dv.getUint32(t + THREAD.pid, true) : undefined,
    };
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
