// An audit event read from the request body's bytes (webhook.decoder: bytes): the same fields as
// the object path (document.ts) without decoding the event into a JavaScript object tree. A
// scalar ka.* field, jevt.value and the event time read just their value's bytes; a field that
// gives a list or walks a pod spec decodes only the top-level member it reads (requestObject,
// user...), once per event; anything else (jevt.obj, fields this file does not map) decodes the
// whole event once and asks the object path, so every field keeps the object path's semantics.
// Consumes a validated body and an event's offset; produces a SourceEvent.
import type { EventAccessor, FieldRef, RawValue, SourceEvent } from '../../engine/index.js';
import { ENTRY, ESCAPED, slotOf } from './byte-index.js';
import { parseAt, stringAt, textAt, valueAt } from './byte-value.js';
import { auditSourceEvent } from './document.js';
import { pointerKeys } from './json-value.js';
import { kaExtractor, kaScalarPath } from './ka-fields.js';
import { parseRfc3339Nano } from './time.js';

type Getter = (f: ByteAuditFields, ref: FieldRef) => RawValue | undefined;

/** Getters by field name and argument (`name` or `name[arg]`), bounded like the object path's. */
const GETTERS = new Map<string, Getter>();

function cachedGetter(name: string, arg: string | undefined): Getter {
  const key = arg === undefined ? name : `${name}[${arg}]`;
  let get = GETTERS.get(key);
  if (get === undefined) {
    get = getterFor(name, arg);
    if (GETTERS.size < 4096) GETTERS.set(key, get);
  }
  return get;
}

/**
 * The top-level members a ka.* field that is not a plain key path reads (ka-fields.ts, pod-fields.ts);
 * undefined for a field not mapped here (the whole event is decoded for it).
 */
function kaMembers(name: string): readonly string[] | undefined {
  if (name === 'ka.user.groups') return ['user'];
  if (name === 'ka.sourceips') return ['sourceIPs'];
  if (name === 'ka.uri.param') return ['requestURI'];
  if (name === 'ka.target.pod.name') return ['objectRef'];
  if (name === 'ka.req.binding.subject.has_name') return [];
  if (name.startsWith('ka.req.')) return ['requestObject'];
  return undefined;
}

/** A getter of the text at a key path (asText). */
function textGetter(keys: readonly string[]): Getter {
  const slot = slotOf(keys[0]!);
  return (f) => {
    const at = f.valueAt(slot, keys);
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
    const members = kaMembers(name);
    if (members !== undefined) {
      const extract = kaExtractor(name);
      return (f) => extract(f.partial(members), arg);
    }
  }
  if ((name === 'jevt.value' || name === 'json.value') && arg !== undefined && arg !== '') {
    return textGetter(pointerKeys(arg));
  }
  return (f, ref) => f.whole().field(ref);
}

/** Field access over one event's bytes. */
class ByteAuditFields implements EventAccessor {
  /** Top-level members decoded so far (absent members stay absent). */
  private members: Record<string, unknown> | undefined;
  private decoded: EventAccessor | undefined;

  constructor(
    readonly body: Buffer,
    /** Offset of the event's `{`. */
    readonly at: number,
    /** The batch's index of top-level members (byte-index.ts) and this event's entry in it. */
    private readonly index: Int32Array,
    private readonly base: number,
    readonly timeNs: bigint,
    readonly timeKnown: boolean,
    readonly num: bigint,
  ) {}

  /** Start of the value at `keys` (keys[0] indexed at `slot`, or -1 when not indexed), or -1 when missing. */
  valueAt(slot: number, keys: readonly string[]): number {
    return memberValue(this.body, this.at, this.index, this.base, slot, keys);
  }

  field(ref: FieldRef): RawValue | undefined {
    return cachedGetter(ref.def.name, ref.arg)(this, ref);
  }

  /** An object holding the event's `names` members, decoded (ka.* extractors read only those). */
  partial(names: readonly string[]): Record<string, unknown> {
    const m = (this.members ??= {});
    for (let k = 0; k < names.length; k++) {
      const name = names[k]!;
      if (Object.hasOwn(m, name)) continue;
      const at = this.valueAt(slotOf(name), [name]);
      m[name] = at >= 0 ? parseAt(this.body, at) : undefined;
    }
    return m;
  }

  /** The object path's accessor over the whole event, decoded once. */
  whole(): EventAccessor {
    return (this.decoded ??= auditSourceEvent(parseAt(this.body, this.at) as Record<string, unknown>, this.num).fields);
  }
}

/** Start of the value at `keys` in the event at `at`, through its index entry when keys[0] is indexed (`slot` >= 0). */
function memberValue(body: Buffer, at: number, index: Int32Array, base: number, slot: number, keys: readonly string[]): number {
  if (slot < 0 || (index[base + ENTRY - 1]! & ESCAPED) !== 0) return valueAt(body, at, keys);
  const first = index[base + slot]!;
  return first < 0 ? -1 : valueAt(body, first, keys, 1);
}

const STAGE_TIMESTAMP = ['stageTimestamp'];
const STAGE_TIMESTAMP_SLOT = slotOf('stageTimestamp');

/**
 * The SourceEvent of the event whose `{` is at `at` in a validated body, indexed at index[base..]
 * (byte-index.ts); time = stageTimestamp (0 if unreadable).
 */
export function byteSourceEvent(body: Buffer, at: number, index: Int32Array, base: number, num: bigint): SourceEvent {
  const ts = memberValue(body, at, index, base, STAGE_TIMESTAMP_SLOT, STAGE_TIMESTAMP);
  const text = ts < 0 ? undefined : stringAt(body, ts);
  const parsed = text === undefined ? undefined : parseRfc3339Nano(text);
  const timeNs = parsed ?? 0n;
  return { source: 'k8s_audit', timeNs, fields: new ByteAuditFields(body, at, index, base, timeNs, parsed !== undefined, num) };
}
