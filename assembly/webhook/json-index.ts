// The audit webhook's EventList walk in WebAssembly (host/sources/audit/list-walk.ts runs it):
// the same one pass as the JavaScript walk (list-walk.ts's jsListWalk, json-scan.ts and
// byte-index.ts), validating the body as exactly what JSON.parse accepts and indexing each event's
// values by key-path slot, at a fraction of JavaScript's cost per byte: a string's plain bytes are
// stepped over sixteen at a time (SIMD). Not part of the rule runtime (assembly/index.ts): built
// on its own at build time (scripts/build-json-index.mjs) and loaded once by the host.
//
// Memory, laid out by the host from heapBase(): the key-path trie (byte-index.ts's trieWords),
// the item records and index entries of one step, the nesting stack of the validator, and the
// body, followed by PAD zero bytes. A zero byte past the body ends every scan the way reading past
// the end of a Buffer does in JavaScript (no JSON token holds one, and a string refuses it), and
// lets a 16-byte load start at any byte of the body.
// Positions are addresses in memory while walking; what is written out is offsets into the body.

const QUOTE: u32 = 0x22;
const BACKSLASH: u32 = 0x5c;
const OPEN_OBJECT: u32 = 0x7b;
const CLOSE_OBJECT: u32 = 0x7d;
const OPEN_ARRAY: u32 = 0x5b;
const CLOSE_ARRAY: u32 = 0x5d;
const COMMA: u32 = 0x2c;
const COLON: u32 = 0x3a;

/** What listStep answers. */
const DONE: i32 = 1;
const MORE: i32 = 2;
const FAILED: i32 = -1;
/** Ints an item record holds: start, end, depth, entry in the step's entries (-1: not an object). */
const ITEM: i32 = 4;

// Set by setup(): where the parts of memory are, and the index entry's layout.
let trie: usize = 0;
let itemsAt: usize = 0;
let itemCap: i32 = 0;
let entriesAt: usize = 0;
let entryCap: i32 = 0;
let stack: usize = 0;
let slotCount: i32 = 0;
let entryInts: i32 = 0;

/** Where the host may lay out memory from. */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15;
}

/**
 * Takes the layout the host chose: the trie written at `trieAt`, room for `items_` item records and
 * `entries_` entries of `entryLength` ints (every slot's start and end, the flags, the plain bits),
 * and the validator's stack (a byte a level, as many as the body has bytes).
 */
export function setup(trieAt: usize, items: usize, items_: i32, entries: usize, entries_: i32, stackAt: usize, slots: i32, entryLength: i32): void {
  trie = trieAt;
  stack = stackAt;
  itemsAt = items;
  itemCap = items_;
  entriesAt = entries;
  entryCap = entries_;
  slotCount = slots;
  entryInts = entryLength;
}

@inline function at(i: usize): u32 {
  return <u32>load<u8>(i);
}

@inline function isBlank(c: u32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}

@inline function isHex(c: u32): bool {
  return c - 0x30 < 10 || (c | 0x20) - 0x61 < 6;
}

function skipBlanks(i: usize): usize {
  while (isBlank(at(i))) i++;
  return i;
}

/** Whether the last string validString accepted holds an escape. */
let escaped = false;

/** Just past the valid string whose quote is at `i`, or 0 (raw control character, bad escape, no end); sets escaped. */
function validString(i: usize): usize {
  escaped = false;
  i++;
  const quote = i8x16.splat(<i8>QUOTE);
  const backslash = i8x16.splat(<i8>BACKSLASH);
  const space = i8x16.splat(0x20);
  while (true) {
    // The plain run, sixteen bytes a step: it ends at a quote, a backslash or a control byte (the padding's zero included).
    while (true) {
      const v = v128.load(i);
      const stop = i8x16.bitmask(v128.or(v128.or(i8x16.eq(v, quote), i8x16.eq(v, backslash)), i8x16.lt_u(v, space)));
      if (stop != 0) {
        i += <usize>ctz(stop);
        break;
      }
      i += 16;
    }
    const c = at(i);
    if (c == QUOTE) return i + 1;
    if (c != BACKSLASH) return 0;
    escaped = true;
    const e = at(i + 1);
    if (e == 0x75) {
      if (!isHex(at(i + 2)) || !isHex(at(i + 3)) || !isHex(at(i + 4)) || !isHex(at(i + 5))) return 0;
      i += 6;
    } else if (e == QUOTE || e == BACKSLASH || e == 0x2f || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74) {
      i += 2;
    } else {
      return 0;
    }
  }
}

/** Just past the valid number at `i` (RFC 8259 §6), or 0. */
function validNumber(i: usize): usize {
  if (at(i) == 0x2d) i++;
  if (at(i) == 0x30) i++;
  else if (isDigit(at(i))) while (isDigit(at(i))) i++;
  else return 0;
  if (at(i) == 0x2e) {
    i++;
    if (!isDigit(at(i))) return 0;
    while (isDigit(at(i))) i++;
  }
  if ((at(i) | 0x20) == 0x65) {
    i++;
    if (at(i) == 0x2b || at(i) == 0x2d) i++;
    if (!isDigit(at(i))) return 0;
    while (isDigit(at(i))) i++;
  }
  return i;
}

/** Just past a valid scalar at `i`, or 0. */
function validScalar(i: usize): usize {
  const c = at(i);
  if (c == QUOTE) return validString(i);
  // true, null: four bytes; false: five (compared as one little-endian word, then its last byte).
  if (c == 0x74) return load<u32>(i) == 0x65757274 ? i + 4 : 0;
  if (c == 0x6e) return load<u32>(i) == 0x6c6c756e ? i + 4 : 0;
  if (c == 0x66) return load<u32>(i) == 0x736c6166 && at(i + 4) == 0x65 ? i + 5 : 0;
  return validNumber(i);
}

/** Past a member's `"name" :` and the blanks after it (the value's start), or 0. */
function memberName(i: usize): usize {
  if (at(i) != QUOTE) return 0;
  i = validString(i);
  if (i == 0) return 0;
  i = skipBlanks(i);
  if (at(i) != COLON) return 0;
  return skipBlanks(i + 1);
}

/** The deepest nesting met by the last validValue (0 for a scalar). */
let validDepth: i32 = 0;

/** Just past the valid JSON value at `i`, or 0; sets validDepth. Iterative, its open containers on `stack` (1: an object). */
function validValue(i: usize): usize {
  const c0 = at(i);
  if (c0 != OPEN_OBJECT && c0 != OPEN_ARRAY) {
    validDepth = 0;
    return validScalar(i);
  }
  let depth: usize = 0;
  let deepest: usize = 0;
  while (true) {
    const c = at(i);
    if (c == OPEN_OBJECT || c == OPEN_ARRAY) {
      const object = c == OPEN_OBJECT;
      i = skipBlanks(i + 1);
      if (depth + 1 > deepest) deepest = depth + 1;
      if (at(i) == (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        i++;
      } else {
        store<u8>(stack + depth, object ? 1 : 0);
        depth++;
        if (object && (i = memberName(i)) == 0) return 0;
        continue;
      }
    } else {
      i = validScalar(i);
      if (i == 0) return 0;
    }
    // After a value: close containers until one goes on with a comma.
    while (true) {
      if (depth == 0) {
        validDepth = <i32>deepest;
        return i;
      }
      i = skipBlanks(i);
      const object = load<u8>(stack + depth - 1) == 1;
      const c2 = at(i);
      if (c2 == COMMA) {
        i = skipBlanks(i + 1);
        if (object && (i = memberName(i)) == 0) return 0;
        break;
      }
      if (c2 != (object ? CLOSE_OBJECT : CLOSE_ARRAY)) return 0;
      depth--;
      i++;
    }
  }
}

// The trie (byte-index.ts's trieWords), in i32 words: a node is [slot, children, first child
// record, below list, table, table mask]; a child record is [key, name (word address of its bytes,
// one a word), node, name length]; a below list is [count, slots...]; a table holds child numbers
// + 1 by hash of key (open addressing, as byte-index.ts's childNamed looks names up). Word
// addresses count from the trie's start.
@inline function word(k: i32): i32 {
  return load<i32>(trie + (<usize>k << 2));
}

/** The child of `node` named by the string whose quote is at `q` and which ends before `end` (its raw bytes), or -1. */
function childNamed(node: i32, q: usize, end: usize): i32 {
  const length = <i32>(end - q) - 2;
  if (length <= 0) return -1;
  // byte-index.ts's key3 and hashOf.
  const key = (length << 16) | (<i32>at(q + 1) << 8) | <i32>at(end - 2);
  const records = word(node + 2);
  const table = word(node + 4);
  const mask = word(node + 5);
  for (let h = <i32>(<u32>(key * <i32>0x9e3779b1) >> 24) & mask; ; h = (h + 1) & mask) {
    const k = word(table + h) - 1;
    if (k < 0) return -1;
    const rec = records + 4 * k;
    if (word(rec) != key || word(rec + 3) != length) continue;
    const name = word(rec + 1);
    let j = 1;
    while (j < length - 1 && <u32>word(name + j) == at(q + 1 + <usize>j)) j++;
    if (j >= length - 1) return word(rec + 2);
  }
  return -1;
}

/** The deepest nesting of the event being indexed, and its flags word (1: a member name written with escapes on the walk). */
let indexedDepth: i32 = 0;
let flags: i32 = 0;
let body: usize = 0;

/** Walks the object at `o` (nesting `level`) whose members on indexed paths are below `node`, into the entry at `entry`; past its `}`, or 0. */
function walkObject(o: usize, node: i32, level: i32, entry: usize): usize {
  if (level > indexedDepth) indexedDepth = level;
  let i = skipBlanks(o + 1);
  if (at(i) == CLOSE_OBJECT) return i + 1;
  const ends = entry + (<usize>slotCount << 2);
  const plain = ends + (<usize>slotCount << 2) + 4;
  while (true) {
    if (at(i) != QUOTE) return 0;
    const nameEnd = validString(i);
    if (nameEnd == 0) return 0;
    if (escaped) flags |= 1;
    const colon = skipBlanks(nameEnd);
    if (at(colon) != COLON) return 0;
    const valueAt = skipBlanks(colon + 1);
    const child = childNamed(node, i, nameEnd);
    let slot: usize = 0;
    if (child >= 0) {
      slot = <usize>word(child);
      // A member met again: what its earlier occurrence gave the slots at and below it goes (JSON.parse keeps the last).
      if (load<i32>(entry + (slot << 2)) >= 0) {
        const below = word(child + 3);
        const count = word(below);
        for (let k = 1; k <= count; k++) {
          const s = <usize>word(below + k);
          store<i32>(entry + (s << 2), -1);
          store<i32>(ends + (s << 2), -1);
          const w = plain + ((s >> 5) << 2);
          store<u32>(w, load<u32>(w) & ~(<u32>1 << <u32>(s & 31)));
        }
      }
    }
    const c = at(valueAt);
    let end: usize;
    if (c == QUOTE) {
      end = validString(valueAt);
      if (end == 0) return 0;
      if (child >= 0 && !escaped) {
        const w = plain + ((slot >> 5) << 2);
        store<u32>(w, load<u32>(w) | (<u32>1 << <u32>(slot & 31)));
      }
    } else if (child >= 0 && word(child + 1) > 0 && c == OPEN_OBJECT) {
      end = walkObject(valueAt, child, level + 1, entry);
      if (end == 0) return 0;
    } else {
      end = validValue(valueAt);
      if (end == 0) return 0;
      if (level + validDepth > indexedDepth) indexedDepth = level + validDepth;
    }
    if (child >= 0) {
      store<i32>(entry + (slot << 2), <i32>(valueAt - body));
      store<i32>(ends + (slot << 2), <i32>(end - body));
    }
    i = skipBlanks(end);
    const d = at(i);
    if (d == CLOSE_OBJECT) return i + 1;
    if (d != COMMA) return 0;
    i = skipBlanks(i + 1);
  }
}

/** Indexes the event object at `o` into the entry at `entry` (as byte-index.ts's indexEvent); past its `}`, or 0. */
function indexEvent(o: usize, entry: usize): usize {
  const flagsAt = entry + (<usize>(2 * slotCount) << 2);
  memory.fill(entry, 0xff, flagsAt - entry);
  memory.fill(flagsAt, 0, <usize>(entryInts - 2 * slotCount) << 2);
  flags = 0;
  indexedDepth = 0;
  const end = walkObject(o, 0, 1, entry);
  store<i32>(flagsAt, flags);
  return end;
}

// The walk over the EventList, resumable: listStep stops when a step's item records or entries
// are full, and the next call goes on from the item it stopped at.
const AT_START = 0;
const IN_ITEMS = 1;
const AFTER_MEMBER = 2;
let phase = AT_START;
let pos: usize = 0;
let bodyEnd: usize = 0;
let sawItems = false;
let kindAt: i32 = -1;
let itemsUsed: i32 = 0;
let entriesUsed: i32 = 0;

/** Starts the walk over the body of `length` bytes at `at_` (PAD zero bytes after it). */
export function listStart(at_: usize, length: i32): void {
  body = at_;
  bodyEnd = at_ + <usize>length;
  phase = AT_START;
  sawItems = false;
  kindAt = -1;
}

/** Where the last top-level "kind" member's value starts (-1: none). */
export function listKind(): i32 {
  return kindAt;
}

/** The item records the last step wrote. */
export function stepItems(): i32 {
  return itemsUsed;
}

/** The entries the last step wrote. */
export function stepEntries(): i32 {
  return entriesUsed;
}

/** The items of the array from `pos` on, while there is room: MORE when the step is full, 0 past the array, FAILED. */
function itemsLoop(): i32 {
  while (true) {
    if (itemsUsed == itemCap || entriesUsed == entryCap) return MORE;
    const i = pos;
    const record = itemsAt + (<usize>(itemsUsed * ITEM) << 2);
    let end: usize;
    let depth: i32;
    let entry = -1;
    if (at(i) == OPEN_OBJECT) {
      entry = entriesUsed++;
      end = indexEvent(i, entriesAt + (<usize>(entry * entryInts) << 2));
      depth = indexedDepth;
    } else {
      end = validValue(i);
      depth = validDepth;
    }
    if (end == 0) return FAILED;
    store<i32>(record, <i32>(i - body));
    store<i32>(record + 4, <i32>(end - body));
    store<i32>(record + 8, depth);
    store<i32>(record + 12, entry);
    itemsUsed++;
    const j = skipBlanks(end);
    const c = at(j);
    if (c == COMMA) {
      pos = skipBlanks(j + 1);
      continue;
    }
    if (c != CLOSE_ARRAY) return FAILED;
    pos = j + 1;
    return 0;
  }
}

/** True when the string whose quote is at `q` and which ends before `end` is `items` (`kind`: false). */
@inline function isItems(q: usize, end: usize): bool {
  return end - q == 7 && load<u32>(q + 1) == 0x6d657469 && at(q + 5) == 0x73;
}

@inline function isKind(q: usize, end: usize): bool {
  return end - q == 6 && load<u32>(q + 1) == 0x646e696b;
}

/**
 * One step of the walk: DONE when the body is one EventList-shaped object (an `items` array, no
 * top-level member name with escapes, `items` once) and valid JSON, MORE when the step's room is
 * full, FAILED otherwise (as list-walk.ts's jsListWalk: the general path decides those).
 */
export function listStep(): i32 {
  itemsUsed = 0;
  entriesUsed = 0;
  let i = pos;
  if (phase == AT_START) {
    i = skipBlanks(body);
    if (at(i) != OPEN_OBJECT) return FAILED;
    i = skipBlanks(i + 1);
    if (at(i) == CLOSE_OBJECT) return finish(i);
  } else if (phase == IN_ITEMS) {
    const r = itemsLoop();
    if (r != 0) return r;
    phase = AFTER_MEMBER;
    i = pos;
  }
  while (true) {
    if (phase == AFTER_MEMBER) {
      i = skipBlanks(i);
      const c = at(i);
      if (c == CLOSE_OBJECT) return finish(i);
      if (c != COMMA) return FAILED;
      i = skipBlanks(i + 1);
    }
    phase = AFTER_MEMBER;
    // A member: after a comma one must follow (`{"a":1,}` is not JSON).
    if (at(i) != QUOTE) return FAILED;
    const nameEnd = validString(i);
    if (nameEnd == 0 || escaped) return FAILED;
    const colon = skipBlanks(nameEnd);
    if (at(colon) != COLON) return FAILED;
    const value = skipBlanks(colon + 1);
    if (isItems(i, nameEnd)) {
      if (sawItems || at(value) != OPEN_ARRAY) return FAILED;
      sawItems = true;
      const first = skipBlanks(value + 1);
      if (at(first) == CLOSE_ARRAY) {
        i = first + 1;
        continue;
      }
      pos = first;
      phase = IN_ITEMS;
      const r = itemsLoop();
      if (r != 0) return r;
      phase = AFTER_MEMBER;
      i = pos;
      continue;
    }
    if (isKind(i, nameEnd)) kindAt = <i32>(value - body);
    i = validValue(value);
    if (i == 0) return FAILED;
  }
}

/** At the top-level object's `}`: DONE when only blanks follow and `items` was met. */
function finish(i: usize): i32 {
  return skipBlanks(i + 1) == bodyEnd && sawItems ? DONE : FAILED;
}
