// Where an audit event's values start and end in the request body, found in the byte decoder's
// one walk over each event: every key path an audit field reads (the scalar ka.* paths, the
// members list fields decode, the event time) is a slot, so a field read goes straight to its
// value's bytes instead of walking the event again. The walk descends only into members on
// those paths and steps over the rest, validating the event as JSON as it goes (so a body read
// in one pass needs no validation pass before it); each value is taken at its last occurrence (JSON.parse keeps
// the last duplicate: a repeated member clears what its earlier occurrence gave the slots below
// it). An event with a member name written with escapes on the walk is marked, and its reads walk
// the event (byte-value.ts compares such names decoded). The walk also gives the event's end and
// nesting depth. One Int32Array a batch holds every event's entries. Consumes UTF-8 text;
// produces offsets, or -1 for text that is not JSON.
import { skipBlanks, stringEscaped, validDepth, validString, validValue } from './json-scan.js';
import { kaScalarPaths } from './ka-fields.js';

/** A member on an indexed path: its slot (every member on an indexed path has one), and the members below it. */
interface Node {
  slot: number;
  /** Every slot at or below this node (cleared when the member occurs again). */
  below: number[];
  /** The members below this one on indexed paths. */
  children: Array<{ name: string; node: Node }>;
  /** Each child's name as bytes (indexed names are ASCII), by child. */
  bytes: Uint8Array[];
  /** Each child's key (keyOf), by child. */
  keys: Int32Array;
  /** An open-addressing table of child numbers + 1 (0: empty) by hashOf(key) & its length - 1: a name is looked up in a probe or two. */
  table: Int8Array;
}

const newNode = (): Node => ({ slot: -1, below: [], children: [], bytes: [], keys: new Int32Array(0), table: new Int8Array(1) });
/** A name's key: its length, first and last byte (a name of the body is keyed the same way from its bytes). */
const key3 = (length: number, first: number, last: number) => (length << 16) | (first << 8) | last;
const keyOf = (name: string) => key3(name.length, name.charCodeAt(0), name.charCodeAt(name.length - 1));
const hashOf = (key: number) => Math.imul(key, 0x9e3779b1) >>> 24;
const ROOT = newNode();
/** The indexed paths, joined with '\0', by slot. */
const SLOTS = new Map<string, number>();

/** Adds a key path and every prefix of it: each member on the way gets a slot, so a repeated member is told by its slot alone. */
function addPath(path: readonly string[]): void {
  let node = ROOT;
  for (let k = 0; k < path.length; k++) {
    const name = path[k]!;
    let next = node.children.find((c) => c.name === name)?.node;
    if (next === undefined) node.children.push({ name, node: (next = newNode()) });
    node = next;
    if (node.slot < 0) {
      node.slot = SLOTS.size;
      SLOTS.set(path.slice(0, k + 1).join('\0'), node.slot);
    }
  }
}

// The top-level members every audit field starts from, the members list fields decode
// (byte-event.ts), the event time, every scalar ka.* path, and the members below requestObject
// that the built-in rules read with jevt.value (a pod spec's `tls`, an ephemeral container
// subresource's `ephemeralContainers`), so those reads do not walk a whole pod spec.
for (const name of ['auditID', 'stage', 'annotations', 'user', 'impersonatedUser', 'verb', 'requestURI', 'objectRef', 'requestObject', 'responseObject', 'responseStatus', 'userAgent', 'sourceIPs', 'stageTimestamp']) addPath([name]);
for (const sub of ['spec', 'rules', 'subjects', 'ephemeralContainers']) addPath(['requestObject', sub]);
for (const sub of ['containers', 'initContainers', 'ephemeralContainers', 'volumes', 'securityContext', 'ports', 'tls']) addPath(['requestObject', 'spec', sub]);
for (const path of kaScalarPaths()) addPath(path);

function fillBelow(node: Node): number[] {
  const below = node.slot >= 0 ? [node.slot] : [];
  for (const c of node.children) below.push(...fillBelow(c.node));
  node.below = below;
  node.keys = Int32Array.from(node.children, (c) => keyOf(c.name));
  node.bytes = node.children.map((c) => Uint8Array.from(c.name, (ch) => ch.charCodeAt(0)));
  let size = 4;
  while (size < 4 * node.children.length) size *= 2;
  node.table = new Int8Array(size);
  node.keys.forEach((key, k) => {
    let h = hashOf(key) & (size - 1);
    while (node.table[h] !== 0) h = (h + 1) & (size - 1);
    node.table[h] = k + 1;
  });
  return below;
}
fillBelow(ROOT);

/**
 * Indexed slots: an entry holds where each slot's value starts, where it ends, the flags word,
 * then one bit a slot (32 a word) set when its value is a string written without escapes.
 */
const SLOT_COUNT = SLOTS.size;
/** The flags word: entry FLAGS. */
export const FLAGS = 2 * SLOT_COUNT;
/** The plain-string bits: slot s is bit s & 31 of entry PLAIN + (s >> 5) (isPlain). */
const PLAIN = FLAGS + 1;
/** Entries per event. */
export const ENTRY = PLAIN + ((SLOT_COUNT + 31) >> 5);

/** Whether the walk saw the value at `slot` of the entry index[base..] as a string written without escapes. */
export function isPlain(index: Int32Array, base: number, slot: number): boolean {
  return ((index[base + PLAIN + (slot >> 5)]! >>> (slot & 31)) & 1) !== 0;
}
/** Where a slot's value ends: entry END + slot. */
export const END = SLOT_COUNT;
/** The event has a member name written with escapes on an indexed path: the index cannot be trusted. */
const ESCAPED = 1;

/** The slot of a key path, or -1 when it is not indexed. */
export function slotOf(path: readonly string[]): number {
  return SLOTS.get(path.join('\0')) ?? -1;
}

/** The longest indexed prefix of `path`: its slot and length (slot -1, length 0 when none). */
export function indexedPrefix(path: readonly string[]): { slot: number; length: number } {
  for (let n = path.length; n > 0; n--) {
    const slot = slotOf(path.slice(0, n));
    if (slot >= 0) return { slot, length: n };
  }
  return { slot: -1, length: 0 };
}

/**
 * The trie of indexed paths as i32 words, for the WebAssembly walk (assembly/webhook/json-index.ts): a
 * node is [slot, children, the word of its first child record, the word of its below list, the
 * word of its table, the table's mask]; a child record is [key (keyOf), the word of its name (one
 * byte a word), node, name length]; a below list is [count, slots...]; a table is the node's
 * (child numbers + 1 by hashOf(key) & mask). The root is the node at word 0.
 */
export function trieWords(): Int32Array {
  const words: number[] = [];
  const place = (node: Node): number => {
    const at = words.length;
    words.push(node.slot, node.children.length, 0, 0, 0, node.table.length - 1);
    const records = words.length;
    words[at + 2] = records;
    node.children.forEach((c, k) => words.push(node.keys[k]!, 0, 0, c.name.length));
    node.children.forEach((c, k) => {
      words[records + 4 * k + 1] = words.length;
      for (let j = 0; j < c.name.length; j++) words.push(c.name.charCodeAt(j));
      words[records + 4 * k + 2] = place(c.node);
    });
    words[at + 3] = words.length;
    words.push(node.below.length, ...node.below);
    words[at + 4] = words.length;
    words.push(...node.table);
    return at;
  };
  place(ROOT);
  return Int32Array.from(words);
}

/** The deepest nesting of the last indexed event (the event object is 1). */
export let indexedDepth = 0;
let flags = 0;

/** The child of `node` named by the string whose quote is at `at` and which ends before `end`. */
function childNamed(node: Node, b: Uint8Array, at: number, end: number): Node | undefined {
  const length = end - at - 2;
  if (length === 0) return undefined;
  const key = key3(length, b[at + 1]!, b[end - 2]!);
  const table = node.table;
  const mask = table.length - 1;
  for (let h = hashOf(key) & mask; ; h = (h + 1) & mask) {
    const k = table[h]! - 1;
    if (k < 0) return undefined;
    if (node.keys[k] !== key) continue;
    const name = node.bytes[k]!;
    let same = true;
    for (let j = 1; j < length - 1; j++) {
      if (b[at + 1 + j] !== name[j]) {
        same = false;
        break;
      }
    }
    if (same) return node.children[k]!.node;
  }
}

/**
 * Walks the object at `at` (nesting `level`) whose members on indexed paths are below `node`,
 * validating it as validValue does; returns the index past its `}`, or -1 when it is not valid JSON.
 */
function walkObject(b: Uint8Array, at: number, node: Node, level: number, index: Int32Array, base: number): number {
  if (level > indexedDepth) indexedDepth = level;
  let i = skipBlanks(b, at + 1);
  if (b[i] === 0x7d) return i + 1;
  for (;;) {
    if (b[i] !== 0x22) return -1;
    const nameEnd = validString(b, i);
    if (nameEnd < 0) return -1;
    if (stringEscaped) flags |= ESCAPED;
    const colon = skipBlanks(b, nameEnd);
    if (b[colon] !== 0x3a) return -1;
    const valueAt = skipBlanks(b, colon + 1);
    const child = childNamed(node, b, i, nameEnd);
    let end: number;
    // A member met again: what its earlier occurrence gave the slots at and below it goes (JSON.parse keeps the last).
    if (child !== undefined && index[base + child.slot]! >= 0) {
      for (const s of child.below) {
        index[base + s] = index[base + END + s] = -1;
        index[base + PLAIN + (s >> 5)]! &= ~(1 << (s & 31));
      }
    }
    const c = b[valueAt];
    if (c === 0x22) {
      // A string (most values): no nesting to note; one without escapes is its bytes as they are.
      end = validString(b, valueAt);
      if (end < 0) return -1;
      if (child !== undefined && !stringEscaped) index[base + PLAIN + (child.slot >> 5)]! |= 1 << (child.slot & 31);
    } else if (child !== undefined && child.children.length > 0 && c === 0x7b) {
      end = walkObject(b, valueAt, child, level + 1, index, base);
      if (end < 0) return -1;
    } else {
      end = validValue(b, valueAt);
      if (end < 0) return -1;
      if (level + validDepth > indexedDepth) indexedDepth = level + validDepth;
    }
    if (child !== undefined) {
      index[base + child.slot] = valueAt;
      index[base + END + child.slot] = end;
    }
    i = skipBlanks(b, end);
    if (b[i] === 0x7d) return i + 1;
    if (b[i] !== 0x2c) return -1;
    i = skipBlanks(b, i + 1);
  }
}

/**
 * Indexes the object at `at` into index[base .. base + ENTRY) (starts and ends, -1 when absent;
 * then the flags and the plain-string bits) and returns the index past its `}` (-1: the object is not valid JSON); sets
 * indexedDepth.
 */
export function indexEvent(b: Uint8Array, at: number, index: Int32Array, base: number): number {
  index.fill(-1, base, base + FLAGS);
  index.fill(0, base + PLAIN, base + ENTRY);
  flags = 0;
  indexedDepth = 0;
  const end = walkObject(b, at, ROOT, 1, index, base);
  index[base + FLAGS] = flags;
  return end;
}
