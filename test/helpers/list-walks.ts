// The two EventList walks (host/sources/audit/list-walk.ts: WebAssembly and JavaScript) on one
// body, held to the same output: the answer (refused, or where "kind" is), then every step's
// items (start, end, nesting depth, entry number) and every indexed event's entry, int for int.
// Used by test/sources/audit/list-walk.test.ts and on every body of the decoder differential tests.
import * as assert from 'uvu/assert';
import { ENTRY } from '../../host/sources/audit/byte-index.js';
import { ITEM, jsListWalk, type ListWalk, wasmListWalk } from '../../host/sources/audit/list-walk.js';

/** What a walk hands over: its answer, then per step the item records and each item's entry (null: not an object). */
function walkOf(walk: ListWalk, body: Uint8Array): { answer: number; steps: Array<{ items: number[]; entries: Array<number[] | null> }> } {
  const steps: Array<{ items: number[]; entries: Array<number[] | null> }> = [];
  const answer = walk(body, (items, count, index) => {
    const records = Array.from(items.subarray(0, count * ITEM));
    const entries: Array<number[] | null> = [];
    for (let r = 0; r < records.length; r += ITEM) {
      const e = records[r + 3]!;
      entries.push(e < 0 ? null : Array.from(index.subarray(e * ENTRY, (e + 1) * ENTRY)));
    }
    steps.push({ items: records, entries });
  });
  return { answer, steps };
}

/** The WebAssembly walk gives exactly what the JavaScript walk gives on `body`; the JavaScript walk's answer. */
export function walksSame(body: Uint8Array, what: string): number {
  assert.ok(wasmListWalk, 'the WebAssembly walk is not loaded: build/json-index.wasm is missing (scripts/setup.sh builds it)');
  const js = walkOf(jsListWalk, body);
  const wasm = walkOf(wasmListWalk, body);
  assert.is(wasm.answer, js.answer, `${what}: the walks' answer`);
  assert.is(wasm.steps.length, js.steps.length, `${what}: steps`);
  js.steps.forEach((s, k) => {
    const w = wasm.steps[k]!;
    assert.equal(w.items, s.items, `${what}: step ${k}'s items (start, end, depth, entry)`);
    s.entries.forEach((e, i) => {
      if (e === null || w.entries[i] === null) assert.is(w.entries[i], e, `${what}: step ${k} item ${i}'s entry`);
      // Compared as a string first: a differing entry of ~100 ints prints short.
      else if (w.entries[i]!.join() !== e.join()) assert.equal(w.entries[i], e, `${what}: step ${k} item ${i}'s index entry`);
    });
  });
  return js.answer;
}
