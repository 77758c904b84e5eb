// An audit event read from the request body's bytes (webhook.decoder: bytes): the same fields as
// the object path (document.ts) without decoding the event into a JavaScript object tree. A
// scalar ka.* field, jevt.value and the event time read just their value's bytes; a field that
// gives a list or walks a pod spec reads the member's array in place (byte-lists.ts: each array
// walked once per event, for all the fields reading it), or, for the few lists without such a
// reader, decodes only the member it reads, once per event; anything else (jevt.obj, fields this file does not map) decodes the
// whole event once and asks the object path, so every field keeps the object path's semantics.
// Consumes a validated body and an event's offset; produces a SourceEvent.
import { type EventAccessor, type EventBytes, type FieldRead, type FieldReaders, type FieldRef, type RawValue, type SourceEvent, TEXT_COPY, type TextCopy } from '../../engine/index.js';
import { END, FLAGS, indexedPrefix, isPlain, slotOf } from './byte-index.js';
import { byteListReader, type ListEvent, type Names, type Table, tableOf } from './byte-lists.js';
import { bodyText, compactEnd, type MemberCache, membersOf, parseAt, plainInteger, stringAt, textAt, valueAt } from './byte-value.js';
import { auditSourceEvent } from './document.js';
import { getterCache } from './getter-cache.js';
import { pointerKeys } from './json-value.js';
import { kaExtractor, kaScalarPath } from './ka-fields.js';
import { parseRfc3339Nano, parseRfc3339NanoBytes } from './time.js';
import { uriParam } from './uri-param.js';

type Getter = (f: ByteAuditFields, ref: FieldRef) => RawValue | undefined;

/** Getters by field name, then by argument (getter-cache.ts). */
const cachedGetter = getterCache(getterFor);

/**
 * The members a ka.* field that is not a plain key path reads (ka-fields.ts, pod-fields.ts), as
 * key paths: a top-level member, one member of requestObject or of requestObject.spec; undefined
 * for a field not mapped here (the whole event is decoded for it).
 */
function kaMembers(name: string): readonly (readonly string[])[] | undefined {
  if (name === 'ka.user.groups') return [['user']];
  if (name === 'ka.sourceips') return [['sourceIPs']];
  if (name === 'ka.target.pod.name') return [['objectRef']];
  if (name === 'ka.req.binding.subject.has_name') return [];
  if (name.startsWith('ka.req.role.rules')) return [['requestObject', 'rules']];
  if (name.startsWith('ka.req.binding.subjects')) return [['requestObject', 'subjects']];
  // Pod and service lists: only the member of requestObject.spec the field reads (a pod or
  // deployment spec holds much else), and the pod's securityContext for the effective ids.
  const pod = POD_LIST.exec(name);
  if (pod) {
    const list = [...SPEC, pod[1]!];
    return pod[2]!.startsWith('eff_run_as_') ? [list, [...SPEC, 'securityContext']] : [list];
  }
  if (name.startsWith('ka.req.pod.volumes.') || name === 'ka.req.volume.hostpath') return [[...SPEC, 'volumes']];
  if (name.startsWith('ka.req.container.')) return [[...SPEC, 'containers']];
  if (name === 'ka.req.service.ports') return [[...SPEC, 'ports']];
  if (name === 'ka.req.pod.supplemental_groups') return [[...SPEC, 'securityContext']];
  // No member path is a prefix of another: partial() relies on it.
  return undefined;
}

const SPEC = ['requestObject', 'spec'] as const;
const POD_LIST = /^ka\.req\.pod\.(containers|initContainers|ephemeralContainers)\.(.+)$/;

/** Where a field that is the text at a key path reads: the path and its indexed prefix. */
interface TextPath {
  keys: readonly string[];
  slot: number;
  length: number;
}

/** The key path of a field whose value is the text at that path (textGetter's fields), or undefined. */
function textPathOf(name: string, arg: string | undefined): TextPath | undefined {
  const keys = name.startsWith('ka.') ? kaScalarPath(name) : (name === 'jevt.value' || name === 'json.value') && arg !== undefined && arg !== '' ? pointerKeys(arg) : undefined;
  return keys === undefined ? undefined : { keys, ...indexedPrefix(keys) };
}

/** Text paths by field name, then by argument; null for a field that has none. */
const cachedTextPath = getterCache((name, arg) => textPathOf(name, arg) ?? null);

/** A getter of the text at a key path (asText), read from its indexed prefix. */
function textGetter(keys: readonly string[]): Getter {
  const { slot, length } = indexedPrefix(keys);
  const indexed = slot >= 0 && length === keys.length;
  return (f) => {
    if (indexed) {
      const text = f.plainText(slot);
      if (text !== null) return text;
    }
    const at = f.valueAt(slot, length, keys);
    return at < 0 ? undefined : textAt(f.body, at);
  };
}

/** jevt.rawtime and its alias: the event time in nanoseconds as decimal text. */
const isRawTime = (name: string) => name === 'jevt.rawtime' || name === 'json.rawtime';

function getterFor(name: string, arg: string | undefined): Getter {
  if (isRawTime(name)) return (f) => (f.timeKnown ? f.timeNs.toString() : undefined);
  if (name.startsWith('evt.')) {
    if (name === 'evt.time' || name === 'evt.rawtime') return (f) => f.timeNs;
    if (name === 'evt.source') return () => 'k8s_audit';
    if (name === 'evt.num') return (f) => f.num;
    return () => undefined;
  }
  if (name.startsWith('ka.')) {
    const path = kaScalarPath(name);
    if (path !== undefined) return textGetter(path);
    if (name === 'ka.uri.param') {
      // The request URI's text (asText, as the object path reads it), its query read in place.
      if (arg === undefined || arg === '') return () => undefined;
      const uri = textGetter(['requestURI']);
      return (f, ref) => {
        const text = uri(f, ref);
        return text === undefined ? undefined : uriParam(text as string, arg);
      };
    }
    const paths = kaMembers(name);
    if (paths !== undefined) {
      const extract = kaExtractor(name);
      const members = paths.map((path) => {
        const prefixes = path.map((_, d) => path.slice(0, d + 1));
        return { prefixes, slots: prefixes.map(slotOf) };
      });
      // What the field gives when none of its members is in the event (most events for a pod
      // or role field): the extractor reads nothing but those members, so that is its value on
      // an empty event, the same for every event. Kept when it is not a list a caller could change.
      const none = extract({}, arg);
      const constant = none === undefined || typeof none === 'string';
      // A list read from the body's bytes (byte-lists.ts) when it has a reader there; else its members decoded.
      const bytes = byteListReader(name);
      if (bytes !== undefined) return constant ? (f) => (f.absent(members) ? none : bytes(f, arg)) : (f) => bytes(f, arg);
      if (constant) return (f) => (f.absent(members) ? none : extract(f.partial(members), arg));
      return (f) => extract(f.partial(members), arg);
    }
  }
  if ((name === 'jevt.value' || name === 'json.value') && arg !== undefined && arg !== '') {
    return textGetter(pointerKeys(arg));
  }
  return (f, ref) => f.whole().field(ref);
}

/** A member a list field reads: each prefix of its key path (the last is the path) and each prefix's slot (byte-index.ts). */
interface Member {
  prefixes: readonly (readonly string[])[];
  slots: readonly number[];
}

const copyOther: TextCopy = () => TEXT_COPY.other;
/** TEXT_COPY's codes as plain numbers (texts() gives one per field, per event). */
const OTHER: number = TEXT_COPY.other;
const MISSING: number = TEXT_COPY.missing;

/** The reads of ByteAuditFields resolved per FieldRef (BoundField): its getter and, for a text field, its path. */
const BYTE_READERS: FieldReaders = {
  read: (ref) => cachedGetter(ref.def.name, ref.arg) as unknown as FieldRead,
  copy: (ref) => {
    // The event time's digits go in without a string interned per event (each event's is its own).
    if (isRawTime(ref.def.name)) return (f, _ref, dst, to, limit) => (f as ByteAuditFields).copyTime(dst, to, limit);
    const path = cachedTextPath(ref.def.name, ref.arg);
    return path === null ? copyOther : (f, _ref, dst, to, limit) => (f as ByteAuditFields).copyPath(path, dst, to, limit);
  },
  textKey: (ref) => {
    // A value at an indexed key path: its slot. The event time's digits are not in the body as they are.
    if (isRawTime(ref.def.name)) return -1;
    const path = cachedTextPath(ref.def.name, ref.arg);
    if (path === null) return missingKey(ref.def.name, ref.arg);
    return path.length === path.keys.length ? path.slot : -1;
  },
};

/**
 * The texts() key of a list field read from the bytes that is missing whenever its one member is
 * (getterFor's `none`: what it gives on an event without that member): -2 - the member's slot,
 * so an event without it skips the field's read; -1 for any other field.
 */
function missingKey(name: string, arg: string | undefined): number {
  if (!name.startsWith('ka.') || byteListReader(name) === undefined) return -1;
  const paths = kaMembers(name);
  if (paths === undefined || paths.length !== 1 || kaExtractor(name)({}, arg) !== undefined) return -1;
  const slot = slotOf(paths[0]!);
  return slot < 0 ? -1 : -2 - slot;
}

/** Field access over one event's bytes. */
class ByteAuditFields implements EventAccessor, EventBytes, MemberCache, ListEvent {
  readonly readers = BYTE_READERS;
  /** Members decoded so far for list fields (absent members stay absent). */
  private members: Record<string, unknown> | undefined;
  private decoded: EventAccessor | undefined;
  /** The members of objects of this event that reads off the index walked, by the object's offset. */
  private objects: Map<number, Map<string, number>> | undefined;
  /** The tables of the arrays list fields read (byte-lists.ts), by the array's offset. */
  private tables: Map<number, Table> | undefined;

  constructor(
    readonly body: Buffer,
    /** Offset of the event's `{`. */
    readonly at: number,
    /** Offset just past the event's `}`. */
    readonly end: number,
    /** The batch's index (byte-index.ts) and this event's entry in it. */
    private readonly index: Int32Array,
    private readonly base: number,
    readonly timeNs: bigint,
    readonly timeKnown: boolean,
    readonly num: bigint,
  ) {}

  /** The event's bytes are body[at, end): this object. */
  get bytes(): EventBytes {
    return this;
  }

  field(ref: FieldRef): RawValue | undefined {
    return cachedGetter(ref.def.name, ref.arg)(this, ref);
  }

  copyText(ref: FieldRef, dst: Uint8Array, to: number, limit: number): number {
    if (isRawTime(ref.def.name)) return this.copyTime(dst, to, limit);
    const path = cachedTextPath(ref.def.name, ref.arg);
    return path === null ? TEXT_COPY.other : this.copyPath(path, dst, to, limit);
  }

  /** copyText of a field whose value is the text at `path`. */
  copyPath(path: TextPath, dst: Uint8Array, to: number, limit: number): number {
    const { slot } = path;
    const b = this.body;
    const index = this.index;
    const base = this.base;
    let at: number;
    if (path.length === path.keys.length && index[base + FLAGS] === 0) {
      // An indexed value: the walk that indexed it gave its end, and whether it is a string without escapes.
      at = index[base + slot]!;
      if (at < 0) return TEXT_COPY.missing;
      if (isPlain(index, base, slot)) return copyBytes(b, at + 1, index[base + END + slot]! - 1, dst, to, limit);
    } else {
      at = this.valueAt(slot, path.length, path.keys);
      if (at < 0) return TEXT_COPY.missing;
    }
    const c = b[at]!;
    if (c === 0x22) {
      // A string without escapes is its UTF-8 bytes as they are (the body is valid UTF-8).
      let end = at + 1;
      for (let d = b[end]; d !== 0x22; d = b[++end]) if (d === 0x5c) return TEXT_COPY.other;
      return copyBytes(b, at + 1, end, dst, to, limit);
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const end = plainInteger(b, at);
      if (end > 0) return copyBytes(b, at, end, dst, to, limit);
    }
    return TEXT_COPY.other;
  }

  /**
   * EventBytes.texts, keys being index slots (missingKey's below -1): a value the walk found to be
   * a string without escapes (its bytes inside the quotes), or any other value but a string whose
   * text (asText, what textAt gives) is its bytes as they are (compactEnd: true, false, null, a
   * plain integer, a compact object or array: a configmap's data); anything else (a string with
   * escapes), or any value of an event the index cannot be trusted for, is `other`.
   */
  texts(keys: Int32Array, out: Int32Array): void {
    const b = this.body;
    const index = this.index;
    const base = this.base;
    const trusted = index[base + FLAGS] === 0;
    for (let k = 0; k < keys.length; k++) {
      const slot = keys[k]!;
      let start = OTHER;
      let length = 0;
      if (slot < -1) {
        // A list field's member (missingKey): the field is missing when the member is.
        if (trusted && index[base - 2 - slot]! < 0) start = MISSING;
      } else if (slot >= 0 && trusted) {
        const at = index[base + slot]!;
        if (at < 0) start = MISSING;
        else if (isPlain(index, base, slot)) {
          start = at + 1;
          length = index[base + END + slot]! - at - 2;
        } else if (b[at] !== 0x22) {
          // true, false, null, a plain integer, an object or array JSON.stringify writes as it is.
          const end = compactEnd(b, at, 0);
          if (end > 0) {
            start = at;
            length = end - at;
          }
        }
      }
      out[2 * k] = start;
      out[2 * k + 1] = length;
    }
  }

  /** copyText of jevt.rawtime: the event time's decimal digits. */
  copyTime(dst: Uint8Array, to: number, limit: number): number {
    if (!this.timeKnown) return TEXT_COPY.missing;
    const digits = this.timeNs.toString();
    const n = digits.length;
    if (to + n > limit) return TEXT_COPY.noRoom;
    for (let k = 0; k < n; k++) dst[to + k] = digits.charCodeAt(k);
    return n;
  }

  /**
   * The value indexed at `slot` as text when the index says it is a string without escapes
   * (decoded from where the index says it ends, with no scan for its end or an escape);
   * undefined when it is missing; null for anything else (read it with textAt).
   */
  plainText(slot: number): string | undefined | null {
    return plainText(this.body, this.index, this.base, slot);
  }

  membersAt(at: number): Map<string, number> {
    const objects = (this.objects ??= new Map());
    let m = objects.get(at);
    if (m === undefined) objects.set(at, (m = membersOf(this.body, at)));
    return m;
  }

  tableAt(at: number, names: Names): Table | undefined {
    const tables = (this.tables ??= new Map());
    const had = tables.get(at);
    if (had !== undefined && had.names === names) return had;
    const t = tableOf(this.body, at, names);
    if (t !== undefined) tables.set(at, t);
    return t;
  }

  /** Start of the value at `keys`, whose first `length` keys are indexed at `slot` (-1: none), or -1 when missing. */
  valueAt(slot: number, length: number, keys: readonly string[]): number {
    // Without the index every read walks from the event's start: the objects' members are kept.
    if (slot < 0 || this.index[this.base + FLAGS] !== 0) return valueAt(this.body, this.at, keys, 0, this);
    const first = this.index[this.base + slot]!;
    // Below an indexed member, a read or two (jevt.value paths): compared as bytes, no names decoded.
    return first < 0 || length === keys.length ? first : valueAt(this.body, first, keys, length);
  }

  /** True when no member at `paths` is in the event (an object on the way missing or not an object counts as missing). */
  absent(paths: readonly Member[]): boolean {
    for (let k = 0; k < paths.length; k++) {
      const { prefixes, slots } = paths[k]!;
      const d = prefixes.length - 1;
      if (this.valueAt(slots[d]!, d + 1, prefixes[d]!) >= 0) return false;
    }
    return true;
  }

  /** The value at `at` (the value of an indexed path at `slot`) decoded. */
  private decode(at: number, slot: number): unknown {
    return parseAt(this.body, at, this.index[this.base + FLAGS] !== 0 ? -1 : this.index[this.base + END + slot]!);
  }

  /**
   * An object holding the event's members at `paths` (key paths, all indexed, none a prefix of
   * another), decoded; a ka.* extractor reads only those. The objects on the way are built here
   * and hold only the members asked for; a value that is not an object where a path goes on is
   * decoded whole (the extractor finds no member in it, as in the whole event), and so is a
   * path's last member.
   */
  partial(paths: readonly Member[]): Record<string, unknown> {
    const root = (this.members ??= {});
    for (let k = 0; k < paths.length; k++) {
      const { prefixes, slots } = paths[k]!;
      let obj = root;
      for (let d = 0; d < prefixes.length; d++) {
        const prefix = prefixes[d]!;
        const name = prefix[d]!;
        const last = d === prefixes.length - 1;
        if (Object.hasOwn(obj, name)) {
          // Decoded before; on the way, only an object built here is not a whole value.
          const had = obj[name];
          if (last || typeof had !== 'object' || had === null || Array.isArray(had)) break;
          obj = had as Record<string, unknown>;
          continue;
        }
        const at = this.valueAt(slots[d]!, d + 1, prefix);
        if (last || at < 0 || this.body[at] !== 0x7b) {
          obj[name] = at < 0 ? undefined : this.decode(at, slots[d]!);
          break;
        }
        obj = obj[name] = {};
      }
    }
    return root;
  }

  /** The object path's accessor over the whole event, decoded once. */
  whole(): EventAccessor {
    return (this.decoded ??= auditSourceEvent(parseAt(this.body, this.at) as Record<string, unknown>, this.num).fields);
  }
}

/** ByteAuditFields.plainText over an event's entry index[base..]. */
function plainText(body: Buffer, index: Int32Array, base: number, slot: number): string | undefined | null {
  if (index[base + FLAGS] !== 0) return null;
  const at = index[base + slot]!;
  if (at < 0) return undefined;
  if (!isPlain(index, base, slot)) return null;
  return bodyText(body, at + 1, index[base + END + slot]! - 1);
}

/** Copies body[from, to) to dst at `at` within `limit`; the bytes copied, or TEXT_COPY.noRoom. */
function copyBytes(b: Buffer, from: number, to: number, dst: Uint8Array, at: number, limit: number): number {
  const n = to - from;
  if (at + n > limit) return TEXT_COPY.noRoom;
  // A loop beats Buffer.copy (a view made per call) up to some 64 bytes: most values are shorter.
  if (n < 64) for (let k = 0; k < n; k++) dst[at + k] = b[from + k]!;
  else b.copy(dst, at, from, to);
  return n;
}

const STAGE_TIMESTAMP = ['stageTimestamp'];
const STAGE_TIMESTAMP_SLOT = slotOf(STAGE_TIMESTAMP);

/**
 * The SourceEvent of the event at [at, end) in a validated body, indexed at index[base..]
 * (byte-index.ts); time = stageTimestamp (0 if unreadable).
 */
export function byteSourceEvent(body: Buffer, at: number, end: number, index: Int32Array, base: number, num: bigint): SourceEvent {
  const indexed = index[base + FLAGS] === 0;
  const ts = indexed ? index[base + STAGE_TIMESTAMP_SLOT]! : valueAt(body, at, STAGE_TIMESTAMP);
  let parsed: bigint | undefined;
  // A string without escapes (nearly every event's) is parsed from its bytes, with no string made.
  if (ts >= 0 && indexed && isPlain(index, base, STAGE_TIMESTAMP_SLOT)) parsed = parseRfc3339NanoBytes(body, ts + 1, index[base + END + STAGE_TIMESTAMP_SLOT]! - 1);
  else if (ts >= 0) {
    const text = stringAt(body, ts);
    parsed = text === undefined ? undefined : parseRfc3339Nano(text);
  }
  const timeNs = parsed ?? 0n;
  return { source: 'k8s_audit', timeNs, fields: new ByteAuditFields(body, at, end, index, base, timeNs, parsed !== undefined, num) };
}
