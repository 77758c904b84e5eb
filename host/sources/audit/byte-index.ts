// Where an audit event's top-level members start in the request body (the byte decoder's one walk
// over each event): an event's field reads go straight to the member they start from instead of
// walking the event again. Only the members audit fields start from are indexed, each at its
// last occurrence (JSON.parse keeps the last duplicate); an event with a member name written with
// escapes is marked, and its reads walk the event (byte-value.ts compares such names decoded).
// The walk also gives the event's end and nesting depth. One Int32Array a batch holds every
// event's entries. Consumes validated JSON text; produces offsets.
import { nameIs, skipBlanks, skippedDepth, skipValue, stringEnd } from './json-scan.js';

/** The indexed member names: every top-level key an audit field reads first (ka-fields.ts, pod-fields.ts, time.ts). */
const NAMES = ['auditID', 'stage', 'annotations', 'user', 'impersonatedUser', 'verb', 'requestURI', 'objectRef', 'requestObject', 'responseObject', 'responseStatus', 'userAgent', 'sourceIPs', 'stageTimestamp'] as const;

/** Entries per event: one offset per name, then the flags word. */
export const ENTRY = NAMES.length + 1;
const FLAGS = NAMES.length;
/** The event has a top-level member name written with escapes: the index cannot be trusted. */
export const ESCAPED = 1;

/** Candidates by (length << 8 | first byte): a number key, then one byte compare. */
const CANDIDATES = new Map<number, Array<{ name: string; slot: number }>>();
NAMES.forEach((name, slot) => {
  const key = (name.length << 8) | name.charCodeAt(0);
  const list = CANDIDATES.get(key) ?? [];
  list.push({ name, slot });
  CANDIDATES.set(key, list);
});

/** The index slot of a top-level member name, or -1 when it is not indexed. */
export function slotOf(name: string): number {
  return (NAMES as readonly string[]).indexOf(name);
}

/** The deepest nesting of the last indexed event (the event object is 1). */
export let indexedDepth = 0;

/**
 * Indexes the object at `at` into index[base .. base + ENTRY) (offsets, -1 when absent; then the
 * flags) and returns the index past its `}`; sets indexedDepth.
 */
export function indexEvent(b: Uint8Array, at: number, index: Int32Array, base: number): number {
  index.fill(-1, base, base + FLAGS);
  let flags = 0;
  let deepest = 0;
  let i = skipBlanks(b, at + 1);
  if (b[i] !== 0x7d) {
    for (;;) {
      const nameEnd = stringEnd(b, i);
      const valueAt = skipBlanks(b, skipBlanks(b, nameEnd) + 1);
      const len = nameEnd - i - 2;
      const list = CANDIDATES.get((len << 8) | b[i + 1]!);
      if (list !== undefined) {
        for (const c of list) if (nameIs(b, i, nameEnd, c.name)) index[base + c.slot] = valueAt;
      }
      for (let k = i + 1; k < nameEnd - 1; k++) {
        if (b[k] === 0x5c) {
          flags |= ESCAPED;
          break;
        }
      }
      i = skipBlanks(b, skipValue(b, valueAt));
      if (skippedDepth > deepest) deepest = skippedDepth;
      if (b[i] === 0x7d) break;
      i = skipBlanks(b, i + 1);
    }
  }
  index[base + FLAGS] = flags;
  indexedDepth = deepest + 1;
  return i + 1;
}
