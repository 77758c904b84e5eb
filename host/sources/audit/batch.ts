// Decodes one audit webhook request body: JSON text -> an audit.k8s.io EventList (or a single
// Event) -> the audit event objects to evaluate, plus the items left out and why. An item that
// is not an audit event, or whose JSON text is larger than maxEventBytes (the k8saudit plugin's
// maxEventSize, 256 KiB), is skipped and reported, never dropped silently. An event nested deeper
// than maxEventDepth keeps its place in the batch with the values past the bound cut (depth.ts),
// and is reported as truncated. A body that is not JSON, or not an EventList/Event, is refused as
// a whole. Consumes bytes; produces a DecodeResult.
import { isUtf8 } from 'node:buffer';
import { cutDeepValues } from './depth.js';
import { classifyAuditDocument, isAuditEvent } from './document.js';

/** Why one item of a batch was left out. */
type SkipCode = 'too_large' | 'not_an_event';

/** One item left out, by its index in `items` (0 for a single Event). */
export interface SkippedItem {
  index: number;
  code: SkipCode;
  reason: string;
}

/** One item evaluated with the values nested past maxEventDepth cut. */
export interface TruncatedItem {
  index: number;
  code: 'too_deep';
  reason: string;
}

/** A decoded body: the events to evaluate, the items left out and the events cut at the depth bound. */
interface DecodedBatch {
  events: Record<string, unknown>[];
  skipped: SkippedItem[];
  truncated: TruncatedItem[];
}

/** Bounds on one event of a body. */
export interface EventLimits {
  /** Most bytes of one event's JSON text (larger items are skipped). */
  maxEventBytes: number;
  /** Deepest nesting of one event's values (deeper values are cut; the event object is depth 1). */
  maxEventDepth: number;
}

/** The outcome of decoding; a refused body carries a stable code and a message. */
export type DecodeResult = { ok: true; batch: DecodedBatch } | { ok: false; code: 'invalid_json' | 'not_audit_events'; message: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index just past the string that starts with the quote at `i`. */
function skipString(buf: Buffer, i: number): number {
  for (;;) {
    const q = buf.indexOf(QUOTE, i + 1);
    if (q < 0) return buf.length;
    let slashes = 0;
    for (let k = q - 1; buf[k] === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q;
  }
}

/**
 * Byte length of each object element of the top-level `"items"` array, in order. Assumes valid
 * JSON (the caller parsed it already); the caller checks the count against the parsed items.
 */
export function itemObjectSizes(buf: Buffer): number[] {
  const sizes: number[] = [];
  let depth = 0;
  let key: string | undefined; // last string seen directly inside the top-level object
  let inItems = false; // inside the top-level "items" array (depth 2)
  let start = -1;
  let i = 0;
  while (i < buf.length) {
    const c = buf[i]!;
    if (c === QUOTE) {
      const end = skipString(buf, i);
      if (depth === 1) key = buf.toString('latin1', i + 1, end - 1);
      i = end;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth === 1 && c === 0x5b && key === 'items') inItems = true;
      depth++;
      if (inItems && depth === 3 && c === 0x7b) start = i;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (inItems && depth === 3 && c === 0x7d) sizes.push(i + 1 - start);
      depth--;
      if (depth === 1) inItems = false;
    } else if (c === 0x2c /* , */ && depth === 1) key = undefined;
    i++;
  }
  return sizes;
}

export function tooLarge(index: number, size: number): SkippedItem {
  return { index, code: 'too_large', reason: `event larger than maxEventSize: size=${size}` };
}

/** Cuts the values of `event` past the depth bound; the truncation to report, if any. */
export function cutDeep(event: unknown, index: number, maxDepth: number): TruncatedItem | undefined {
  const cut = cutDeepValues(event, maxDepth);
  return cut === 0 ? undefined : { index, code: 'too_deep', reason: `${cut} value(s) nested deeper than maxEventDepth=${maxDepth} cut` };
}

/** Offset of the first byte that does not start a UTF-8 sequence (only called on a body that is not UTF-8). */
function firstInvalidUtf8(buf: Buffer): number {
  for (let i = 0; i < buf.length; ) {
    const c = buf[i]!;
    const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    // isUtf8 over the one sequence rejects truncated, overlong and surrogate forms
    if (n === 0 || (n > 1 && !isUtf8(buf.subarray(i, i + n)))) return i;
    i += n;
  }
  return buf.length;
}

/** Decodes a request body within the per-event limits. */
export function decodeAuditBody(body: Buffer, limits: EventLimits): DecodeResult {
  const { maxEventBytes, maxEventDepth } = limits;
  // JSON text is UTF-8 (RFC 8259 §8.1); decoding other bytes would turn them into U+FFFD
  // silently, and a rule would then judge text that the API server never sent.
  if (!isUtf8(body)) return { ok: false, code: 'invalid_json', message: `invalid JSON: not UTF-8 (byte ${firstInvalidUtf8(body)})` };
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch (err) {
    return { ok: false, code: 'invalid_json', message: body.length === 0 ? 'invalid JSON: empty body' : `invalid JSON: ${(err as Error).message}` };
  }
  const d = classifyAuditDocument(doc);
  if (d.kind === 'invalid') return { ok: false, code: 'not_audit_events', message: `${d.reason}: expected an audit.k8s.io EventList or Event object` };
  if (d.kind === 'event') {
    if (body.length > maxEventBytes) return { ok: true, batch: { events: [], skipped: [tooLarge(0, body.length)], truncated: [] } };
    const cut = cutDeep(d.event, 0, maxEventDepth);
    return { ok: true, batch: { events: [d.event], skipped: [], truncated: cut ? [cut] : [] } };
  }
  // Before any measuring: the re-serializing fallback below must not meet an unbounded depth.
  const truncated: TruncatedItem[] = [];
  d.items.forEach((item, index) => {
    const cut = isAuditEvent(item) ? cutDeep(item, index, maxEventDepth) : undefined;
    if (cut) truncated.push(cut);
  });
  // No item can be larger than the body; measure items only when the body could hold one too large.
  let sizes: number[] | undefined;
  if (body.length > maxEventBytes) {
    sizes = itemObjectSizes(body);
    const objects = d.items.filter((it) => typeof it === 'object' && it !== null && !Array.isArray(it)).length;
    // A key spelled with escapes or repeated: measure each object by its re-serialized text instead.
    if (sizes.length !== objects) sizes = d.items.filter((it) => typeof it === 'object' && it !== null && !Array.isArray(it)).map((it) => Buffer.byteLength(JSON.stringify(it)));
  }
  const events: Record<string, unknown>[] = [];
  const skipped: SkippedItem[] = [];
  let objectIndex = 0;
  d.items.forEach((item, index) => {
    const isObject = typeof item === 'object' && item !== null && !Array.isArray(item);
    const size = isObject && sizes ? sizes[objectIndex++]! : 0;
    if (!isAuditEvent(item)) skipped.push({ index, code: 'not_an_event', reason: 'not an audit event (no string auditID)' });
    else if (size > maxEventBytes) skipped.push(tooLarge(index, size));
    else events.push(item);
  });
  // An item both cut and skipped as too large is reported once, as skipped.
  const kept = skipped.length === 0 ? truncated : truncated.filter((t) => !skipped.some((s) => s.index === t.index));
  return { ok: true, batch: { events, skipped, truncated: kept } };
}
