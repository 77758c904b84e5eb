// Batch encoder for sources whose events arrive decoded (audit webhook, replay, field events):
// writes eval records (probes/src/eval_abi.h) into a module's batch region: the record header,
// presence words and slots of the module's layout, per-batch thread entries (a process and its
// ancestors, linked by parent addresses, interned per batch), and a string/list heap after the
// records. Values are normalised as the reference interpreter does (host/engine/interpreter.ts).
// Strings are written whole (no length cut: rules compare whole values, as Falco does); an event
// that does not fit after others ends the chunk and starts the next one, and one that does not
// fit the batch area on its own encodes as count 0 (the evaluator has it judged by the reference
// interpreter). A byte source's events (EventAccessor.bytes) have their body's bytes copied into
// the heap once for a run of events of one body, and each string value found there as it is
// becomes a reference into that copy (EventBytes.texts) instead of a copy of its own. Known
// limits: a numeric field given as non-numeric text and an IP field given as text that is not an
// address are written as missing (the interpreter would compare them as text).
import { type Slot, type SourceLayout, THREAD_FIELDS, type ThreadField, type ThreadUse, type ValueKind } from '../engine/codegen/index.js';
import { BoundField, encodeRaw, type FieldReaders, hasRawBytes, type FieldRef, lookupField, parseIp, type RawScalar, type RawValue, type SourceEvent, TEXT_COPY, truncInt, typeClass } from '../engine/index.js';
import { CTR, CTR_FLAGS, CTR_STRINGS, type ContainerKey, evtTypeId, LIMITS, MEM, REC, THREAD, writeContainerEntry } from '../abi/module.js';

const ANCESTOR_OF: Record<string, string> = {
  'proc.name': 'proc.aname',
  'proc.exe': 'proc.aexe',
  'proc.exepath': 'proc.aexepath',
  'proc.cmdline': 'proc.acmdline',
  'proc.pid': 'proc.apid',
};

function ref(name: string, arg?: string): FieldRef {
  const def = lookupField('syscall', name)!;
  return { kind: 'field', def, arg, canonical: arg === undefined ? name : `${name}[${arg}]`, type: def.type, isList: def.isList };
}

/** Result of encoding: how many events went in and where the heap ended. */
export interface Encoded {
  count: number;
  heapEnd: number;
}

/** A slot with what the encoder needs per value resolved once: its IP-ness. */
interface EncSlot {
  s: Slot;
  /** An address/network field: text is parsed to bytes. */
  ip: boolean;
  /** A plain string slot (no IP parsing): strings go in without BigInt arithmetic. */
  plainStr: boolean;
  /** A plain string slot of one value: an accessor with copyText may copy its bytes in. */
  copy: boolean;
  /** The slot's key's place in EventBytes.texts' keys (every slot has one). */
  text: number;
  /** The slot's presence bit: byte REC.present + (index >> 3) of the record, bit index & 7. */
  presentAt: number;
  presentBit: number;
  /** The slot's field read, resolved once per kind of accessor (no lookup by name per read). */
  f: BoundField;
}

/**
 * A heap reference as a number is addr + len * SPAN: every address is below MEM.bytes (2^25) and
 * every length fits the batch area, so the number stays exact (below 2^50) for any string the
 * area can hold; written as {u32 addr, u32 len} (struct rae_ref).
 */
const SPAN = MEM.bytes;

/**
 * A run of events of one body is copied whole while the gap between two of them (separators, an
 * item skipped as too large) stays within this; a wider gap starts another run.
 */
const RUN_GAP = 1024;
/** TEXT_COPY.missing as a plain number (compared once per slot and event). */
const MISSING: number = TEXT_COPY.missing;
/** What BatchEncoder.findTexts found of an event. */
const FOUND = { none: 0, missing: 1, placed: 2 } as const;

/** Writes SourceEvents of one source into linear memory. */
export class BatchEncoder {
  private readonly slots: EncSlot[];
  private readonly threadFields: Array<{ f: ThreadField; refs: FieldRef[] }>;
  private readonly walkRefs: FieldRef[];
  private readonly indexedLevels: number;
  private readonly enc = new TextEncoder();
  private u8!: Uint8Array;
  private dv!: DataView;
  private heap = 0;
  private limit = 0;
  private strings = new Map<string, number>();
  private threads = new Map<string, number>();
  /** Container entry fields the module reads (strings, flags, start_ts, then its keyed fields), or none. */
  private readonly ctrRefs: FieldRef[];
  private ctrs = new Map<string, number>();
  /** The slots' keys for EventBytes.texts, resolved for the accessor kind `textKind` (null: none resolved). */
  private readonly textKeys: Int32Array;
  private textKind: FieldReaders | undefined | null = null;
  /** Some key of textKeys is a field's (not -1), and some is a text's (>= 0: the body's bytes are placed for it). */
  private keyAny = false;
  private textAny = false;
  /** What EventBytes.texts gives for the event being written. */
  private readonly textSpans: Int32Array;
  /** The call's events, and the end of its range (a run of one body is looked for up to it). */
  private events: readonly SourceEvent[] = [];
  private stop = 0;
  /** The body range copied into the heap for this call's current run (none: undefined), and where body offset 0 would be in the heap. */
  private runBody: Uint8Array | undefined;
  private runAt = 0;
  private runEnd = 0;
  private origin = 0;

  constructor(
    private readonly layout: SourceLayout,
    use: ThreadUse,
    containerKeys: readonly ContainerKey[] = [],
  ) {
    this.slots = layout.slots.map((s, text) => {
      const cls = typeClass(s.ref.type);
      const ip = cls === 'ipaddr' || cls === 'ipnet';
      const copy = s.kind === 'str' && !ip && !s.list;
      return { s, ip, plainStr: s.kind === 'str' && !ip, copy, text, presentAt: REC.present + (s.index >> 3), presentBit: 1 << (s.index & 7), f: new BoundField(s.ref) };
    });
    this.textKeys = new Int32Array(this.slots.length);
    this.textSpans = new Int32Array(2 * this.slots.length);
    const levels = use.walk ? LIMITS.maxDepth : use.levels;
    this.indexedLevels = Math.min(LIMITS.maxDepth, use.levels);
    this.threadFields = THREAD_FIELDS.filter((f) => use.bases.includes(f.base)).map((f) => {
      const anc = ANCESTOR_OF[f.base];
      const refs = [ref(f.base)];
      if (anc) for (let k = 1; k <= levels; k++) refs.push(ref(anc, String(k)));
      return { f, refs };
    });
    this.walkRefs = use.walk ? Object.values(ANCESTOR_OF).map((n) => ref(n)) : [];
    const keys = containerKeys.slice(0, CTR.keySlots);
    this.ctrRefs = use.container ? [...CTR_STRINGS, ...CTR_FLAGS, 'container.start_ts'].map((n) => ref(n)).concat(keys.map((k) => ({ ...ref(k.name, k.arg), canonical: k.canonical }))) : [];
  }

  /** Encodes events[start..] at rec until `max` events or the batch region is full. */
  encode(memory: WebAssembly.Memory, events: readonly SourceEvent[], start: number, max: number): Encoded {
    this.u8 = new Uint8Array(memory.buffer);
    this.dv = new DataView(memory.buffer);
    const stride = this.layout.stride;
    const n = Math.min(max, events.length - start);
    const rec = MEM.batchBase;
    this.heap = align8(rec + n * stride);
    this.limit = MEM.batchBase + MEM.batchSize;
    this.strings.clear();
    this.threads.clear();
    this.ctrs.clear();
    this.events = events;
    this.stop = start + n;
    this.runBody = undefined;
    this.u8.fill(0, rec, rec + n * stride);
    let i = 0;
    for (; i < n; i++) {
      const saved = this.heap;
      if (!this.record(start + i, rec + i * stride)) {
        // Whatever the event put in the heap goes, a run it copied too.
        this.heap = saved;
        break;
      }
    }
    this.events = [];
    return { count: i, heapEnd: this.heap };
  }

  /**
   * Places the bytes of events[k] (a byte source's) in the heap, within the run copied before or
   * as a new run: this event and those after it in the call that follow it in the same body.
   * False when the event has no bytes, or when even its own bytes would take more than half the
   * room left (its values are then copied one by one, as they fit).
   */
  private placeBytes(k: number): boolean {
    const b = this.events[k]!.fields.bytes!;
    if (b.body === this.runBody && b.at >= this.runAt && b.end <= this.runEnd) return true;
    let end = b.end;
    for (let j = k + 1; j < this.stop; j++) {
      const o = this.events[j]!.fields.bytes;
      if (o === undefined || o.body !== b.body || o.at < end || o.at - end > RUN_GAP) break;
      end = o.end;
    }
    // Half the room at most: the run leaves the other half to the values that are not in it.
    const half = (this.limit - this.heap) / 2;
    if (end - b.at > half) end = b.end;
    if (end - b.at > half) return false;
    this.u8.set(b.body.subarray(b.at, end), this.heap);
    this.runBody = b.body;
    this.runAt = b.at;
    this.runEnd = end;
    this.origin = this.heap - b.at;
    this.heap = align8(this.heap + end - b.at);
    return true;
  }

  /**
   * Finds events[k]'s keyed slots (EventBytes.texts, into textSpans) when it has bytes and some
   * slot a key, placing its bytes (placeBytes) when some key is a text's: FOUND.none (nothing
   * found), FOUND.missing (missing fields found, no reference) or FOUND.placed (both).
   */
  private findTexts(k: number): number {
    const fields = this.events[k]!.fields;
    const bytes = fields.bytes;
    if (bytes === undefined) return FOUND.none;
    const kind = fields.readers;
    if (kind !== this.textKind) {
      this.textKind = kind;
      this.keyAny = this.textAny = false;
      for (const e of this.slots) {
        const key = kind?.textKey?.(e.s.ref) ?? -1;
        this.textKeys[e.text] = key;
        if (key !== -1) this.keyAny = true;
        if (key >= 0) this.textAny = true;
      }
    }
    if (!this.keyAny) return FOUND.none;
    bytes.texts(this.textKeys, this.textSpans);
    return this.textAny && this.placeBytes(k) ? FOUND.placed : FOUND.missing;
  }

  private record(k: number, at: number): boolean {
    const ev = this.events[k]!;
    const found = this.findTexts(k);
    const spans = this.textSpans;
    const origin = this.origin;
    const dv = this.dv;
    dv.setUint32(at + REC.type, evtTypeId(ev.evtType), true);
    if ((this.threadFields.length > 0 || this.ctrRefs.length > 0) && ev.source === 'syscall') {
      const t = this.thread(ev);
      if (t < 0) return false;
      dv.setUint32(at + REC.thread, t, true);
    }
    const u8 = this.u8;
    const slots = this.slots;
    for (let j = 0; j < slots.length; j++) {
      const e = slots[j]!;
      if (found !== FOUND.none) {
        // A value in the body's copy as it is: a reference to it there; a field found missing: nothing to read.
        const start = spans[2 * e.text]!;
        if (start >= 0 && e.copy && found === FOUND.placed) {
          setSpan(dv, at + e.s.offset, origin + start, spans[2 * e.text + 1]!);
          u8[at + e.presentAt]! |= e.presentBit;
          continue;
        }
        if (start === MISSING) continue;
      }
      if (!this.slot(e, ev.fields, at)) return false;
    }
    return true;
  }

  /** Writes one slot's value of the record at `at`, copied or read; false when out of room. */
  private slot(e: EncSlot, fields: SourceEvent['fields'], at: number): boolean {
    const dv = this.dv;
    const u8 = this.u8;
    const s = e.s;
    if (e.copy) {
      // A byte source's string: its bytes go from the source straight into the heap.
      const n = e.f.copy(fields, u8, this.heap, this.limit);
      if (n >= 0) {
        setRef(dv, at + s.offset, this.heap + n * SPAN);
        this.heap = align8(this.heap + n);
        u8[at + e.presentAt]! |= e.presentBit;
        return true;
      }
      if (n === TEXT_COPY.missing) return true;
      if (n === TEXT_COPY.noRoom) return false;
    }
    const raw = e.f.read(fields);
    if (raw === undefined || raw === null) return true;
    const where = at + s.offset;
    if (e.plainStr) {
      // Strings (and string lists) without BigInt: two 32-bit halves of the reference.
      const ref = s.list ? this.strList(raw) : Array.isArray(raw) ? undefined : this.strRef(typeof raw === 'string' ? raw : String(raw));
      if (ref === undefined) return true;
      if (ref < 0) return false;
      setRef(dv, where, ref);
    } else {
      const bits = s.list ? this.list(raw, s, e.ip) : Array.isArray(raw) ? undefined : this.value(raw, s.kind, s.ref, e.ip);
      if (bits === undefined) return true;
      if (bits < 0n) return false;
      dv.setBigUint64(where, bits, true);
    }
    // Bit index&63 of little-endian 64-bit presence word index>>6 is bit index&7 of byte index>>3.
    u8[at + e.presentAt]! |= e.presentBit;
    return true;
  }

  /** A string list slot: 8-byte references in the heap; addr | count << 32 as a number; -1 = out of room. */
  private strList(raw: RawValue): number {
    const items = Array.isArray(raw) ? raw : [raw];
    const refs: number[] = [];
    for (const x of items) {
      const r = this.strRef(typeof x === 'string' ? x : String(x));
      if (r < 0) return -1;
      refs.push(r);
    }
    const at = this.alloc(8 * refs.length);
    if (at < 0) return -1;
    for (let j = 0; j < refs.length; j++) setRef(this.dv, at + 8 * j, refs[j]!);
    return at + refs.length * SPAN;
  }

  /** A list slot: 8-byte elements in the heap, ref = addr | count << 32. */
  private list(raw: RawValue, s: Slot, ip: boolean): bigint | undefined {
    const items = Array.isArray(raw) ? raw : [raw];
    const vals: bigint[] = [];
    for (const x of items) {
      const v = this.value(x, s.kind, s.ref, ip);
      if (v === undefined) return undefined;
      if (v < 0n) return -1n;
      vals.push(v);
    }
    const at = this.alloc(8 * vals.length);
    if (at < 0) return -1n;
    vals.forEach((v, j) => this.dv.setBigUint64(at + 8 * j, v, true));
    return BigInt(at) | (BigInt(vals.length) << 32n);
  }

  /** The 8-byte bits of one value; undefined = missing; -1n = out of room. */
  private value(raw: RawScalar, kind: ValueKind, r: FieldRef, isIp: boolean): bigint | undefined {
    switch (kind) {
      case 'str': {
        if (isIp) {
          const ip = parseIp(String(raw));
          return ip ? this.bytes(ip.bytes) : undefined;
        }
        return this.str(typeof raw === 'string' ? raw : String(raw));
      }
      case 'i64':
      case 'u64': {
        const n = toInt(raw, r);
        if (n === undefined) return undefined;
        return BigInt.asUintN(64, n);
      }
      case 'f64': {
        const d = typeof raw === 'number' ? raw : Number(raw);
        this.dv.setFloat64(MEM.scratchBase, d, true);
        return this.dv.getBigUint64(MEM.scratchBase, true);
      }
      case 'bool':
        return (typeof raw === 'boolean' ? raw : raw === 'true' || raw === 1) ? 1n : 0n;
    }
  }

  private str(s: string): bigint {
    const r = this.strRef(s);
    return r < 0 ? -1n : BigInt(r % SPAN) | (BigInt(Math.floor(r / SPAN)) << 32n);
  }

  /**
   * A string in the heap, whole (UTF-8, interned per batch): addr + len * SPAN; -1 = out of room.
   * Values are never cut: a rule compares the whole value, as Falco does.
   */
  private strRef(s: string): number {
    let v = this.strings.get(s);
    if (v !== undefined) return v;
    const n = s.length;
    const at = this.heap;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; the room is checked by what encodeInto read
    const end = Math.min(at + n * 3, this.limit);
    if (at + n > this.limit) return -1;
    let written = 0;
    if (n <= 128) {
      // Short ASCII text (nearly every audit value) is copied code unit by code unit.
      const u8 = this.u8;
      for (; written < n; written++) {
        const c = s.charCodeAt(written);
        if (c >= 0x80) break;
        u8[at + written] = c;
      }
    }
    if (written < n) {
      const r = this.enc.encodeInto(s, this.u8.subarray(at, end));
      if (r.read! < n) return -1;
      written = r.written!;
      // raw bytes (U+DC80..U+DCFF, raw-text.ts) are written as themselves; only non-ASCII text can hold them
      if (written > n && hasRawBytes(s)) {
        const raw = encodeRaw(s);
        this.u8.set(raw, at);
        written = raw.length;
      }
    }
    this.heap = align8(at + written);
    v = at + written * SPAN;
    this.strings.set(s, v);
    return v;
  }

  private bytes(b: Uint8Array): bigint {
    const at = this.alloc(b.length);
    if (at < 0) return -1n;
    this.u8.set(b, at);
    return BigInt(at) | (BigInt(b.length) << 32n);
  }

  private alloc(n: number): number {
    const at = this.heap;
    if (at + n > this.limit) return -1;
    this.heap = align8(at + n);
    return at;
  }

  /** The event's thread entry (with its ancestors), interned per batch; -1 = out of room. */
  private thread(ev: SourceEvent): number {
    let depth = 0;
    for (const w of this.walkRefs) {
      const v = ev.fields.field(w);
      if (Array.isArray(v)) depth = Math.max(depth, v.length);
      else if (v !== undefined) depth = Math.max(depth, 1);
    }
    const levels = Math.min(LIMITS.maxDepth, Math.max(depth, this.indexedLevels));
    const values: Array<Array<RawValue | undefined>> = [];
    for (let k = 0; k <= levels; k++) values.push(this.threadFields.map(({ refs }) => (refs[k] ? ev.fields.field(refs[k]!) : undefined)));
    while (values.length > 1 && values[values.length - 1]!.every((v) => v === undefined) && depth < values.length - 1) values.pop();
    const ctr = this.ctrRefs.length > 0 ? this.container(ev) : 0;
    if (ctr < 0) return -1;
    const key = `${ctr}:${JSON.stringify(values, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`;
    const hit = this.threads.get(key);
    if (hit !== undefined) return hit;
    let parent = 0;
    for (let k = values.length - 1; k >= 0; k--) {
      const at = this.alloc(THREAD.size);
      if (at < 0) return -1;
      this.u8.fill(0, at, at + THREAD.size);
      this.dv.setUint32(at + THREAD.parent, parent, true);
      let present = 0;
      let flags = 0;
      for (let j = 0; j < this.threadFields.length; j++) {
        const f = this.threadFields[j]!.f;
        const raw = values[k]![j];
        if (raw === undefined || raw === null || Array.isArray(raw)) continue;
        if (f.load === 'str') {
          const v = this.str(typeof raw === 'string' ? raw : String(raw));
          if (v < 0n) return -1; // out of room: the event goes to the next batch, never with the value missing
          this.dv.setBigUint64(at + f.offset, v, true);
        } else if (f.load === 'flag') {
          if (raw === true || raw === 'true' || raw === 1) flags |= f.flag!;
        } else {
          const n = toInt(raw, ref(f.base));
          if (n === undefined) continue;
          if (f.load === 'u32') this.dv.setUint32(at + f.offset, Number(BigInt.asUintN(32, n)), true);
          else this.dv.setBigInt64(at + f.offset, BigInt.asIntN(64, n), true);
        }
        present |= f.bit;
      }
      this.dv.setUint32(at + THREAD.present, present, true);
      this.dv.setUint32(at + THREAD.flags, flags, true);
      if (k === 0) this.dv.setUint32(at + THREAD.ctr, ctr, true);
      parent = at;
    }
    this.threads.set(key, parent);
    return parent;
  }

  /**
   * The event's container entry (struct rae_ctr, as host/sources/container/table.ts writes it for
   * kernel events), built from the event's own container.* and k8s.* values and interned per batch:
   * 0 when the event carries none (the fields are missing, as for a process without an entry); -1 = out of room.
   */
  private container(ev: SourceEvent): number {
    const values = this.ctrRefs.map((r) => ev.fields.field(r));
    if (values.every((v) => v === undefined || v === null)) return 0;
    const key = JSON.stringify(values, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
    const hit = this.ctrs.get(key);
    if (hit !== undefined) return hit;
    const at = this.alloc(CTR.strings);
    if (at < 0) return -1;
    const nStr = CTR_STRINGS.length;
    const nFlag = CTR_FLAGS.length;
    const text = (raw: RawValue | undefined) => (raw === undefined || raw === null || Array.isArray(raw) ? undefined : typeof raw === 'string' ? raw : String(raw));
    const start = values[nStr + nFlag];
    const entry = {
      strings: values.slice(0, nStr).map(text),
      flags: values.slice(nStr, nStr + nFlag).map((raw) => (raw === undefined || raw === null || Array.isArray(raw) ? undefined : raw === true || raw === 'true' || raw === 1)),
      startTs: start === undefined || start === null || Array.isArray(start) ? undefined : toInt(start, this.ctrRefs[nStr + nFlag]!),
      keyed: values.slice(nStr + nFlag + 1).map(text),
    };
    const place = (refAt: number, v: string): boolean => {
      const r = this.strRef(v);
      if (r >= 0) setRef(this.dv, refAt, r);
      return r >= 0;
    };
    if (writeContainerEntry(this.dv, at, entry, place) > 0) return -1;
    this.ctrs.set(key, at);
    return at;
  }
}

/** An integer value normalised to the field's type, as the interpreter does. */
function toInt(raw: RawScalar, r: FieldRef): bigint | undefined {
  if (typeof raw === 'bigint') return truncInt(raw, r.type);
  if (typeof raw === 'number') return Number.isFinite(raw) ? truncInt(BigInt(Math.trunc(raw)), r.type) : undefined;
  if (typeof raw === 'boolean') return raw ? 1n : 0n;
  const t = raw.trim();
  return /^[+-]?\d+$/.test(t) ? truncInt(BigInt(t), r.type) : undefined;
}

/** Writes a heap reference number (addr + len * SPAN) as {u32 addr, u32 len}. */
function setRef(dv: DataView, at: number, ref: number): void {
  setSpan(dv, at, ref % SPAN, Math.floor(ref / SPAN));
}

/** A string reference's two 32-bit halves: its address in memory, then its length in bytes. */
function setSpan(dv: DataView, at: number, addr: number, length: number): void {
  dv.setUint32(at, addr, true);
  dv.setUint32(at + 4, length, true);
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
