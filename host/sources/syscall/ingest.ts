// The syscall source's byte path: kernel wire records (probes/src/events.h) as the capture addon
// copies them, turned into eval records in a module's batch region without a JS object per
// event. PROC/EXEC/FORK/EXIT records update the persistent thread table (thread-table.ts); each
// SYSCALL record becomes one eval record whose slots (the module's layout) are filled from the
// record's numbers and byte ranges, its `thread` pointing at the process's entry. Only matched
// events are later read back into objects (fieldsOf): their record translated again into an eval
// record of every field, whose bytes alerts print, so conditions and outputs see one value.
// Fields the kernel record provides: evt.type, evt.num, evt.rawres, evt.res, evt.failed, fd.num,
// fd.name (an absolute path normalized as posix.normalize does)/nameraw/directory/filename, fd.type/typechar/sockfamily
// (of socket(2)'s new socket by its domain, as libsinsp's add_socket), evt.is_open_read/write/create,
// fd.sip/cip/lip/rip, fd.sport/cport/lport/rport, fd.ip/port/net and the networks,
// evt.arg.flags (opens; AT_* flags of unlinkat/linkat), evt.arg.target, evt.arg.domain (socket), evt.arg.request (ptrace) and the
// per-syscall parameters evt.arg.name/path/filename/oldpath/newpath/mode/fd/uid/cmd/pid/dirfd/res/linkpath as libsinsp
// names and prints them (render.ts; evt.arg.uid's user names live here, so the native translator
// leaves setuid records to this file's when a rule reads it), fd.l4proto (socket(2)'s type argument or the
// probe's sock_type), fd.connected, fd.name_changed, proc.duration (the thread table's start times), container.duration (the container entry's start_ts),
// thread.tid, evt.rawtime (boot ns + the caller's boot-to-epoch offset) and evt.time (the
// same number as decimal text), evt.dir '<', evt.source 'syscall', evt.hostname (the
// constructor's) and evt.is_open_exec (an open creating a file with an execute bit, render.ts
// isOpenExec), evt.buffer and evt.arg.data (the record's I/O buffer: its bytes, and its printable
// text, which fieldsOf gives for both, as alerts print them); the endpoints of a bind or listen
// are those of libsinsp's server socket (fields.ts serverSocket), fd.sip.name/cip.name/lip.name/
// rip.name (the name the module's DNS table gives the end's address, ../dns/table.ts); process
// fields come from the thread entry, and proc.env[NAME] from its environment (env-index.ts
// envValue, libsinsp's get_env); evt.args of the syscalls evt-args.ts covers, for alerts only
// (fieldsOf renders it; no slot holds it, so a condition reads it as missing). Any other field is missing for kernel
// events (the list: KERNEL_RECORD_FIELDS, fields.ts).
// A SYSCALL record of a process the thread table has no entry for is first given one when the
// constructor has a reader (unknown-process.ts: /proc for `rae run`, as libsinsp reads a thread it
// does not know).
// When the capture addon loads, the per-event work runs in C (probes/addon/ingest.c, same
// semantics, driven by a per-module plan of slots); this file's JS translator is the fallback
// and the reference the tests compare the native one with.
import { hostname as osHostname } from 'node:os';
import { posix } from 'node:path';
import { type Slot, SlotTable } from '../../engine/codegen/index.js';
import { AF, HDR, KIND, SIZES, SOCKADDR, SYSCALL } from '../../abi/records.js';
import { loadNative, type NativeIngest } from './addon.js';
import {
  atFlags,
  chmodMode,
  DATA_ARG,
  DIRFD_ARG,
  DOMAINS,
  FD_ARG,
  fdText,
  hasResArg,
  hexMode,
  isOpenExec,
  LINKPATH_ARG,
  MODE_ARG,
  MODE_FLAGS,
  NEWPATH_ARG,
  OPEN_FLAGS,
  openFlags,
  openMode,
  PATH_ARG,
  printableData,
  PTRACE,
  ptraceRequest,
  resArgText,
  socketDomain,
  uidText,
} from './render.js';
import { NR_SYSCALLS, syscallName } from './syscalls.js';
import { CTR, CTR_START_BIT, evtTypeId, MEM, REC, THREAD, TP } from '../../abi/module.js';
import { envValue } from './env-index.js';
import { evtArgs } from './evt-args.js';
import type { RecordTranslator, RuleModule } from '../../runtime/index.js';
import { connTuple, endpointText, ERRNO, FD_FROM_ARG0, FD_FROM_RET, KERNEL_RECORD_FIELDS, l4Type, O_ACCMODE, O_CREAT, O_DIRECTORY, OPENS, processFields, recordFields, SERVER_SIDE, serverSocket } from './fields.js';
import { lookupField } from '../../engine/index.js';
import { ThreadTable } from './thread-table.js';
import { UnknownProcesses, type UnknownProcessOptions } from './unknown-process.js';
import { ContainerTable, containerFields } from '../container/table.js';
import { DnsTable, domainNames, lookupName } from '../dns/index.js';

const F = {
  NUM: 1,
  RAWRES: 2,
  RES: 3,
  FAILED: 4,
  FDNUM: 5,
  NAME: 6,
  NAMERAW: 7,
  DIR: 8,
  FILE: 9,
  TYPECHAR: 10,
  TYPE: 11,
  READ: 12,
  WRITE: 13,
  CREATE: 14,
  SIP: 15,
  CIP: 16,
  LIP: 17,
  RIP: 18,
  SPORT: 19,
  CPORT: 20,
  LPORT: 21,
  RPORT: 22,
  IPS: 23,
  PORTS: 24,
  FAMILY: 25,
  ARG_FLAGS: 26,
  ARG_TARGET: 27,
  ARG_OLDPATH: 28,
  ARG_DOMAIN: 29,
  ARG_REQUEST: 30,
  L4PROTO: 31,
  CONNECTED: 32,
  NAME_CHANGED: 33,
  DURATION: 34,
  ARG_NAME: 35,
  ARG_PATH: 36,
  ARG_FILENAME: 37,
  ARG_NEWPATH: 38,
  ARG_MODE: 39,
  ARG_FD: 40,
  ARG_UID: 41,
  ARG_CMD: 42,
  TID: 43,
  TIME: 44,
  RAWTIME: 45,
  DIRECTION: 46,
  SOURCE: 47,
  HOSTNAME: 48,
  OPEN_EXEC: 49,
  ARG_PID: 50,
  ARG_DIRFD: 51,
  ARG_RES: 52,
  ARG_LINKPATH: 53,
  CTR_DURATION: 54,
  PROC_ENV: 55,
  BUFFER: 57,
  ARG_DATA: 58,
  SIP_NAME: 59,
  CIP_NAME: 60,
  LIP_NAME: 61,
  RIP_NAME: 62,
} as const;
/** Keyed fields a translator fills from its slot's argument (the plan carries the key's bytes). */
const BY_KEYED: Record<string, number> = { 'proc.env': F.PROC_ENV };
const BY_FIELD: Record<string, number> = {
  'evt.num': F.NUM,
  'evt.rawres': F.RAWRES,
  'evt.res': F.RES,
  'evt.failed': F.FAILED,
  'fd.num': F.FDNUM,
  'fd.name': F.NAME,
  'fd.nameraw': F.NAMERAW,
  'fd.directory': F.DIR,
  'fd.filename': F.FILE,
  'fd.typechar': F.TYPECHAR,
  'fd.type': F.TYPE,
  'evt.is_open_read': F.READ,
  'evt.is_open_write': F.WRITE,
  'evt.is_open_create': F.CREATE,
  'fd.sip': F.SIP,
  'fd.cip': F.CIP,
  'fd.lip': F.LIP,
  'fd.rip': F.RIP,
  'fd.snet': F.SIP,
  'fd.cnet': F.CIP,
  'fd.lnet': F.LIP,
  'fd.rnet': F.RIP,
  'fd.sport': F.SPORT,
  'fd.cport': F.CPORT,
  'fd.lport': F.LPORT,
  'fd.rport': F.RPORT,
  'fd.ip': F.IPS,
  'fd.net': F.IPS,
  'fd.port': F.PORTS,
  'fd.sockfamily': F.FAMILY,
  'evt.arg.flags': F.ARG_FLAGS,
  'evt.arg.target': F.ARG_TARGET,
  'evt.arg.oldpath': F.ARG_OLDPATH,
  'evt.arg.domain': F.ARG_DOMAIN,
  'evt.arg.request': F.ARG_REQUEST,
  'fd.l4proto': F.L4PROTO,
  'fd.connected': F.CONNECTED,
  'fd.name_changed': F.NAME_CHANGED,
  'proc.duration': F.DURATION,
  'container.duration': F.CTR_DURATION,
  'evt.arg.name': F.ARG_NAME,
  'evt.arg.path': F.ARG_PATH,
  'evt.arg.filename': F.ARG_FILENAME,
  'evt.arg.newpath': F.ARG_NEWPATH,
  'evt.arg.mode': F.ARG_MODE,
  'evt.arg.fd': F.ARG_FD,
  'evt.arg.uid': F.ARG_UID,
  'evt.arg.cmd': F.ARG_CMD,
  'thread.tid': F.TID,
  'evt.time': F.TIME,
  'evt.rawtime': F.RAWTIME,
  'evt.dir': F.DIRECTION,
  'evt.source': F.SOURCE,
  'evt.hostname': F.HOSTNAME,
  'evt.is_open_exec': F.OPEN_EXEC,
  'evt.arg.pid': F.ARG_PID,
  'evt.arg.dirfd': F.ARG_DIRFD,
  'evt.arg.res': F.ARG_RES,
  'evt.arg.linkpath': F.ARG_LINKPATH,
  'fd.sip.name': F.SIP_NAME,
  'fd.cip.name': F.CIP_NAME,
  'fd.lip.name': F.LIP_NAME,
  'fd.rip.name': F.RIP_NAME,
  'evt.buffer': F.BUFFER,
  'evt.arg.data': F.ARG_DATA,
};
/** The event's own fields, which alerts take from the event rather than its record (FieldEvent's generic fields). */
const GENERIC = new Set(['evt.num', 'evt.time', 'evt.rawtime', 'evt.source']);
/**
 * fieldsOf's layout: a slot for every field of the table but the generic ones (fd.ip, fd.net and
 * fd.port as lists of both endpoints, as rules read them), and its plan.
 */
const SCRATCH = (() => {
  const table = new SlotTable('syscall');
  const fields = Object.keys(BY_FIELD)
    .filter((k) => !GENERIC.has(k))
    .map((canonical) => {
      const arg = canonical.startsWith('evt.arg.') ? canonical.slice('evt.arg.'.length) : undefined;
      const def = lookupField('syscall', arg === undefined ? canonical : 'evt.arg')!;
      // an alert prints evt.buffer as libsinsp does outside comparisons: its rendering, evt.arg.data's text
      const field = canonical === 'evt.buffer' ? F.ARG_DATA : BY_FIELD[canonical]!;
      return { slot: table.slot({ kind: 'field', def, arg, canonical, type: def.type, isList: def.isList }, field === F.IPS || field === F.PORTS), field };
    });
  const layout = table.layout();
  return { layout, plan: { slots: fields, stride: layout.stride, words: new Int32Array(0) } satisfies Plan };
})();
/** Bytes of fieldsOf's memory: the record and its strings (a kernel record is at most 16 KiB; its paths are copied a few times). */
const SCRATCH_BYTES = 1 << 18;
/** The field of each path-parameter kind (NRC.PATHARG_SHIFT: 1 name, 2 path, 3 filename, 4 oldpath). */
const PATH_FIELD = [0, F.ARG_NAME, F.ARG_PATH, F.ARG_FILENAME, F.ARG_OLDPATH] as const;
if (Object.keys(BY_FIELD).sort().join() !== [...KERNEL_RECORD_FIELDS].sort().join()) throw new Error('ingest: the field table is out of step with KERNEL_RECORD_FIELDS');
/** Whether an absolute path would change under posix.normalize ('//', '.' or '..' components). */
function needsNormalize(b: Uint8Array, at: number, len: number): boolean {
  if (b[at] !== 47) return false;
  for (let i = at; i + 1 < at + len; i++) if (b[i] === 47 && (b[i + 1] === 47 || b[i + 1] === 46)) return true;
  return false;
}

/** Per-syscall-number facts, computed once. */
const TYPE_IDS = Int32Array.from({ length: NR_SYSCALLS }, (_, nr) => evtTypeId(syscallName(nr) || undefined));
const NAMES = Array.from({ length: NR_SYSCALLS }, (_, nr) => syscallName(nr));

interface Plan {
  /** `key`: the argument of a keyed field (proc.env[NAME]'s NAME). */
  slots: Array<{ slot: Slot; field: number; key?: Uint8Array }>;
  stride: number;
  /** The native translator's plan (probes/addon/ingest.h RAE_IP_*). */
  words: Int32Array;
}

/** ingest.h numbers this file relies on; the addon's ingestAbi must say the same. */
const K_COUNT = 256 + 11 + 64 + 48 + 3 + 17 + 3 + 12 + 3;
const IABI = {
  FLD_NUM: F.NUM,
  FLD_NAME: F.NAME,
  FLD_IPS: F.IPS,
  FLD_FAMILY: F.FAMILY,
  FLD_ARG_FLAGS: F.ARG_FLAGS,
  FLD_ARG_REQUEST: F.ARG_REQUEST,
  FLD_L4PROTO: F.L4PROTO,
  FLD_DURATION: F.DURATION,
  FLD_COUNT: F.RIP_NAME + 1,
  FLD_BUFFER: F.BUFFER,
  FLD_ARG_DATA: F.ARG_DATA,
  FLD_SIP_NAME: F.SIP_NAME,
  FLD_CIP_NAME: F.CIP_NAME,
  FLD_LIP_NAME: F.LIP_NAME,
  FLD_RIP_NAME: F.RIP_NAME,
  FLD_TID: F.TID,
  FLD_TIME: F.TIME,
  FLD_RAWTIME: F.RAWTIME,
  FLD_DIRECTION: F.DIRECTION,
  FLD_SOURCE: F.SOURCE,
  FLD_HOSTNAME: F.HOSTNAME,
  FLD_OPEN_EXEC: F.OPEN_EXEC,
  K_DIRECTION: 414,
  K_SOURCE: 415,
  K_HOSTNAME: 416,
  FLD_ARG_NAME: F.ARG_NAME,
  FLD_ARG_PATH: F.ARG_PATH,
  FLD_ARG_FILENAME: F.ARG_FILENAME,
  FLD_ARG_NEWPATH: F.ARG_NEWPATH,
  FLD_ARG_MODE: F.ARG_MODE,
  FLD_ARG_FD: F.ARG_FD,
  FLD_ARG_UID: F.ARG_UID,
  FLD_ARG_CMD: F.ARG_CMD,
  K_MODE: 402,
  NRC_PATHARG_SHIFT: 12,
  NRC_PATH_RAW: 0x8000,
  NRC_NEWPATH: 0x10000,
  NRC_MODE_SHIFT: 17,
  NRC_MODEFMT_SHIFT: 20,
  NRC_FDARG_SHIFT: 22,
  NRC_SETUID: 0x1000000,
  NRC_BPF: 0x2000000,
  FLD_ARG_PID: F.ARG_PID,
  FLD_ARG_DIRFD: F.ARG_DIRFD,
  FLD_ARG_RES: F.ARG_RES,
  FLD_ARG_LINKPATH: F.ARG_LINKPATH,
  FLD_CTR_DURATION: F.CTR_DURATION,
  FLD_PROC_ENV: F.PROC_ENV,
  SLOT_ARG_SHIFT: 8,
  NRC_DIRFD: 0x4000000,
  NRC_LINKPATH: 0x8000000,
  NRC_RES: 0x10000000,
  NRC_FLAGS_AT2: 5,
  NRC_FLAGS_AT4: 6,
  NRC_FLAGS_DOMAIN: 7,
  NRC_BIND: 0x20000000,
  NRC_LISTEN: 0x40000000,
  NRC_DATA: 0x80000000,
  NRC_OPEN: 1,
  NRC_FD_RET: 2,
  NRC_FD_ARG0: 4,
  NRC_SERVER: 8,
  NRC_FLAGS_SHIFT: 4,
  NRC_SOCKET: 0x100,
  NRC_PTRACE: 0x200,
  NRC_CONNECT: 0x400,
  NRC_SENDTO: 0x800,
  K_ERRNO_END: 256,
  K_F: 256,
  K_IP: 266,
  K_DOMAIN: 267,
  K_PTRACE: 331,
  K_PTRACE_HI: 363,
  K_OACC: 379,
  K_OFLAG: 382,
  K_L4: 399,
  K_COUNT,
  OFLAG_COUNT: 17,
  IP_STRIDE: 0,
  IP_HEAD: 1,
  IP_NSLOTS: 2,
  IP_NR: 4,
  IP_CONST: 4 + 2 * 512,
  IP_OFLAGS: 4 + 2 * 512 + 2 * K_COUNT,
  IP_SLOTS: 4 + 2 * 512 + 2 * K_COUNT + 17,
  IS_EVENTS: 0,
  IS_MAX: 1,
  IS_HEAP: 2,
  IS_HEAP_END: 3,
  IS_NUM: 4,
  IS_BASE: 5,
  IS_CONST: 6,
  IS_STOP: 7,
  IS_EPOCH_LO: 8,
  IS_EPOCH_HI: 9,
  IS_LOOKUP: 10,
  IS_WORDS: 11,
  NR_SYSCALLS: NR_SYSCALLS,
} as const;
/** ingest.h class bits of the evt.arg.* parameters (RAE_NRC_*, in IABI so the addon's ingestAbi is checked against them). */
const NRC = {
  PATHARG_SHIFT: IABI.NRC_PATHARG_SHIFT,
  PATH_RAW: IABI.NRC_PATH_RAW,
  NEWPATH: IABI.NRC_NEWPATH,
  MODE_SHIFT: IABI.NRC_MODE_SHIFT,
  MODEFMT_SHIFT: IABI.NRC_MODEFMT_SHIFT,
  FDARG_SHIFT: IABI.NRC_FDARG_SHIFT,
  SETUID: IABI.NRC_SETUID,
  BPF: IABI.NRC_BPF,
  DIRFD: IABI.NRC_DIRFD,
  LINKPATH: IABI.NRC_LINKPATH,
  RES: IABI.NRC_RES,
} as const;
/** IS_STOP: the translator stopped at a SYSCALL record the host translates (evt.arg.uid). */
const STOP_HOST_RECORD = 2;
/**
 * fd.typechar and fd.type of the socket socket(2) made, by its domain: libsinsp's add_socket
 * (parsers.cpp) types AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK sockets, any other domain is
 * SCAP_FD_UNKNOWN ('o', "<NA>"); a failed call makes none.
 */
const SOCKET_TYPE: Readonly<Record<number, readonly [string, string]>> = { [AF.UNIX]: ['u', 'unix'], [AF.INET]: ['4', 'ipv4'], [AF.INET6]: ['6', 'ipv6'], 16: ['n', 'netlink'] };
/** IS_STOP: the translator stopped at a SYSCALL record whose process has no thread entry (IS_LOOKUP set). */
const STOP_UNKNOWN = 3;
/** fd.l4proto by socket type 1..3 (SOCK_STREAM, SOCK_DGRAM, SOCK_RAW). */
const L4 = ['tcp', 'udp', 'raw'] as const;

/** Constant strings after the errno names, in RAE_K_* order from RAE_K_F. */
const KONST = ['f', 'file', 'd', 'directory', '4', 'ipv4', '6', 'ipv6', 'u', 'unix', 'ip'];

/** The constant blob and its (offset, length) table: evt.res by errno (0 = SUCCESS), then KONST, ..., evt.dir, evt.source and the host name. */
function constants(hostname: string): { blob: Uint8Array; table: Int32Array } {
  const strs: string[] = Array.from({ length: IABI.K_ERRNO_END }, (_, e) => (e === 0 ? 'SUCCESS' : (ERRNO[e] ?? '')));
  strs.push(...KONST);
  for (let d = 0; d < 64; d++) strs.push(DOMAINS[d] ?? '');
  for (let r = 0; r < 32; r++) strs.push(PTRACE[r] ?? '');
  for (let r = 0x4200; r < 0x4210; r++) strs.push(PTRACE[r] ?? '');
  strs.push('O_RDONLY', 'O_WRONLY', 'O_RDWR', ...OPEN_FLAGS.map(([, n]) => n));
  strs.push(...L4);
  strs.push(...MODE_FLAGS.map(([, n]) => n));
  strs.push('<', 'syscall', hostname);
  if (strs[IABI.K_HOSTNAME] !== hostname || strs.length !== IABI.K_COUNT || OPEN_FLAGS.length !== IABI.OFLAG_COUNT) throw new Error('ingest: constant table out of step with ingest.h');
  const table = new Int32Array(2 * IABI.K_COUNT);
  const parts: Buffer[] = [];
  let at = 0;
  strs.forEach((str, i) => {
    const b = Buffer.from(str);
    table[2 * i] = at;
    table[2 * i + 1] = b.length;
    parts.push(b);
    at += b.length;
  });
  return { blob: new Uint8Array(Buffer.concat(parts)), table };
}

/** Per syscall number: class bits of the native plan (RAE_NRC_*). */
const NR_CLASS = Int32Array.from({ length: NR_SYSCALLS }, (_, nr) => {
  const name = NAMES[nr]!;
  // facts.flags: open flags, the AT_* flags of unlinkat/linkat, socket(2)'s domain (RAE_NRC_FLAGS_*)
  const flagsFrom =
    name === 'creat' ? 1 : name === 'openat2' ? 2 : name === 'open' ? 3 : name === 'openat' ? 4 : name === 'unlinkat' ? IABI.NRC_FLAGS_AT2 : name === 'linkat' ? IABI.NRC_FLAGS_AT4 : name === 'socket' ? IABI.NRC_FLAGS_DOMAIN : 0;
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

/** The mode parameter of a MODE_ARG entry: argument `i`, or openat2's how.mode (i = 6, aux[1]). */
function modeArg(vd: DataView, off: number, i: number): number {
  return vd.getUint32(off + (i === 6 ? SYSCALL.aux + 8 : SYSCALL.args + 8 * i), true);
}

let nativeCache: NativeIngest | null | undefined;

/** The addon's translator when it loads and speaks this file's numbers, else undefined. */
export function nativeTranslator(): NativeIngest | undefined {
  if (nativeCache === undefined) {
    const loaded = loadNative();
    const n = 'native' in loaded && typeof loaded.native.ingest === 'function' ? loaded.native : undefined;
    nativeCache = n && Object.entries(IABI).every(([k, v]) => n.ingestAbi[k] === v) ? n : null;
  }
  return nativeCache ?? undefined;
}

/**
 * The native plan (ingest.h RAE_IP_*): after the slot triples, each keyed slot's argument as a
 * byte count and its bytes packed four to a word; the slot's field word holds the count's word
 * index above RAE_SLOT_ARG_SHIFT.
 */
function nativePlan(stride: number, head: number, slots: Plan['slots'], consts: Int32Array): Int32Array {
  const keyWords = slots.reduce((n, s) => n + (s.key ? 1 + Math.ceil(s.key.length / 4) : 0), 0);
  const w = new Int32Array(IABI.IP_SLOTS + 3 * slots.length + keyWords);
  w[IABI.IP_STRIDE] = stride;
  w[IABI.IP_HEAD] = head;
  w[IABI.IP_NSLOTS] = slots.length;
  for (let nr = 0; nr < NR_SYSCALLS; nr++) {
    w[IABI.IP_NR + 2 * nr] = TYPE_IDS[nr]!;
    w[IABI.IP_NR + 2 * nr + 1] = NR_CLASS[nr]!;
  }
  w.set(consts, IABI.IP_CONST);
  w.set(
    OPEN_FLAGS.map(([bit]) => bit),
    IABI.IP_OFLAGS,
  );
  let at = IABI.IP_SLOTS + 3 * slots.length;
  slots.forEach(({ slot, field, key }, j) => {
    let word = field;
    if (key) {
      word |= at << IABI.SLOT_ARG_SHIFT;
      w[at] = key.length;
      const packed = new Uint8Array(4 * Math.ceil(key.length / 4));
      packed.set(key);
      w.set(new Int32Array(packed.buffer), at + 1);
      at += 1 + packed.length / 4;
    }
    w.set([word, slot.offset, slot.index], IABI.IP_SLOTS + 3 * j);
  });
  return w;
}

/** Turns kernel record batches into eval records for the running module. */
export class KernelIngest implements RecordTranslator {
  readonly threads = new ThreadTable();
  /** The native translator in use, undefined for the JS one. */
  readonly native: NativeIngest | undefined;
  private readonly state = new Float64Array(IABI.IS_WORDS);
  private offs = new Uint32Array(0);
  private mem!: Uint8Array;
  /** The module's memory, also while fieldsOf translates into its scratch record (thread and container entries live there). */
  private memDv!: DataView;

  /** evt.hostname. */
  readonly hostname: string;
  private readonly konst: { blob: Uint8Array; table: Int32Array };
  /** Boot ns -> epoch ns of the current batch (evt.time, evt.rawtime). */
  private epoch = 0n;

  /** container.* and k8s.* values (rae run feeds it from the metadata cache). */
  readonly containers = new ContainerTable();
  /** The addresses of the rules' domain names, for fd.sip.name and friends (rae run's resolver feeds it). */
  readonly dns = new DnsTable();
  /** Entries for processes first seen in a SYSCALL record; none unless the constructor is given a reader. */
  readonly unknown: UnknownProcesses | undefined;

  /**
   * `native: false` forces the JS translator (tests compare the two); `hostname` is evt.hostname
   * (default: the OS's); `unknownProcesses` reads a process the thread table has no entry for when
   * its first SYSCALL record comes (the live source passes /proc; recordings and synthetic records
   * pass a stand-in or nothing, so their pids are never looked up on this machine).
   */
  constructor(opts: { native?: boolean; hostname?: string; unknownProcesses?: UnknownProcessOptions } = {}) {
    this.threads.containers = this.containers;
    this.unknown = opts.unknownProcesses && new UnknownProcesses(this.threads, opts.unknownProcesses);
    this.native = opts.native === false ? undefined : nativeTranslator();
    this.hostname = opts.hostname ?? osHostname();
    this.konst = constants(this.hostname);
  }

  private readonly plans = new WeakMap<RuleModule, Plan>();
  private bound: RuleModule | undefined;
  private num = 0;
  private u8!: Uint8Array;
  private dv!: DataView;
  private heap = 0;
  /** End of the string area: the batch region's, or the scratch memory's while fieldsOf writes there. */
  private heapEnd = MEM.batchBase + MEM.batchSize;
  private consts = new Map<string, [number, number]>();
  /** fieldsOf's own memory: one eval record of every field this translator writes (SCRATCH), then its strings. */
  private scratch: Uint8Array | undefined;

  private plan(m: RuleModule): Plan {
    let p = this.plans.get(m);
    if (!p) {
      const layout = m.compiled.generated.layouts.syscall;
      const slots: Plan['slots'] = layout.slots.flatMap((slot) => {
        const keyed = slot.ref.arg !== undefined ? BY_KEYED[slot.ref.def.name] : undefined;
        if (keyed) return [{ slot, field: keyed, key: Buffer.from(slot.ref.arg!) }];
        return BY_FIELD[slot.ref.canonical] && (slot.ref.arg === undefined || slot.ref.canonical.startsWith('evt.arg.')) ? [{ slot, field: BY_FIELD[slot.ref.canonical]! }] : [];
      });
      p = { stride: layout.stride, slots, words: nativePlan(layout.stride, REC.present + 8 * layout.words, slots, this.konst.table) };
      this.plans.set(m, p);
    }
    return p;
  }

  /**
   * Applies the process records of view[0..bytes) to the thread table and writes one eval record
   * per SYSCALL record at the module's batch region. Returns the record offsets of the events
   * (event i of the batch = the record at offsets[i]); evaluate with m.evaluateRecords('syscall', n).
   */
  ingest(m: RuleModule, view: Uint8Array, bytes: number, bootToEpochNs = 0n): number[] {
    const n = this.ingestInto(m, view, bytes, bootToEpochNs);
    return Array.from(this.offs.subarray(0, n));
  }

  /**
   * ingest() without an array per batch: returns the number of events; event i's record offset is
   * offsets[i] of the reused `offsets` array, valid until the next call. `bootToEpochNs` turns
   * record times (CLOCK_BOOTTIME) into evt.rawtime/evt.time.
   */
  ingestInto(m: RuleModule, view: Uint8Array, bytes: number, bootToEpochNs = 0n): number {
    this.epoch = BigInt.asUintN(64, bootToEpochNs);
    if (this.bound !== m) {
      this.threads.bind(m.memory);
      this.containers.bind(m.memory, m.compiled.generated.containerKeys);
      this.dns.bind(m.memory, domainNames(m.rules));
      this.bound = m;
      this.mem = new Uint8Array(m.memory.buffer);
      this.u8 = this.mem;
      this.dv = new DataView(m.memory.buffer);
      this.memDv = this.dv;
    }
    this.containers.setBootToEpoch(this.epoch);
    this.threads.setBootToEpoch(this.epoch);
    const plan = this.plan(m);
    this.threads.newBatch();
    this.unknown?.newBatch();
    // records in the first half of the batch region, their strings and lists in the second
    const max = Math.floor(MEM.batchSize / 2 / plan.stride);
    if (this.offs.length < max) this.offs = new Uint32Array(max);
    if (this.native) return this.ingestNative(this.native, plan, max, view, bytes);
    const vd = new DataView(view.buffer, view.byteOffset, view.byteLength);
    const offsets = this.offs;
    let n = 0;
    const head = REC.present + 8 * m.compiled.generated.layouts.syscall.words; // header + presence words
    this.heap = MEM.batchBase + MEM.batchSize / 2;
    this.consts.clear();
    for (let off = 0; off + SIZES.hdr <= bytes; ) {
      const len = vd.getUint32(off + HDR.len, true);
      if (len < SIZES.hdr || len % 8 !== 0 || off + len > bytes) break;
      if (vd.getUint16(off + HDR.kind, true) === KIND.SYSCALL) {
        if (n < max && len >= SIZES.syscall) {
          this.unknown?.fill(view, off);
          const at = MEM.batchBase + n * plan.stride;
          this.u8.fill(0, at, at + head);
          this.record(plan, view, vd, off, at);
          offsets[n++] = off;
        }
      } else this.applyProcess(view, off);
      off += len;
    }
    return n;
  }

  /** The record offsets of the last ingestInto() batch (reused: copy what must outlive the next call). */
  get offsets(): Uint32Array {
    return this.offs;
  }

  /** The same pass in C: the translator stops at each process record, which the table applies here. */
  private ingestNative(native: NativeIngest, plan: Plan, max: number, view: Uint8Array, bytes: number): number {
    const st = this.state;
    st[IABI.IS_EVENTS] = 0;
    st[IABI.IS_MAX] = max;
    st[IABI.IS_HEAP] = MEM.batchBase + MEM.batchSize / 2;
    st[IABI.IS_HEAP_END] = MEM.batchBase + MEM.batchSize;
    st[IABI.IS_NUM] = this.num;
    st[IABI.IS_BASE] = MEM.batchBase;
    st[IABI.IS_CONST] = 0;
    st[IABI.IS_EPOCH_LO] = Number(this.epoch & 0xffffffffn);
    st[IABI.IS_EPOCH_HI] = Number(this.epoch >> 32n);
    st[IABI.IS_LOOKUP] = this.unknown ? 1 : 0;
    const { tidPid, pidAddr } = this.threads;
    this.consts.clear();
    for (let off = 0; ; ) {
      off = native.ingest(view, off, bytes, this.mem, plan.words, this.konst.blob, tidPid, pidAddr, st, this.offs, this.threads.starts);
      if (st[IABI.IS_STOP] === STOP_HOST_RECORD) {
        off = this.hostRecord(plan, view, off);
        continue;
      }
      if (st[IABI.IS_STOP] === STOP_UNKNOWN) {
        // filled, the pass resumes at the record; left unknown (no room in the table), the host writes it
        if (!this.unknown!.fill(view, off)) off = this.hostRecord(plan, view, off);
        continue;
      }
      if (st[IABI.IS_STOP] !== 1) break;
      this.applyProcess(view, off);
      off += view[off + HDR.len]! | (view[off + HDR.len + 1]! << 8) | (view[off + HDR.len + 2]! << 16) | (view[off + HDR.len + 3]! << 24);
    }
    this.num = st[IABI.IS_NUM]!;
    return st[IABI.IS_EVENTS]!;
  }

  /** Applies the process record at view[off..] to the thread table; a FORK's unknown parent is read first (unknown-process.ts). */
  private applyProcess(view: Uint8Array, off: number): void {
    this.unknown?.beforeFork(view, off);
    this.threads.apply(view, off);
  }

  /** The native translator's event at `off` written by the JS one (its state in and out); returns the next record's offset. */
  private hostRecord(plan: Plan, view: Uint8Array, off: number): number {
    const st = this.state;
    const n = st[IABI.IS_EVENTS]!;
    const at = MEM.batchBase + n * plan.stride;
    this.heap = st[IABI.IS_HEAP]!;
    this.num = st[IABI.IS_NUM]!;
    this.u8.fill(0, at, at + plan.words[IABI.IP_HEAD]!);
    const vd = new DataView(view.buffer, view.byteOffset, view.byteLength);
    this.record(plan, view, vd, off, at);
    this.offs[n] = off;
    st[IABI.IS_EVENTS] = n + 1;
    st[IABI.IS_HEAP] = this.heap;
    st[IABI.IS_NUM] = this.num;
    return off + vd.getUint32(off + HDR.len, true);
  }

  /** Writes the eval record of the SYSCALL record at `off` at `at`; `thread` is its process's entry (default: the table's now). */
  private record(plan: Plan, view: Uint8Array, vd: DataView, off: number, at: number, thread = this.threads.entryOfPid(vd.getUint32(off + HDR.pid, true))): void {
    const nr = vd.getUint16(off + HDR.nr, true);
    const dv = this.dv;
    dv.setUint32(at + REC.type, nr < NR_SYSCALLS ? TYPE_IDS[nr]! : 0, true);
    dv.setUint32(at + REC.thread, thread, true);
    this.num++;
    if (plan.slots.length === 0) return;
    this.facts(view, vd, off, nr);
    this.f.thread = dv.getUint32(at + REC.thread, true);
    for (let j = 0; j < plan.slots.length; j++) {
      const { slot, field, key } = plan.slots[j]!;
      this.key = key;
      if (!this.value(field, view, vd, off, at + slot.offset)) continue;
      const w = at + REC.present + 4 * (slot.index >> 5);
      dv.setUint32(w, dv.getUint32(w, true) | (1 << (slot.index & 31)), true);
    }
  }

  /** The argument of the keyed field value() is writing (proc.env[NAME]'s NAME). */
  private key: Uint8Array | undefined;
  // The facts of the record being written (one reused object, no allocation per event).
  private readonly f = { name: '', cls: 0, ret: 0, fdName: 0, fdLen: 0, rawOff: 0, rawLen: 0, file: false, dirFlag: false, flags: 0, client: 0, server: 0, local: 0, peer: 0, servSock: false, fam: 0, thread: 0 };

  private facts(view: Uint8Array, vd: DataView, off: number, nr: number): void {
    const f = this.f;
    const name = nr < NR_SYSCALLS ? NAMES[nr]! : '';
    const po = vd.getUint16(off + SYSCALL.path, true);
    const pl = vd.getUint16(off + SYSCALL.path + 2, true);
    const d0 = vd.getUint16(off + SYSCALL.dir, true);
    const dl = vd.getUint16(off + SYSCALL.dir + 2, true);
    f.fdName = 0;
    f.fdLen = 0;
    if (po !== 0) {
      if (view[off + po] === 47 || d0 === 0) {
        f.fdName = -(off + po) - 1; // a range in the kernel view, copied on first use
        f.fdLen = pl;
      } else {
        const slash = dl > 0 && view[off + d0 + dl - 1] === 47 ? 0 : 1;
        const at = this.alloc(dl + slash + pl);
        if (at !== 0) {
          this.u8.set(view.subarray(off + d0, off + d0 + dl), at);
          if (slash) this.u8[at + dl] = 47;
          this.u8.set(view.subarray(off + po, off + po + pl), at + dl + slash);
          f.fdName = at;
          f.fdLen = dl + slash + pl;
        }
      }
    }
    if (f.fdLen > 0 && needsNormalize(f.fdName < 0 ? view : this.u8, f.fdName < 0 ? -f.fdName - 1 : f.fdName, f.fdLen)) {
      const from = f.fdName < 0 ? view.subarray(-f.fdName - 1, -f.fdName - 1 + f.fdLen) : this.u8.subarray(f.fdName, f.fdName + f.fdLen);
      const norm = Buffer.from(posix.normalize(Buffer.from(from).toString('latin1')), 'latin1');
      const at = this.alloc(norm.length);
      f.fdName = at;
      f.fdLen = at === 0 ? 0 : norm.length;
      if (at !== 0) this.u8.set(norm, at);
    }
    const flagsAt = name === 'openat2' ? SYSCALL.aux : name === 'open' ? SYSCALL.args + 8 : name === 'openat' || name === 'unlinkat' ? SYSCALL.args + 16 : name === 'linkat' ? SYSCALL.args + 32 : name === 'socket' ? SYSCALL.args : -1;
    f.flags = name === 'creat' ? 0x241 : flagsAt >= 0 ? vd.getUint32(off + flagsAt, true) : 0;
    const server = SERVER_SIDE.has(name);
    f.name = name;
    f.cls = nr < NR_SYSCALLS ? NR_CLASS[nr]! : 0;
    f.ret = Number(vd.getBigInt64(off + HDR.ret, true));
    f.rawOff = po ? off + po : 0;
    f.rawLen = pl;
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

  /** Writes the 8 bytes of one field at `to`; false when the record does not provide it. */
  private value(field: number, view: Uint8Array, vd: DataView, off: number, to: number): boolean {
    const f = this.f;
    const ok = f.ret >= 0;
    switch (field) {
      case F.NUM:
        return this.num64(to, this.num);
      case F.RAWRES:
        return this.num64(to, f.ret);
      case F.FAILED:
        return this.num64(to, ok ? 0 : 1);
      case F.RES: {
        const e = ok ? 'SUCCESS' : ERRNO[-f.ret];
        return e !== undefined && this.constant(e, to);
      }
      case F.FDNUM:
        if (FD_FROM_RET.has(f.name)) return this.num64(to, ok ? f.ret : -1); // a failed call: -1
        if (FD_FROM_ARG0.has(f.name)) return this.num64(to, vd.getInt32(off + SYSCALL.args, true));
        return false;
      case F.NAME:
        // an opened file, a unix socket's path or an IPv4 tuple (other syscalls' paths are no fd's name)
        if (f.fdLen === 0 && f.fdName === 0) return (f.fam === AF.INET || f.fam === AF.INET6) && (f.servSock ? this.constant(endpointText(vd, f.server), to) : this.tupleName(vd, to));
        return (f.file || f.fam === AF.UNIX) && this.fdName(view, to);
      case F.NAMERAW:
        if (!f.file) return this.value(F.NAME, view, vd, off, to);
        return f.rawOff !== 0 && this.copyRange(view, f.rawOff, f.rawLen, to);
      case F.DIR:
      case F.FILE: {
        if (!f.file || (f.fdLen === 0 && f.fdName === 0) || !this.fdName(view, to)) return false;
        const a = f.fdName;
        const l = f.fdLen;
        let k = l - 1;
        while (k >= 0 && this.u8[a + k] !== 47) k--;
        if (field === F.FILE) return this.ref(to, a + k + 1, l - k - 1);
        return k >= 0 && this.ref(to, a, k === 0 ? 1 : k);
      }
      case F.TYPECHAR:
      case F.TYPE: {
        const i = field === F.TYPECHAR ? 0 : 1;
        if (f.file) return this.constant(f.dirFlag ? (['d', 'directory'] as const)[i] : (['f', 'file'] as const)[i], to);
        if (f.name === 'socket') return f.ret >= 0 && this.constant(SOCKET_TYPE[f.flags]?.[i] ?? (['o', '<NA>'] as const)[i], to);
        if (f.fam === AF.INET) return this.constant((['4', 'ipv4'] as const)[i], to);
        if (f.fam === AF.INET6) return this.constant((['6', 'ipv6'] as const)[i], to);
        if (f.fam === AF.UNIX) return this.constant((['u', 'unix'] as const)[i], to);
        return false;
      }
      case F.FAMILY:
        if (f.name === 'socket') return f.ret >= 0 && (f.flags === AF.INET || f.flags === AF.INET6 ? this.constant('ip', to) : f.flags === AF.UNIX && this.constant('unix', to));
        return f.fam === AF.INET || f.fam === AF.INET6 ? this.constant('ip', to) : f.fam === AF.UNIX && this.constant('unix', to);
      case F.READ:
      case F.WRITE:
      case F.CREATE: {
        if (!f.file) return field !== F.CREATE && this.num64(to, 0); // false for other syscalls
        const acc = f.flags & O_ACCMODE;
        const v = field === F.READ ? acc === 0 || acc === 2 : field === F.WRITE ? acc === 1 || acc === 2 : (f.flags & O_CREAT) !== 0;
        return this.num64(to, v ? 1 : 0);
      }
      case F.SIP:
        return this.ip(view, vd, f.server, to);
      case F.CIP:
        return this.ip(view, vd, f.client, to);
      case F.LIP:
        return this.ip(view, vd, f.local, to);
      case F.RIP:
        return this.ip(view, vd, f.peer, to);
      case F.SPORT:
        return this.port(vd, f.server, to);
      case F.CPORT:
        return this.port(vd, f.client, to);
      case F.LPORT:
        return this.port(vd, f.local, to);
      case F.RPORT:
        return this.port(vd, f.peer, to);
      case F.IPS:
      case F.PORTS: {
        const at = this.alloc(16);
        if (at === 0) return false;
        let n = 0;
        for (const sa of [f.client, f.server]) {
          if (field === F.IPS ? this.ip(view, vd, sa, at + 8 * n) : this.port(vd, sa, at + 8 * n)) n++;
        }
        return n > 0 && this.ref(to, at, n);
      }
      case F.ARG_FLAGS:
        if (f.name === 'unlinkat' || f.name === 'linkat') return this.constant(atFlags(f.flags), to);
        return f.file && this.constant(openFlags(f.flags), to);
      case F.ARG_TARGET:
        return f.rawOff !== 0 && this.copyRange(view, f.rawOff, f.rawLen, to);
      case F.L4PROTO: {
        const t = l4Type(f.name, f.fam, vd, off);
        return t !== undefined && this.constant(L4[t - 1]!, to);
      }
      case F.CONNECTED:
        return this.num64(to, f.name === 'connect' ? (f.ret >= 0 || f.ret === -115 ? 1 : 0) : SERVER_SIDE.has(f.name) ? 1 : 0);
      case F.NAME_CHANGED:
        return this.num64(to, (f.name === 'sendto' || f.name === 'sendmsg') && vd.getUint16(off + SYSCALL.peer + SOCKADDR.family, true) !== 0 ? 1 : 0);
      case F.DURATION: {
        const start = f.thread === 0 ? undefined : this.threads.startOf(f.thread);
        if (start === undefined) return false;
        const d = BigInt.asIntN(64, vd.getBigUint64(off + HDR.ts_ns, true) - start);
        this.dv.setBigInt64(to, d, true);
        return true;
      }
      case F.CTR_DURATION: {
        // the process's container entry holds start_ts as epoch ns (container/table.ts)
        const md = this.memDv;
        const ctr = f.thread === 0 ? 0 : md.getUint32(f.thread + THREAD.ctr, true);
        if (ctr === 0 || (md.getUint32(ctr + CTR.present, true) & CTR_START_BIT) === 0) return false;
        const now = vd.getBigUint64(off + HDR.ts_ns, true) + this.epoch;
        this.dv.setBigInt64(to, BigInt.asIntN(64, now - md.getBigUint64(ctr + CTR.startTs, true)), true);
        return true;
      }
      case F.ARG_NAME:
      case F.ARG_PATH:
      case F.ARG_FILENAME:
      case F.ARG_OLDPATH:
        // the syscall's path parameter: a relative one resolved like fd.name, else as passed
        if (PATH_FIELD[(f.cls >> NRC.PATHARG_SHIFT) & 7] !== field || f.rawOff === 0) return false;
        if ((f.cls & NRC.PATH_RAW) === 0 && f.rawLen > 0 && view[f.rawOff] !== 47) return this.fdName(view, to);
        return this.copyRange(view, f.rawOff, f.rawLen, to);
      case F.ARG_NEWPATH:
        return (f.cls & NRC.NEWPATH) !== 0 && this.newPath(view, vd, off, to);
      case F.ARG_MODE: {
        const m = MODE_ARG[f.name];
        if (m === undefined) return false;
        const v = modeArg(vd, off, m[0]);
        return this.constant(m[1] === 'chmod' ? chmodMode(v) : m[1] === 'open' ? openMode(f.flags, v) : hexMode(v), to);
      }
      case F.ARG_FD: {
        const k = FD_ARG[f.name];
        return (
          k !== undefined &&
          this.constant(
            fdText(k === 'ret' ? f.ret : vd.getInt32(off + SYSCALL.args, true), (e) => ERRNO[e]),
            to,
          )
        );
      }
      case F.ARG_UID: {
        if (f.name !== 'setuid') return false;
        const uid = vd.getUint32(off + SYSCALL.args, true);
        return this.constant(uidText(uid, this.threads.userName(uid)), to);
      }
      case F.ARG_CMD:
        return f.name === 'bpf' && this.constant(String(vd.getInt32(off + SYSCALL.args, true)), to);
      case F.ARG_PID:
        return (f.cls & IABI.NRC_PTRACE) !== 0 && this.constant(String(vd.getInt32(off + SYSCALL.args + 8, true)), to);
      case F.ARG_DIRFD:
        return (
          (f.cls & NRC.DIRFD) !== 0 &&
          this.constant(
            fdText(vd.getInt32(off + SYSCALL.args, true), (e) => ERRNO[e]),
            to,
          )
        );
      case F.ARG_RES:
        return (
          (f.cls & NRC.RES) !== 0 &&
          this.constant(
            resArgText(f.ret, (e) => ERRNO[e]),
            to,
          )
        );
      case F.ARG_LINKPATH:
        return (f.cls & NRC.LINKPATH) !== 0 && this.newPath(view, vd, off, to);
      case F.PROC_ENV: {
        // proc.env[NAME]: the variable's value in the process's environment, "" when it has none
        // (sinsp_filtercheck_thread.cpp TYPE_ENV: tinfo->get_env(m_argname), no ancestor lookup:
        // that is proc.aenv[NAME]); missing when the process or its environment is unknown
        const md = this.memDv;
        if (f.thread === 0 || this.key === undefined || (md.getUint32(f.thread + THREAD.present, true) & TP.ENV) === 0) return false;
        const mem = this.mem;
        const [at, len] = envValue(mem, md.getUint32(f.thread + THREAD.env, true), md.getUint32(f.thread + THREAD.env + 4, true), this.key);
        const dst = this.alloc(len);
        if (dst === 0) return false;
        this.u8.set(mem.subarray(at, at + len), dst);
        return this.ref(to, dst, len);
      }
      case F.TID:
        return this.num64(to, vd.getUint32(off + HDR.tid, true));
      case F.RAWTIME:
        this.dv.setBigUint64(to, BigInt.asUintN(64, vd.getBigUint64(off + HDR.ts_ns, true) + this.epoch), true);
        return true;
      case F.TIME: {
        const b = Buffer.from(String(BigInt.asUintN(64, vd.getBigUint64(off + HDR.ts_ns, true) + this.epoch)));
        const at = this.alloc(b.length);
        if (at === 0) return false;
        this.u8.set(b, at);
        return this.ref(to, at, b.length);
      }
      case F.DIRECTION:
        return this.constant('<', to);
      case F.SOURCE:
        return this.constant('syscall', to);
      case F.HOSTNAME:
        return this.constant(this.hostname, to);
      case F.BUFFER:
      case F.ARG_DATA: {
        // the record's I/O buffer: evt.buffer its bytes, evt.arg.data its printable rendering (render.ts printableData; ingest.c data_value)
        const o = vd.getUint16(off + SYSCALL.data, true);
        const l = vd.getUint16(off + SYSCALL.data + 2, true);
        if (!DATA_ARG.has(f.name) || o === 0) return false;
        if (field === F.BUFFER) return this.copyRange(view, off + o, l, to);
        const at = this.alloc(l);
        if (at === 0) return false;
        this.u8.set(printableData(view.subarray(off + o, off + o + l)), at);
        return this.ref(to, at, l);
      }
      case F.OPEN_EXEC: {
        const m = f.file ? MODE_ARG[f.name] : undefined;
        return this.num64(to, m !== undefined && isOpenExec(f.flags, modeArg(vd, off, m[0])) ? 1 : 0);
      }
      case F.SIP_NAME:
        return this.endpointName(view, vd, f.server, to);
      case F.CIP_NAME:
        return this.endpointName(view, vd, f.client, to);
      case F.LIP_NAME:
        return this.endpointName(view, vd, f.local, to);
      case F.RIP_NAME:
        return this.endpointName(view, vd, f.peer, to);
      case F.ARG_DOMAIN:
        return f.name === 'socket' && this.constant(socketDomain(Number(vd.getBigInt64(off + SYSCALL.args, true))), to);
      case F.ARG_REQUEST:
        return f.name === 'ptrace' && this.constant(ptraceRequest(Number(vd.getBigInt64(off + SYSCALL.args, true))), to);
      default:
        return false;
    }
  }

  /** proc.env[NAME] of the process whose entry is at `thread` as text; undefined when unknown. */
  private envText(thread: number, key: Uint8Array): string | undefined {
    const md = this.memDv;
    if (thread === 0 || (md.getUint32(thread + THREAD.present, true) & TP.ENV) === 0) return undefined;
    const [at, len] = envValue(this.mem, md.getUint32(thread + THREAD.env, true), md.getUint32(thread + THREAD.env + 4, true), key);
    return Buffer.from(this.mem.subarray(at, at + len)).toString('utf8');
  }

  /** evt.arg.newpath: the second path, a relative one joined with dir2 and normalized as fd.name is. */
  private newPath(view: Uint8Array, vd: DataView, off: number, to: number): boolean {
    const po = vd.getUint16(off + SYSCALL.path2, true);
    const pl = vd.getUint16(off + SYSCALL.path2 + 2, true);
    const d0 = vd.getUint16(off + SYSCALL.dir2, true);
    const dl = vd.getUint16(off + SYSCALL.dir2 + 2, true);
    if (po === 0) return false;
    if (pl === 0 || view[off + po] === 47 || d0 === 0) return this.copyRange(view, off + po, pl, to);
    const slash = dl > 0 && view[off + d0 + dl - 1] === 47 ? 0 : 1;
    const n = dl + slash + pl;
    const at = this.alloc(n);
    if (at === 0) return false;
    this.u8.set(view.subarray(off + d0, off + d0 + dl), at);
    if (slash) this.u8[at + dl] = 47;
    this.u8.set(view.subarray(off + po, off + po + pl), at + dl + slash);
    if (this.u8[at] !== 47 || !needsNormalize(this.u8, at, n)) return this.ref(to, at, n);
    const norm = Buffer.from(posix.normalize(Buffer.from(this.u8.subarray(at, at + n)).toString('latin1')), 'latin1');
    const nat = this.alloc(norm.length);
    if (nat === 0) return false;
    this.u8.set(norm, nat);
    return this.ref(to, nat, norm.length);
  }

  private num64(to: number, v: number): true {
    this.dv.setUint32(to, v >>> 0, true);
    this.dv.setInt32(to + 4, Math.floor(v / 4294967296), true);
    return true;
  }

  private ref(to: number, addr: number, len: number): true {
    this.dv.setUint32(to, addr, true);
    this.dv.setUint32(to + 4, len, true);
    return true;
  }

  /** fd.name as a ref (copying the kernel range into the heap on first use). */
  private fdName(view: Uint8Array, to: number): boolean {
    const f = this.f;
    if (f.fdName < 0) {
      const at = this.alloc(f.fdLen);
      if (at === 0) return false;
      const from = -f.fdName - 1;
      this.u8.set(view.subarray(from, from + f.fdLen), at);
      f.fdName = at;
    }
    return f.fdName !== 0 && this.ref(to, f.fdName, f.fdLen);
  }

  private copyRange(view: Uint8Array, from: number, len: number, to: number): boolean {
    const at = this.alloc(len);
    if (at === 0) return false;
    this.u8.set(view.subarray(from, from + len), at);
    return this.ref(to, at, len);
  }

  /** An IP end's address; `sa` -1 = no such end (a server socket's client, local and remote ends). */
  private ip(view: Uint8Array, vd: DataView, sa: number, to: number): boolean {
    if (sa < 0) return false;
    const fam = vd.getUint16(sa + SOCKADDR.family, true);
    const n = fam === AF.INET ? 4 : fam === AF.INET6 ? 16 : 0;
    return n !== 0 && this.copyRange(view, sa + SOCKADDR.addr, n, to);
  }

  /**
   * An IP end's domain name: the name the DNS table of the module's memory gives its address
   * (dns/table.ts, libsinsp sinsp_filtercheck_fd.cpp TYPE_SERVERIP_NAME... extracting
   * sinsp_dns_manager::name_of); none for an address no rule's name resolved to.
   */
  private endpointName(view: Uint8Array, vd: DataView, sa: number, to: number): boolean {
    if (sa < 0) return false;
    const fam = vd.getUint16(sa + SOCKADDR.family, true);
    const n = fam === AF.INET ? 4 : fam === AF.INET6 ? 16 : 0;
    const found = n === 0 ? undefined : lookupName(this.memDv, this.mem, view, sa + SOCKADDR.addr, n);
    if (!found) return false;
    if (this.u8 === this.mem) return this.ref(to, found[0], found[1]);
    return this.copyRange(this.mem, found[0], found[1], to);
  }

  private port(vd: DataView, sa: number, to: number): boolean {
    if (sa < 0) return false;
    const fam = vd.getUint16(sa + SOCKADDR.family, true);
    return (fam === AF.INET || fam === AF.INET6) && this.num64(to, vd.getUint16(sa + SOCKADDR.port, true));
  }

  /** `cip:cport->sip:sport` of an IP socket, each end as connTuple renders it. */
  private tupleName(vd: DataView, to: number): boolean {
    return this.constant(connTuple(vd, this.f.client, this.f.server), to);
  }

  private constant(s: string, to: number): boolean {
    let v = this.consts.get(s);
    if (v === undefined) {
      const b = Buffer.from(s);
      const at = this.alloc(b.length);
      if (at === 0) return false;
      this.u8.set(b, at);
      v = [at, b.length];
      this.consts.set(s, v);
    }
    return this.ref(to, v[0], v[1]);
  }

  private alloc(n: number): number {
    const at = this.heap;
    if (at + n > this.heapEnd) return 0;
    this.heap = (at + n + 7) & ~7;
    return at;
  }

  /**
   * The fields of event i of the last ingested batch (its kernel record at `recordOffset`) as a
   * field-event object, for alert formatting of matches, the reference interpreter and tests: the
   * record translated once more, by this file's translator, into a scratch eval record holding
   * every field it writes (SCRATCH), whose slots are then read back by kind (fields.ts
   * recordFields); evt.type from the record's syscall number, process fields from the thread
   * entry the batch's eval record points at, container fields from its container entry.
   */
  fieldsOf(m: RuleModule, view: Uint8Array, recordOffset: number, event: number): Record<string, unknown> {
    const mem = new DataView(m.memory.buffer);
    const thread = mem.getUint32(MEM.batchBase + event * this.plan(m).stride + REC.thread, true);
    const vd = new DataView(view.buffer, view.byteOffset, view.byteLength);
    const nr = vd.getUint16(recordOffset + HDR.nr, true);
    const scratch = (this.scratch ??= new Uint8Array(SCRATCH_BYTES));
    const saved = { u8: this.u8, dv: this.dv, heap: this.heap, heapEnd: this.heapEnd, consts: this.consts, num: this.num };
    try {
      this.u8 = scratch;
      this.dv = new DataView(scratch.buffer);
      this.heap = SCRATCH.layout.stride;
      this.heapEnd = scratch.length;
      this.consts = new Map();
      scratch.fill(0, 0, SCRATCH.layout.stride);
      this.record(SCRATCH.plan, view, vd, recordOffset, 0, thread);
      const name = nr < NR_SYSCALLS ? NAMES[nr]! : '';
      const out: Record<string, unknown> = { 'evt.type': name, ...recordFields(scratch, 0, SCRATCH.layout) };
      // evt.args: an output field, rendered here from the record and the fields above
      const args = evtArgs(name, view, vd, recordOffset, Number(vd.getBigInt64(recordOffset + HDR.ret, true)), out, (e) => ERRNO[e]);
      if (args !== undefined) out['evt.args'] = args;
      Object.assign(out, processFields(m.memory, thread));
      // keyed process fields the module reads (proc.env[NAME]), from the thread entry as its translator wrote them
      for (const { slot, key } of this.plan(m).slots) {
        const v = key && this.envText(thread, key);
        if (v !== undefined) out[slot.ref.canonical] = v;
      }
      if (thread !== 0) Object.assign(out, containerFields(m.memory, mem.getUint32(thread + THREAD.ctr, true), m.compiled.generated.containerKeys));
      return out;
    } finally {
      Object.assign(this, saved);
    }
  }
}
