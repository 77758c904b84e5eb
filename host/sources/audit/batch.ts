// Decodes one audit webhook request body: JSON text -> an audit.k8s.io EventList (or a single
// Event) -> the audit event objects to evaluate, plus the items left out and why. An item that
// is not an audit event, or whose JSON text is larger than maxEventBytes (the k8saudit plugin's
// maxEventSize, 256 KiB), is skipped and reported, never dropped silently. A body that is not
// JSON, or not an EventList/Event, is refused as a whole. Consumes bytes; produces a DecodeResult.
import { classifyAuditDocument, isAuditEvent } from './document.js';

/** Why one item of a batch was left out. */
export type SkipCode = 'too_large' | 'not_an_event';

/** One item left out, by its index in `items` (0 for a single Event). */
export interface SkippedItem {
  index: number;
  code: SkipCode;
  reason: string;
}

/** A decoded body: the events to evaluate and the items left out. */
export interface DecodedBatch {
  events: Record<string, unknown>[];
  skipped: SkippedItem[];
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

function tooLarge(index: number, size: number): SkippedItem {
  return { index, code: 'too_large', reason: `event larger than maxEventSize: size=${size}` };
}

/** Decodes a request body; `maxEventBytes` bounds the JSON text of one event. */
export function decodeAuditBody(body: Buffer, maxEventBytes: number): DecodeResult {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch (err) {
    return { ok: false, code: 'invalid_json', message: body.length === 0 ? 'invalid JSON: empty body' : `invalid JSON: ${(err as Error).message}` };
  }
  const d = classifyAuditDocument(doc);
  if (d.kind === 'invalid') return { ok: false, code: 'not_audit_events', message: `${d.reason}: expected an audit.k8s.io EventList or Event object` };
  if (d.kind === 'event') {
    const ok = body.length <= maxEventBytes;
    return { ok: true, batch: ok ? { events: [d.event], skipped: [] } : { events: [], skipped: [tooLarge(0, body.length)] } };
  }
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
  return { ok: true, batch: { events, skipped } };
}
