// Host mirror of the evaluator layout in probes/src/eval_abi.h (included from events.h, the
// single source of truth): the memory map of a compiled rule module, the eval record header,
// the thread entry, the state region and the match record. test/runtime/abi-layout.test.ts
// compares every number here with the C compiler's and with assembly/abi.ts.
import { EVENT_NAMES } from './event-names.js';

/** RAE_ABI_VERSION: bumped on any layout change (of the module's memory or of the kernel records, which share it). */
export const ABI_VERSION = 8;

/** Memory map of a module's linear memory (RAE_EVAL_*). */
export const MEM = {
  pages: 512,
  bytes: 0x2000000,
  staticEnd: 0x100000,
  stateBase: 0x100000,
  stateSize: 0x800000,
  batchBase: 0x900000,
  batchSize: 0x1400000,
  outBase: 0x1d00000,
  outSize: 0x100000,
  scratchBase: 0x1e00000,
  scratchSize: 0x100000,
} as const;

/** RAE_EVAL_MAX_DEPTH (strings have no limit of their own: see eval_abi.h). */
export const LIMITS = { maxDepth: 16 } as const;

/** Event sources as evaluate() numbers them (RAE_SRC_*). */
export const SRC = { syscall: 0, k8s_audit: 1 } as const;

/** struct rae_eval_rec header offsets (RAE_REC_*). */
export const REC = { type: 0, thread: 4, present: 8 } as const;

/** struct rae_thread offsets and size. */
export const THREAD = {
  tid: 0,
  pid: 4,
  parent: 8,
  present: 12,
  vpid: 16,
  loginuid: 24,
  tty: 32,
  uid: 36,
  gid: 40,
  flags: 44,
  name: 48,
  exe: 56,
  exepath: 64,
  cmdline: 72,
  args: 80,
  cwd: 88,
  env: 96,
  user: 104,
  group: 112,
  container: 120,
  exe_ino_ctime: 128,
  ctr: 136,
  exe_ino_mtime: 144,
  exe_ino_ctime_proc: 152,
  sid: 160,
  vpgid: 164,
  sname: 168,
  loginname: 176,
  cap_inh: 184,
  cap_prm: 192,
  cap_eff: 200,
  size: 208,
} as const;

/** rae_thread.present bits (RAE_TP_*). */
export const TP = {
  PID: 0x1,
  VPID: 0x2,
  LOGINUID: 0x4,
  TTY: 0x8,
  UID: 0x10,
  GID: 0x20,
  NAME: 0x40,
  EXE: 0x80,
  EXEPATH: 0x100,
  CMDLINE: 0x200,
  ARGS: 0x400,
  CWD: 0x800,
  ENV: 0x1000,
  USER: 0x2000,
  GROUP: 0x4000,
  CONTAINER: 0x8000,
  EXE_CTIME: 0x10000,
  IMAGE: 0x20000,
  EXE_MTIME: 0x40000,
  EXE_CTIME_PROC: 0x80000,
  EXE_WRITABLE: 0x100000,
  EXE_UPPER: 0x200000, // proc.is_exe_upper_layer and proc.is_exe_lower_layer: one overlay check decides both
  EXE_MEMFD: 0x400000,
  PRIVILEGED: 0x800000,
  SID: 0x1000000,
  VPGID: 0x2000000,
  SNAME: 0x4000000,
  LOGINNAME: 0x8000000,
  CAP_INH: 0x10000000,
  CAP_PRM: 0x20000000,
  CAP_EFF: 0x40000000,
} as const;

/** rae_thread.flags bits (RAE_TF_*). */
export const TF = { EXE_WRITABLE: 0x1, EXE_UPPER: 0x2, EXE_MEMFD: 0x4, PRIVILEGED: 0x8, EXE_LOWER: 0x10 } as const;

/** The persistent state region (RAE_STATE_*), absolute addresses. */
export const STATE = {
  hdrSize: 64,
  threads: 0x100000 + 64,
  threadSlots: 16384,
  fds: 0x100000 + 64 + 16384 * 208,
  fdSlots: 32768,
  fdSize: 16,
  users: 0x100000 + 64 + 16384 * 208 + 32768 * 16,
  nameSlots: 1024,
  nameSize: 12,
  groups: 0x100000 + 64 + 16384 * 208 + 32768 * 16 + 1024 * 12,
  heap: 0x100000 + 64 + 16384 * 208 + 32768 * 16 + 2 * 1024 * 12,
  /** The container table (RAE_STATE_CONTAINERS). */
  containers: 0x900000 - 256 * 4096,
  /** The DNS name table (RAE_STATE_DNS): the heap ends here. */
  dns: 0x900000 - 256 * 4096 - 0x40000,
} as const;

/** The DNS name table's layout (RAE_DNS_*): entry count, sorted entries (address, its length, the name's ref), then the names. */
export const DNS = { size: 0x40000, slots: 4096, entrySize: 32, count: 0, entries: 64, alen: 16, name: 24 } as const;

/** A container table entry (RAE_CTR_*): present bits at 12, flags at 16, start_ts at 24, string refs from 32, keyed refs after them, strings after those. */
export const CTR = { present: 12, flags: 16, startTs: 24, refs: 32, refSlots: 24, keys: 32 + 24 * 8, keySlots: 32, strings: 32 + 24 * 8 + 32 * 8, size: 4096, slots: 256 } as const;

/** A string field of an entry: its ref index (present bit 1 << index). */
export const CTR_STRINGS: readonly string[] = [
  'container.full_id',
  'container.name',
  'container.image',
  'container.image.id',
  'container.image.repository',
  'container.image.tag',
  'container.image.digest',
  'container.type',
  'container.mounts',
  'container.ip',
  'container.labels',
  'k8s.pod.name',
  'k8s.ns.name',
  'k8s.pod.id',
  'k8s.pod.uid',
  'k8s.pod.sandbox_id',
  'k8s.pod.full_sandbox_id',
  'k8s.pod.labels',
  'k8s.pod.ip',
];
/** The boolean fields: present bit 1 << (24 + index), value bit 1 << index of `flags`. */
export const CTR_FLAGS: readonly string[] = ['container.privileged', 'container.host_pid', 'container.host_network', 'container.host_ipc'];
/** container.start_ts's present bit (the value is the i64 at CTR.startTs). */
export const CTR_START_BIT = 1 << 30;
/** Present bit of a boolean field. */
export const flagBit = (i: number): number => 1 << (24 + i);
/** The fields whose argument selects a value (the module's key list holds their canonical texts). */
export const CTR_KEYED = new Set(['container.label', 'container.mount', 'container.mount.source', 'container.mount.dest', 'container.mount.mode', 'container.mount.rdwr', 'container.mount.propagation', 'k8s.pod.label']);

/** One keyed field of a module: its canonical text (the key of outputs), name and argument. */
export interface ContainerKey {
  canonical: string;
  name: string;
  arg: string;
}

/** struct rae_match (RAE_MATCH_SIZE). */
export const MATCH_SIZE = 8;

/** RAE_MATCH_REFERENCE: the rule id of a match record that hands its event to the reference interpreter. */
export const MATCH_REFERENCE = 0xffffffff;

/** Every evt.type name in a fixed order; an event type's id is its index + 1 (0 = none). */
export const EVT_TYPES: readonly string[] = [...EVENT_NAMES].sort();
const TYPE_IDS = new Map(EVT_TYPES.map((n, i) => [n, i + 1]));

/** The evt.type id written in rae_eval_rec.type (0 for an unknown or absent type). */
export function evtTypeId(name: string | undefined): number {
  return name === undefined ? 0 : (TYPE_IDS.get(name) ?? 0);
}

/** The values of one container entry: CTR_STRINGS, CTR_FLAGS and the module's keyed fields, each in its list's order; undefined = missing. */
export interface ContainerEntry {
  strings: readonly (string | undefined)[];
  flags: readonly (boolean | undefined)[];
  /** container.start_ts, epoch ns. */
  startTs?: bigint;
  keyed: readonly (string | undefined)[];
}

/**
 * Writes the container entry (struct rae_ctr) at `at`: its present bits, flags, start_ts and
 * string refs. `place(refAt, text)` stores a string wherever the writer keeps them (inside the
 * entry for the container table, the batch heap for field events) and writes its {u32 addr,
 * u32 len} at `refAt`; false = no room, and the value is missing. Returns how many values found no room.
 */
export function writeContainerEntry(dv: DataView, at: number, e: ContainerEntry, place: (refAt: number, text: string) => boolean): number {
  new Uint8Array(dv.buffer, dv.byteOffset).fill(0, at, at + CTR.keys).fill(0xff, at + CTR.keys, at + CTR.strings);
  let present = 0;
  let flags = 0;
  let unplaced = 0;
  e.strings.forEach((v, i) => {
    if (v === undefined) return;
    if (place(at + CTR.refs + 8 * i, v)) present |= 1 << i;
    else unplaced++;
  });
  e.flags.forEach((v, i) => {
    if (v === undefined) return;
    present |= flagBit(i);
    if (v) flags |= 1 << i;
  });
  if (e.startTs !== undefined) {
    dv.setBigInt64(at + CTR.startTs, BigInt.asIntN(64, e.startTs), true);
    present |= CTR_START_BIT;
  }
  e.keyed.slice(0, CTR.keySlots).forEach((v, i) => {
    if (v !== undefined && !place(at + CTR.keys + 8 * i, v)) unplaced++;
  });
  dv.setUint32(at + CTR.present, present, true);
  dv.setUint32(at + CTR.flags, flags, true);
  return unplaced;
}
