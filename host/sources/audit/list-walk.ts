// The one pass over an EventList body (what the API server sends) that validates it as JSON and
// indexes each item that is an object (byte-index.ts), in two implementations giving the same
// results: the WebAssembly walk (assembly/webhook/json-index.ts, built to build/json-index.wasm by
// scripts/build-json-index.mjs), used when its module is there and, checked once as it loads,
// walks a sample body as the JavaScript walk does; and the JavaScript walk (json-scan.ts,
// byte-index.ts), the reference and the fallback. Both hand their items over in steps of at most
// CHUNK indexed events: each item's start, end and nesting depth, and its entry in the step's own
// index (which the events keep: it is never reused). test/sources/audit/list-walk.test.ts holds
// them to the same output. Consumes a body; produces item records, index chunks, and where its
// "kind" member's value is.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ENTRY, END, indexedDepth, indexEvent, trieWords } from './byte-index.js';
import { memberName, nameIs, skipBlanks, stringEscaped, validDepth, validString, validValue } from './json-scan.js';

/** Ints an item record holds: its start, its end, its nesting depth and its entry in the step's index (-1: not an object). */
export const ITEM = 4;
/** Indexed events a step holds at most (and an index chunk of batch-bytes.ts's general path). */
export const CHUNK = 256;
/** The walk's answer when the body is not an EventList it reads (not JSON, a top-level name written with escapes, "items" twice or not an array...). */
export const NOT_A_LIST = -2;

/** Takes a step's `count` item records (`items`, ITEM ints each; read them before returning) and its index (kept by the caller). */
export type OnItems = (items: Int32Array, count: number, index: Int32Array) => void;

/** Walks `body` (UTF-8); where its last top-level "kind" member's value starts (-1: none), or NOT_A_LIST (nothing handed over is to be used then). */
export type ListWalk = (body: Uint8Array, on: OnItems) => number;

/** The JavaScript walk. */
export function jsListWalk(body: Uint8Array, on: OnItems): number {
  let i = skipBlanks(body, 0);
  if (body[i] !== 0x7b) return NOT_A_LIST;
  const items = new Int32Array(CHUNK * ITEM);
  let count = 0;
  let index = new Int32Array(CHUNK * ENTRY);
  let used = 0;
  let kind = -1;
  let sawItems = false;
  i = skipBlanks(body, i + 1);
  // After a comma a member must follow: `{"a":1,}` is not JSON.
  for (let member = body[i] !== 0x7d; member; ) {
    if (body[i] !== 0x22) return NOT_A_LIST;
    const nameEnd = validString(body, i);
    if (nameEnd < 0 || stringEscaped) return NOT_A_LIST;
    const value = memberName(body, i);
    if (value < 0) return NOT_A_LIST;
    let end: number;
    if (nameIs(body, i, nameEnd, 'items')) {
      if (sawItems || body[value] !== 0x5b) return NOT_A_LIST;
      sawItems = true;
      end = skipBlanks(body, value + 1);
      for (let item = body[end] !== 0x5d; item; ) {
        if (count === CHUNK || used === CHUNK) {
          on(items, count, index.subarray(0, used * ENTRY));
          index = new Int32Array(CHUNK * ENTRY);
          count = used = 0;
        }
        const at = end;
        let depth: number;
        let entry = -1;
        if (body[at] === 0x7b) {
          entry = used++;
          end = indexEvent(body, at, index, entry * ENTRY);
          depth = indexedDepth;
        } else {
          end = validValue(body, at);
          depth = validDepth;
        }
        if (end < 0) return NOT_A_LIST;
        const r = count++ * ITEM;
        items[r] = at;
        items[r + 1] = end;
        items[r + 2] = depth;
        items[r + 3] = entry;
        end = skipBlanks(body, end);
        item = body[end] === 0x2c;
        if (item) end = skipBlanks(body, end + 1);
        else if (body[end] !== 0x5d) return NOT_A_LIST;
      }
      end++;
    } else {
      if (nameIs(body, i, nameEnd, 'kind')) kind = value;
      end = validValue(body, value);
      if (end < 0) return NOT_A_LIST;
    }
    i = skipBlanks(body, end);
    member = body[i] === 0x2c;
    if (member) i = skipBlanks(body, i + 1);
    else if (body[i] !== 0x7d) return NOT_A_LIST;
  }
  if (skipBlanks(body, i + 1) !== body.length || !sawItems) return NOT_A_LIST;
  if (count > 0) on(items, count, index.subarray(0, used * ENTRY));
  return kind;
}

/** What assembly/webhook/json-index.ts exports. */
interface Exports {
  memory: WebAssembly.Memory;
  heapBase(): number;
  setup(trie: number, items: number, itemCap: number, entries: number, entryCap: number, stack: number, slots: number, entryLength: number): void;
  listStart(at: number, length: number): void;
  listStep(): number;
  listKind(): number;
  stepItems(): number;
  stepEntries(): number;
}

/** Zero bytes after the body in the module's memory (see assembly/webhook/json-index.ts). */
const PAD = 32;
const PAGE = 65536;
const DONE = 1;
const MORE = 2;

/** The WebAssembly walk over the module at `file`, instantiated once (synchronously: a small module). */
function wasmWalk(file: string): ListWalk {
  const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file))).exports as unknown as Exports;
  const trie = trieWords();
  const trieAt = x.heapBase();
  const itemsAt = trieAt + trie.byteLength;
  const entriesAt = itemsAt + CHUNK * ITEM * 4;
  // The validator's nesting stack (a byte a level: at most one a body byte) and the body follow.
  const stackAt = entriesAt + CHUNK * ENTRY * 4;
  const grow = (bytes: number) => {
    const missing = bytes - x.memory.buffer.byteLength;
    if (missing > 0) x.memory.grow(Math.ceil(missing / PAGE));
  };
  grow(stackAt);
  new Int32Array(x.memory.buffer, trieAt, trie.length).set(trie);
  x.setup(trieAt, itemsAt, CHUNK, entriesAt, CHUNK, stackAt, END, ENTRY);
  return (body, on) => {
    // The stack needs a byte a level, at most one a body byte; the body starts 16-aligned after it.
    const bodyAt = (stackAt + body.length + 16 + 15) & ~15;
    grow(bodyAt + body.length + PAD);
    const memory = new Uint8Array(x.memory.buffer);
    memory.set(body, bodyAt);
    memory.fill(0, bodyAt + body.length, bodyAt + body.length + PAD);
    x.listStart(bodyAt, body.length);
    for (;;) {
      const r = x.listStep();
      if (r !== DONE && r !== MORE) return NOT_A_LIST;
      const count = x.stepItems();
      if (count > 0) {
        const items = new Int32Array(x.memory.buffer, itemsAt, count * ITEM);
        on(items, count, new Int32Array(x.memory.buffer, entriesAt, x.stepEntries() * ENTRY).slice());
      }
      if (r === DONE) return x.listKind();
    }
  };
}

/** Where the module is: build/ beside host/ (the repository, or the output of scripts/build.mjs). */
const WASM_FILE = fileURLToPath(new URL('../../../build/json-index.wasm', import.meta.url));

/** What the two walks hand over on `body`, as text (the load's check). */
function output(walk: ListWalk, body: Uint8Array): string {
  const steps: string[] = [];
  const answer = walk(body, (items, count, index) => steps.push(`${items.subarray(0, count * ITEM).join()};${index.join()}`));
  return `${answer}|${steps.join('|')}`;
}

/** A body the load checks the module on: escapes, a member repeated with less below it, indexed paths, nesting, items that are not events. */
const CHECK = Buffer.from(
  '{"kind":"EventList","items":[{"auditID":"a","verb":"g\\u0065t","objectRef":{"resource":"pods","namespace":"n"},"objectRef":{"resource":"x"},"code":-1.5e3,"requestObject":{"spec":{"containers":[1]}}},[{}],{"ob\\u006aectRef":{}}]}',
);

/** The WebAssembly walk, or why there is none: its module was not built, does not load, or does not walk as the JavaScript walk does. */
function load(): { walk: ListWalk; problem?: undefined } | { walk?: undefined; problem: string } {
  if (!existsSync(WASM_FILE)) return { problem: `no ${WASM_FILE} (built by npm run build or scripts/setup.sh)` };
  try {
    const walk = wasmWalk(WASM_FILE);
    if (output(walk, CHECK) !== output(jsListWalk, CHECK)) return { problem: `${WASM_FILE} does not walk as the JavaScript walk does (built from other sources? npm run build or scripts/setup.sh builds it again)` };
    return { walk };
  } catch (err) {
    return { problem: `${WASM_FILE} does not load (${(err as Error).message})` };
  }
}
const loaded = load();

/** The WebAssembly walk, or undefined without a module that walks as the JavaScript walk does (the JavaScript walk is used then). */
export const wasmListWalk: ListWalk | undefined = loaded.walk;

/** What the webhook logs once when the WebAssembly walk is not used. */
export const WASM_MISSING = loaded.problem === undefined ? undefined : `${loaded.problem}: EventLists are walked in JavaScript, about twice as slow`;
