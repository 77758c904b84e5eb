// An audit event read from the request body's bytes (webhook.decoder: bytes): the same fields as
// the object path (document.ts) without decoding the event into a JavaScript object tree. A
// scalar ka.* field, jevt.value and the event time read just their value's bytes; a field that
// gives a list or walks a pod spec decodes only the top-level member it reads (requestObject,
// user...), once per event; anything else (jevt.obj, fields this file does not map) decodes the
// whole event once and asks the object path, so every field keeps the object path's semantics.
// Consumes a validated body and an event's offset; produces a SourceEvent.
import { type EventAccessor, type FieldRef, type RawValue, type SourceEvent, TEXT_COPY } from '../../engine/index.js';
import { END, FLAGS, indexedPrefix, slotOf } from './byte-index.js';
import { type MemberCache, membersOf, parseAt, stringAt, textAt, valueAt } from './byte-value.js';
import { auditSourceEvent } from './document.js';
import { getterCache } from './getter-cache.js';
import { pointerKeys } from './json-value.js';
import { kaExtractor, kaScalarPath } from './ka-fields.js';
import { parseRfc3339Nano } from './time.js';

type Getter = (f: ByteAuditFields, ref: FieldRef) => RawValue | undefined;

/** Getters by field name, then by argument (getter-cache.ts). */
const cachedGetter = getterCache(getterFor);

/**
 * The members a ka.* field that is not a plain key path reads (ka-fields.ts, pod-fields.ts): a
 * top-level member, or one member of requestObject; undefined for a field not mapped here (the
 * whole event is decoded for it).
 */
function kaMembers(name: string): readonly (readonly string[])[] | undefined {
  if (name === 'ka.user.groups') return [['user']];
  if (name === 'ka.sourceips') return [['sourceIPs']];
  if (name === 'ka.uri.param') return [['requestURI']];
  if (name === 'ka.target.pod.name') return [['objectRef']];
  if (name === 'ka.req.binding.subject.has_name') return [];
  if (name.startsWith('ka.req.role.rules')) return [['requestObject', 'rules']];
  if (name.startsWith('ka.req.binding.subjects')) return [['requestObject', 'subjects']];
  // pods, containers, volumes, services: requestObject.spec
  if (name.startsWith('ka.req.')) return [['requestObject', 'spec']];
  return undefined;
}

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
  return (f) => {
    const at = f.valueAt(slot, length, keys);
    return at < 0 ? undefined : textAt(f.body, at);
  };
}

function getterFor(name: string, arg: string | undefined): Getter {
  if (name === 'jevt.rawtime' || name === 'json.rawtime') return (f) => (f.timeKnown ? f.timeNs.toString() : undefined);
  if (name.startsWith('evt.')) {
    if (name === 'evt.time' || name === 'evt.rawtime') return (f) => f.timeNs;
    if (name === 'evt.source') return () => 'k8s_audit';
    if (name === 'evt.num') return (f) => f.num;
    return () => undefined;
  }
  if (name.startsWith('ka.')) {
    const path = kaScalarPath(name);
    if (path !== undefined) return textGetter(path);
    const paths = kaMembers(name);
    if (paths !== undefined) {
      const extract = kaExtractor(name);
      const members = paths.map((path) => ({ path, slot: slotOf(path), top: path.slice(0, 1), topSlot: slotOf(path.slice(0, 1)) }));
      return (f) => extract(f.partial(members), arg);
    }
  }
  if ((name === 'jevt.value' || name === 'json.value') && arg !== undefined && arg !== '') {
    return textGetter(pointerKeys(arg));
  }
  return (f, ref) => f.whole().field(ref);
}

/** A member a list field reads: its path and slot, and its first key's (byte-index.ts). */
interface Member {
  path: readonly string[];
  slot: number;
  top: readonly string[];
  topSlot: number;
}

/** Field access over one event's bytes. */
class ByteAuditFields implements EventAccessor, MemberCache {
  /** Members decoded so far for list fields (absent members stay absent). */
  private members: Record<string, unknown> | undefined;
  private decoded: EventAccessor | undefined;
  /** The members of objects of this event that reads off the index walked, by the object's offset. */
  private objects: Map<number, Map<string, number>> | undefined;

  constructor(
    readonly body: Buffer,
    /** Offset of the event's `{`. */
    readonly at: number,
    /** The batch's index (byte-index.ts) and this event's entry in it. */
    private readonly index: Int32Array,
    private readonly base: number,
    readonly timeNs: bigint,
    readonly timeKnown: boolean,
    readonly num: bigint,
  ) {}

  field(ref: FieldRef): RawValue | undefined {
    return cachedGetter(ref.def.name, ref.arg)(this, ref);
  }

  copyText(ref: FieldRef, dst: Uint8Array, to: number, limit: number): number {
    const path = cachedTextPath(ref.def.name, ref.arg);
    if (path === null) return TEXT_COPY.other;
    const at = this.valueAt(path.slot, path.length, path.keys);
    if (at < 0) return TEXT_COPY.missing;
    const b = this.body;
    if (b[at] !== 0x22) return TEXT_COPY.other;
    // A string without escapes is its UTF-8 bytes as they are (the body is valid UTF-8).
    let end = at + 1;
    for (let c = b[end]; c !== 0x22; c = b[++end]) if (c === 0x5c) return TEXT_COPY.other;
    const n = end - at - 1;
    if (to + n > limit) return TEXT_COPY.noRoom;
    if (n < 32) for (let k = 0; k < n; k++) dst[to + k] = b[at + 1 + k]!;
    else b.copy(dst, to, at + 1, end);
    return n;
  }

  membersAt(at: number): Map<string, number> {
    const objects = (this.objects ??= new Map());
    let m = objects.get(at);
    if (m === undefined) objects.set(at, (m = membersOf(this.body, at)));
    return m;
  }

  /** Start of the value at `keys`, whose first `length` keys are indexed at `slot` (-1: none), or -1 when missing. */
  valueAt(slot: number, length: number, keys: readonly string[]): number {
    if (slot < 0 || this.index[this.base + FLAGS] !== 0) return valueAt(this.body, this.at, keys, 0, this);
    const first = this.index[this.base + slot]!;
    return first < 0 || length === keys.length ? first : valueAt(this.body, first, keys, length, this);
  }

  /** The value at an indexed path (at `slot`) decoded, or undefined when missing. */
  private decode(path: readonly string[], slot: number): unknown {
    if (this.index[this.base + FLAGS] !== 0) {
      const at = valueAt(this.body, this.at, path, 0, this);
      return at < 0 ? undefined : parseAt(this.body, at);
    }
    const at = this.index[this.base + slot]!;
    return at < 0 ? undefined : parseAt(this.body, at, this.index[this.base + END + slot]!);
  }

  /**
   * An object holding the event's members at `paths` (a top-level name, or a name and one of its
   * members; all indexed), decoded; a ka.* extractor reads only those. A member that is not an
   * object where a path goes on is decoded whole (the extractor finds no member in it, as in the
   * whole event).
   */
  partial(paths: readonly Member[]): Record<string, unknown> {
    const root = (this.members ??= {});
    for (let k = 0; k < paths.length; k++) {
      const { path, slot, top, topSlot } = paths[k]!;
      const name = path[0]!;
      const fresh = !Object.hasOwn(root, name);
      if (path.length === 1) {
        if (fresh) root[name] = this.decode(path, slot);
        continue;
      }
      const at = this.valueAt(topSlot, 1, top);
      if (at < 0 || this.body[at] !== 0x7b) {
        if (fresh) root[name] = at < 0 ? undefined : parseAt(this.body, at);
        continue;
      }
      const obj = (fresh ? (root[name] = {}) : root[name]) as Record<string, unknown>;
      if (!Object.hasOwn(obj, path[1]!)) obj[path[1]!] = this.decode(path, slot);
    }
    return root;
  }

  /** The object path's accessor over the whole event, decoded once. */
  whole(): EventAccessor {
    return (this.decoded ??= auditSourceEvent(parseAt(this.body, this.at) as Record<string, unknown>, this.num).fields);
  }
}

const STAGE_TIMESTAMP = ['stageTimestamp'];
const STAGE_TIMESTAMP_SLOT = slotOf(STAGE_TIMESTAMP);

/**
 * The SourceEvent of the event whose `{` is at `at` in a validated body, indexed at index[base..]
 * (byte-index.ts); time = stageTimestamp (0 if unreadable).
 */
export function byteSourceEvent(body: Buffer, at: number, index: Int32Array, base: number, num: bigint): SourceEvent {
  const ts = index[base + FLAGS] === 0 ? index[base + STAGE_TIMESTAMP_SLOT]! : valueAt(body, at, STAGE_TIMESTAMP);
  const text = ts < 0 ? undefined : stringAt(body, ts);
  const parsed = text === undefined ? undefined : parseRfc3339Nano(text);
  const timeNs = parsed ?? 0n;
  return { source: 'k8s_audit', timeNs, fields: new ByteAuditFields(body, at, index, base, timeNs, parsed !== undefined, num) };
}
