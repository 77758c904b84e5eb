// A webhook request body to the SourceEvents to evaluate, by either decoder (webhook.decoder):
// `objects` parses the body with JSON.parse and reads fields from the event objects (batch.ts,
// document.ts); `bytes` validates the body's bytes (json-scan.ts) and reads each event's fields
// from them (byte-event.ts), so no object tree is built per event. An EventList (what the API
// server sends) is validated and indexed in one pass (decodeList); any other body is validated
// whole first, then read. Both give the same events, skipped and truncated items and refusals
// (test/sources/audit/decoder-differential.test.ts): the bytes decoder hands the rare shapes to
// the object path instead of mirroring them: a body it refuses (the refusal and its message are
// JSON.parse's), a top-level member name spelled with escapes, and an event nested past
// maxEventDepth (decoded, cut and read as an object).
// Consumes bytes, limits and the first event number; produces the batch or a refusal.
import { isUtf8 } from 'node:buffer';
import type { SourceEvent } from '../../engine/index.js';
import { cutDeep, decodeAuditBody, type EventLimits, type SkippedItem, tooLarge, type TruncatedItem } from './batch.js';
import { byteSourceEvent } from './byte-event.js';
import { ENTRY, FLAGS, indexedDepth, indexEvent, slotOf } from './byte-index.js';
import { parseAt, valueAt } from './byte-value.js';
import { auditSourceEvent } from './document.js';
import { hasEscape, skipBlanks, skipValue, stringEnd, type TopMembers, validJson } from './json-scan.js';
import { CHUNK, ITEM, jsListWalk, NOT_A_LIST, wasmListWalk } from './list-walk.js';

/** Which decoder reads request bodies. */
export type AuditDecoder = 'bytes' | 'objects';

/** A decoded body as SourceEvents (numbered from firstNum), or a refusal with a stable code. */
export type SourceDecodeResult = { ok: true; events: SourceEvent[]; skipped: SkippedItem[]; truncated: TruncatedItem[] } | { ok: false; code: 'invalid_json' | 'not_audit_events'; message: string };

/** The object path: JSON.parse, then one SourceEvent per event object. */
function decodeObjects(body: Buffer, limits: EventLimits, firstNum: bigint): SourceDecodeResult {
  const decoded = decodeAuditBody(body, limits);
  if (!decoded.ok) return decoded;
  const { events, skipped, truncated } = decoded.batch;
  return { ok: true, events: events.map((json, i) => auditSourceEvent(json, firstNum + BigInt(i))), skipped, truncated };
}

const EVENT_LIST = '"EventList"';

/** True when the value at `at` is the string "EventList"; undefined when it is a string spelled with escapes. */
function isEventList(body: Buffer, at: number): boolean | undefined {
  if (at < 0 || body[at] !== 0x22) return false;
  const end = stringEnd(body, at);
  if (hasEscape(body, at + 1, end - 1)) return undefined;
  return end - at === EVENT_LIST.length && body.toString('latin1', at, end) === EVENT_LIST;
}

/** What decodeBytes builds: the batch, and the index chunk events are being indexed into. */
interface Out {
  events: SourceEvent[];
  skipped: SkippedItem[];
  truncated: TruncatedItem[];
  index: Int32Array;
  /** Entries used in `index`. */
  used: number;
}

/** Indexes the object at `at` into the next entry (a new chunk when the last is full); its end, depth and entry. */
function indexNext(out: Out, body: Buffer, at: number): { end: number; depth: number; base: number } {
  if (out.used === CHUNK) {
    out.index = new Int32Array(CHUNK * ENTRY);
    out.used = 0;
  }
  const base = out.used++ * ENTRY;
  const end = indexEvent(body, at, out.index, base);
  return { end, depth: indexedDepth, base };
}

const AUDIT_ID = ['auditID'];
const AUDIT_ID_SLOT = slotOf(AUDIT_ID);
/** The EventList walk decodeList uses (list-walk.ts). */
export const listWalk = wasmListWalk ?? jsListWalk;
/** decodeList's index until the walk hands over its first step's. */
const EMPTY = new Int32Array(0);

/** Adds the event at [at, end) (nesting `depth`, indexed at out.index[base..]): skipped when too large, cut and read as an object when too deep. */
function addEvent(out: Out, body: Buffer, at: number, end: number, depth: number, base: number, index: number, limits: EventLimits, firstNum: bigint): void {
  // Events are numbered in order; a skipped item takes no number (as on the object path).
  const num = firstNum + BigInt(out.events.length);
  // No item can be larger than the body: measured only when the body could hold one too large.
  const size = end - at;
  if (body.length > limits.maxEventBytes && size > limits.maxEventBytes) {
    out.skipped.push(tooLarge(index, size));
    return;
  }
  if (depth > limits.maxEventDepth) {
    const json = parseAt(body, at) as Record<string, unknown>;
    const cut = cutDeep(json, index, limits.maxEventDepth);
    if (cut) out.truncated.push(cut);
    out.events.push(auditSourceEvent(json, num));
    return;
  }
  out.events.push(byteSourceEvent(body, at, end, out.index, base, num));
}

/**
 * The common body in one pass: an EventList object whose members are validated as they are
 * read and whose items are indexed as they are validated (the API server sends nothing else),
 * by the WebAssembly walk when its module was built, else by the JavaScript one (list-walk.ts).
 * Undefined for anything else (not valid JSON, another document, a top-level member name
 * written with escapes, "items" twice, "kind" not the plain string "EventList"): the general
 * path (decodeBytes) decides those, from the start.
 */
function decodeList(body: Buffer, limits: EventLimits, firstNum: bigint): SourceDecodeResult | undefined {
  const out: Out = { events: [], skipped: [], truncated: [], index: EMPTY, used: 0 };
  let n = 0;
  const kind = listWalk(body, (items, count, index) => {
    out.index = index;
    for (let r = 0; r < count * ITEM; r += ITEM, n++) {
      const at = items[r]!;
      const base = items[r + 3]! * ENTRY;
      if (base < 0) {
        out.skipped.push(notAnEvent(n));
        continue;
      }
      const escaped = index[base + FLAGS] !== 0;
      const id = escaped ? valueAt(body, at, AUDIT_ID) : index[base + AUDIT_ID_SLOT]!;
      if (id >= 0 && body[id] === 0x22) addEvent(out, body, at, items[r + 1]!, items[r + 2]!, base, n, limits, firstNum);
      else out.skipped.push(notAnEvent(n));
    }
  });
  if (kind === NOT_A_LIST || isEventList(body, kind) !== true) return undefined;
  return { ok: true, events: out.events, skipped: out.skipped, truncated: out.truncated };
}

/** The bytes path (see the header); the object path decides what it does not read itself. */
function decodeBytes(body: Buffer, limits: EventLimits, firstNum: bigint): SourceDecodeResult {
  if (!isUtf8(body)) return decodeObjects(body, limits, firstNum);
  const common = decodeList(body, limits, firstNum);
  if (common !== undefined) return common;
  const top: TopMembers = { kind: -1, items: -1, auditID: -1, escaped: false };
  if (!validJson(body, top)) return decodeObjects(body, limits, firstNum);
  const start = skipBlanks(body, 0);
  if (body[start] !== 0x7b || top.escaped) return decodeObjects(body, limits, firstNum);
  const list = isEventList(body, top.kind);
  const out: Out = { events: [], skipped: [], truncated: [], index: new Int32Array(CHUNK * ENTRY), used: 0 };
  if (list === undefined) return decodeObjects(body, limits, firstNum);
  if (!list) {
    // One Event (a string auditID), or a refusal the object path words.
    if (top.auditID < 0 || body[top.auditID] !== 0x22) return decodeObjects(body, limits, firstNum);
    const { end, depth, base } = indexNext(out, body, start);
    if (body.length > limits.maxEventBytes) out.skipped.push(tooLarge(0, body.length));
    else addEvent(out, body, start, end, depth, base, 0, limits, firstNum);
    return { ok: true, events: out.events, skipped: out.skipped, truncated: out.truncated };
  }
  if (top.items < 0 || body[top.items] !== 0x5b) return decodeObjects(body, limits, firstNum);
  let i = skipBlanks(body, top.items + 1);
  for (let index = 0; body[i] !== 0x5d; index++) {
    let end: number;
    if (body[i] === 0x7b) {
      const entry = indexNext(out, body, i);
      end = entry.end;
      const escaped = out.index[entry.base + FLAGS] !== 0;
      const id = escaped ? valueAt(body, i, AUDIT_ID) : out.index[entry.base + AUDIT_ID_SLOT]!;
      if (id >= 0 && body[id] === 0x22) addEvent(out, body, i, end, entry.depth, entry.base, index, limits, firstNum);
      else out.skipped.push(notAnEvent(index));
    } else {
      end = skipValue(body, i);
      out.skipped.push(notAnEvent(index));
    }
    i = skipBlanks(body, end);
    if (body[i] === 0x2c) i = skipBlanks(body, i + 1);
  }
  return { ok: true, events: out.events, skipped: out.skipped, truncated: out.truncated };
}

const notAnEvent = (index: number): SkippedItem => ({ index, code: 'not_an_event', reason: 'not an audit event (no string auditID)' });

/** Decodes a request body with the chosen decoder; events are numbered firstNum, firstNum + 1, ... */
export function decodeAuditEvents(body: Buffer, limits: EventLimits, decoder: AuditDecoder, firstNum: bigint): SourceDecodeResult {
  return decoder === 'bytes' ? decodeBytes(body, limits, firstNum) : decodeObjects(body, limits, firstNum);
}
