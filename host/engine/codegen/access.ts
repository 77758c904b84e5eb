// Where a field's value lives in linear memory (probes/src/eval_abi.h): a process field in the
// event's thread entry or an ancestor's (walked through parent links), the evt.type id in the
// record header, or one of the module's own 8-byte record slots. Consumes FieldRefs of checked
// conditions; produces Access values and, per source, the slot table (SourceLayout) that the host
// encoder writes and the generated code reads.
import { CTR, CTR_FLAGS, CTR_KEYED, CTR_START_BIT, CTR_STRINGS, flagBit, THREAD, TP, TF, type ContainerKey } from '../../abi/module.js';
import { typeClass, type Source } from '../fields.js';
import type { FieldRef } from '../ir.js';

/** How an 8-byte value is interpreted. */
export type ValueKind = 'str' | 'i64' | 'u64' | 'f64' | 'bool';

/** A field of struct rae_thread. */
export interface ThreadField {
  /** Table name at level 0 (`proc.name`). */
  base: string;
  offset: number;
  bit: number;
  /** u32/i64 numbers, a string ref, a flag bit of rae_thread.flags, or (container entries) a keyed string ref. */
  load: 'u32' | 'i64' | 'str' | 'flag' | 'key';
  flag?: number;
  /** Set for fields of the process's container entry (the container table) instead of its thread entry. */
  ctr?: true;
}

const T = (base: string, offset: number, bit: number, load: ThreadField['load'], flag?: number): ThreadField => ({ base, offset, bit, load, flag });

/** Level-0 fields stored in the thread entry. */
export const THREAD_FIELDS: readonly ThreadField[] = [
  T('proc.pid', THREAD.pid, TP.PID, 'u32'),
  T('proc.vpid', THREAD.vpid, TP.VPID, 'i64'),
  T('user.loginuid', THREAD.loginuid, TP.LOGINUID, 'i64'),
  T('proc.tty', THREAD.tty, TP.TTY, 'u32'),
  T('user.uid', THREAD.uid, TP.UID, 'u32'),
  T('group.gid', THREAD.gid, TP.GID, 'u32'),
  T('proc.name', THREAD.name, TP.NAME, 'str'),
  T('proc.exe', THREAD.exe, TP.EXE, 'str'),
  T('proc.exepath', THREAD.exepath, TP.EXEPATH, 'str'),
  T('proc.cmdline', THREAD.cmdline, TP.CMDLINE, 'str'),
  T('proc.args', THREAD.args, TP.ARGS, 'str'),
  T('proc.cwd', THREAD.cwd, TP.CWD, 'str'),
  T('proc.env', THREAD.env, TP.ENV, 'str'),
  T('user.name', THREAD.user, TP.USER, 'str'),
  T('group.name', THREAD.group, TP.GROUP, 'str'),
  T('container.id', THREAD.container, TP.CONTAINER, 'str'),
  T('proc.is_exe_writable', THREAD.flags, TP.EXE_WRITABLE, 'flag', TF.EXE_WRITABLE),
  T('proc.is_exe_upper_layer', THREAD.flags, TP.EXE_UPPER, 'flag', TF.EXE_UPPER),
  T('proc.is_exe_lower_layer', THREAD.flags, TP.EXE_UPPER, 'flag', TF.EXE_LOWER),
  T('proc.is_exe_from_memfd', THREAD.flags, TP.EXE_MEMFD, 'flag', TF.EXE_MEMFD),
  T('proc.sid', THREAD.sid, TP.SID, 'u32'),
  T('proc.vpgid', THREAD.vpgid, TP.VPGID, 'u32'),
  T('proc.sname', THREAD.sname, TP.SNAME, 'str'),
  T('user.loginname', THREAD.loginname, TP.LOGINNAME, 'str'),
  T('thread.cap_inheritable', THREAD.cap_inh, TP.CAP_INH, 'str'),
  T('thread.cap_permitted', THREAD.cap_prm, TP.CAP_PRM, 'str'),
  T('thread.cap_effective', THREAD.cap_eff, TP.CAP_EFF, 'str'),
  T('proc.exe_ino.ctime', THREAD.exe_ino_ctime, TP.EXE_CTIME, 'i64'),
  T('proc.exe_ino.mtime', THREAD.exe_ino_mtime, TP.EXE_MTIME, 'i64'),
  T('proc.exe_ino.ctime_duration_proc_start', THREAD.exe_ino_ctime_proc, TP.EXE_CTIME_PROC, 'i64'),
];
/** Fields of the container table's entries (host/sources/container/table.ts writes them, probes/src/eval_abi.h). */
const CONTAINER_ENTRY_FIELDS: readonly ThreadField[] = [
  ...CTR_STRINGS.map((name, i) => ({ base: name, offset: CTR.refs + 8 * i, bit: 1 << i, load: 'str' as const, ctr: true as const })),
  ...CTR_FLAGS.map((name, i) => ({ base: name, offset: CTR.flags, bit: flagBit(i), load: 'flag' as const, flag: 1 << i, ctr: true as const })),
  { base: 'container.start_ts', offset: CTR.startTs, bit: CTR_START_BIT, load: 'i64', ctr: true },
];
const BY_BASE = new Map([...THREAD_FIELDS, ...CONTAINER_ENTRY_FIELDS].map((f) => [f.base, f]));

/** Parent fields (level 1) and ancestor fields (level N or a walk) of a base field. */
const PARENT: Record<string, string> = {
  'proc.pname': 'proc.name',
  'proc.pexe': 'proc.exe',
  'proc.pexepath': 'proc.exepath',
  'proc.pcmdline': 'proc.cmdline',
  'proc.ppid': 'proc.pid',
};
const ANCESTOR: Record<string, string> = {
  'proc.aname': 'proc.name',
  'proc.aexe': 'proc.exe',
  'proc.aexepath': 'proc.exepath',
  'proc.acmdline': 'proc.cmdline',
  'proc.apid': 'proc.pid',
};
/** Fields whose value is a list of both endpoints: `!=` needs all to differ, the rest any. */
const ENDPOINT = new Set(['fd.ip', 'fd.net', 'fd.port', 'fd.proto']);

/** One 8-byte slot of a record. */
export interface Slot {
  index: number;
  /** Byte offset in the record. */
  offset: number;
  ref: FieldRef;
  /** The value kind (of each element, for lists). */
  kind: ValueKind;
  list: boolean;
}

/** Where a value comes from. */
export type Access = { k: 'type' } | { k: 'thread'; level: number; field: ThreadField; kind: ValueKind } | { k: 'walk'; field: ThreadField; kind: ValueKind } | { k: 'slot'; slot: Slot } | { k: 'list'; slot: Slot; endpoint: boolean };

/** The value kind of a field type. */
function valueKind(ref: { type: FieldRef['type'] }): ValueKind {
  switch (typeClass(ref.type)) {
    case 'signed':
      return 'i64';
    case 'unsigned':
      return 'u64';
    case 'double':
      return 'f64';
    case 'bool':
      return 'bool';
    default:
      return 'str';
  }
}

function threadKind(f: ThreadField, ref: FieldRef): ValueKind {
  return f.load === 'str' ? 'str' : f.load === 'flag' ? 'bool' : valueKind(ref);
}

/** The per-source slot table being built. */
export class SlotTable {
  readonly slots: Slot[] = [];
  private readonly byKey = new Map<string, Slot>();
  /** Keyed container fields (container.label[k] ...), in the order of the container entries' keyed refs. */
  readonly containerKeys: ContainerKey[] = [];
  constructor(readonly source: Source) {}

  /** The index of a keyed container field in the module's key list, added on first use; -1 past CTR.keySlots. */
  containerKey(key: ContainerKey): number {
    let i = this.containerKeys.findIndex((k) => k.canonical === key.canonical);
    if (i < 0 && this.containerKeys.length < CTR.keySlots) i = this.containerKeys.push(key) - 1;
    return i;
  }

  /** The slot of a field (one per canonical text), allocated on first use. */
  slot(ref: FieldRef, list: boolean): Slot {
    const key = `${ref.canonical}${list ? '[]' : ''}`;
    let s = this.byKey.get(key);
    if (!s) {
      s = { index: this.slots.length, offset: 0, ref, kind: valueKind(ref), list };
      this.slots.push(s);
      this.byKey.set(key, s);
    }
    return s;
  }

  /** Presence words after the header. */
  get words(): number {
    return Math.max(1, Math.ceil(this.slots.length / 64));
  }

  /** Final offsets; call once every field is known. */
  layout(): SourceLayout {
    const words = this.words;
    for (const s of this.slots) s.offset = 8 + 8 * words + 8 * s.index;
    return { source: this.source, slots: this.slots, words, stride: 8 + 8 * words + 8 * this.slots.length };
  }
}

/** The record layout of one source in one module. */
export interface SourceLayout {
  source: Source;
  slots: Slot[];
  words: number;
  stride: number;
}

/** Resolves a field operand of a rule of `source` to where its value lives. */
export function resolveAccess(ref: FieldRef, source: Source, table: SlotTable): Access {
  const name = ref.def.name;
  if (source === 'syscall') {
    if (name === 'evt.type' && ref.arg === undefined) return { k: 'type' };
    const own = ref.arg === undefined ? BY_BASE.get(name) : undefined;
    if (own) return { k: 'thread', level: 0, field: own, kind: threadKind(own, ref) };
    const parent = PARENT[name];
    if (parent) {
      const f = BY_BASE.get(parent)!;
      return { k: 'thread', level: 1, field: f, kind: threadKind(f, ref) };
    }
    const anc = ANCESTOR[name];
    if (anc) {
      const f = BY_BASE.get(anc)!;
      if (ref.arg === undefined) return { k: 'walk', field: f, kind: threadKind(f, ref) };
      const level = Number(ref.arg);
      if (Number.isInteger(level) && level >= 0 && level <= 16) return { k: 'thread', level, field: f, kind: threadKind(f, ref) };
    }
    if (CTR_KEYED.has(name) && ref.arg !== undefined) {
      const i = table.containerKey({ canonical: ref.canonical, name, arg: ref.arg });
      if (i >= 0) return { k: 'thread', level: 0, field: { base: ref.canonical, offset: CTR.keys + 8 * i, bit: 0, load: 'key', ctr: true }, kind: 'str' };
    }
    if (ENDPOINT.has(name)) return { k: 'list', slot: table.slot(ref, true), endpoint: true };
  }
  if (ref.isList) return { k: 'list', slot: table.slot(ref, true), endpoint: false };
  return { k: 'slot', slot: table.slot(ref, false) };
}
