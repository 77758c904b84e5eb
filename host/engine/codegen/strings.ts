// Per-operand string work, generated once per module and done at most once per event:
//  - classification: every `=`, `!=` and `in` on one string operand becomes a bit; one function
//    switches on the length, loads the value in wide chunks once and returns, for the constant
//    it equals, the bits of every set holding that constant (so a list test costs one AND);
//  - needles: every `contains` (and every `icontains`) constant on one operand is found in a
//    single pass with a first-byte filter table, then verified with wide loads.
// Results are memoised per event (an epoch counter) in module globals.
import { chunkLoad, chunkPlan, chunkType, chunkValue, eqAt, staticBytes } from './bytes.js';

/** Operand values read without a walk or a transformer (not worth memoising). */
const CHEAP = /^(sref\(e, \d+, 0x[0-9a-f]+, \d+\)|tref\(thr\(e\), \d+, \d+\))$/;

/** Collected string work of one operand (its value expression is `expr`, a packed ref). */
export class StrOperand {
  /** Set key -> bit; a set is the sorted constants joined by NUL. */
  readonly sets = new Map<string, number>();
  readonly setValues: Uint8Array[][] = [];
  readonly needles: Uint8Array[] = [];
  readonly ineedles: Uint8Array[] = [];
  private readonly needleKeys = new Map<string, number>();
  private readonly ineedleKeys = new Map<string, number>();

  constructor(
    readonly id: number,
    /** The packed-ref expression of a scalar operand (in terms of `e`); undefined for list elements. */
    readonly expr: string | undefined,
  ) {}

  /** The bit of a constant set (allocated on first use). */
  setBit(values: Uint8Array[]): number {
    const uniq = [...new Map(values.map((v) => [Buffer.from(v).toString('latin1'), v])).entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const key = uniq.map((u) => u[0]).join('\0');
    let bit = this.sets.get(key);
    if (bit === undefined) {
      bit = this.sets.size;
      this.sets.set(key, bit);
      this.setValues.push(uniq.map((u) => u[1]));
    }
    return bit;
  }

  /** The index of a contains needle (case-folded needles are lower-case bytes); group = index >> 6. */
  needleIndex(needle: Uint8Array, folded: boolean): number {
    const keys = folded ? this.ineedleKeys : this.needleKeys;
    const list = folded ? this.ineedles : this.needles;
    const key = Buffer.from(needle).toString('latin1');
    let bit = keys.get(key);
    if (bit === undefined) {
      bit = list.length;
      keys.set(key, bit);
      list.push(needle);
    }
    return bit;
  }

  get words(): number {
    return Math.ceil(this.sets.size / 64);
  }

  /** Name of the memoised class word w for a scalar (needs `e`). */
  classMemo(w: number): string {
    return `S${this.id}c${w}(e)`;
  }

  /** Name of the pure class function for word w (takes a, l). */
  classFn(w: number): string {
    return `S${this.id}k${w}`;
  }

  /** Emits the module-level code for this operand. */
  emit(out: string[]): void {
    const id = this.id;
    out.push(`// operand ${id}: ${this.expr ?? 'list elements'}`);
    if (this.expr !== undefined && CHEAP.test(this.expr)) {
      // a record slot or the process's own entry: two or three loads, cheaper than a memo
      out.push(`@inline function S${id}v(e: usize): u64 { return ${this.expr}; }`);
    } else if (this.expr !== undefined) {
      out.push(`let S${id}ex: u64 = 0;`, `let S${id}x: u64 = 0;`);
      out.push(`@inline function S${id}v(e: usize): u64 {`, `  if (S${id}ex != epoch) { S${id}ex = epoch; S${id}x = ${this.expr}; }`, `  return S${id}x;`, `}`);
    }
    for (let w = 0; w < this.words; w++) this.emitClass(out, w);
    for (let g = 0; g * 64 < this.needles.length; g++) this.emitNeedles(out, false, g);
    for (let g = 0; g * 64 < this.ineedles.length; g++) this.emitNeedles(out, true, g);
  }

  private emitClass(out: string[], w: number): void {
    const id = this.id;
    // constant bytes -> bits of word w
    const bits = new Map<string, { bytes: Uint8Array; mask: bigint }>();
    this.setValues.forEach((vals, bit) => {
      if (bit >> 6 !== w) return;
      for (const v of vals) {
        const k = Buffer.from(v).toString('latin1');
        const cur = bits.get(k) ?? { bytes: v, mask: 0n };
        cur.mask |= 1n << BigInt(bit & 63);
        bits.set(k, cur);
      }
    });
    const byLen = new Map<number, Array<{ bytes: Uint8Array; mask: bigint }>>();
    for (const b of [...bits.values()].sort((x, y) => x.bytes.length - y.bytes.length)) {
      const l = byLen.get(b.bytes.length) ?? [];
      l.push(b);
      byLen.set(b.bytes.length, l);
    }
    // AssemblyScript compiles a switch to a chain of compares: lengths and, in a length, the
    // constants' first chunks are found by binary search (if-trees on sorted values) instead.
    out.push(`function ${this.classFn(w)}(a: usize, l: u32): u64 {`);
    const lens = [...byLen.keys()].sort((x, y) => x - y);
    const lenTree = (lo: number, hi: number, ind: string): void => {
      if (hi - lo === 1) {
        const len = lens[lo]!;
        out.push(`${ind}if (l != ${len}) return 0;`);
        this.emitBucket(out, len, byLen.get(len)!, ind);
        return;
      }
      const mid = (lo + hi) >> 1;
      out.push(`${ind}if (l < ${lens[mid]}) {`);
      lenTree(lo, mid, ind + '  ');
      out.push(`${ind}}`);
      lenTree(mid, hi, ind);
    };
    if (lens.length === 0) out.push(`  return 0;`);
    else lenTree(0, lens.length, '  ');
    out.push(`}`);
    if (this.expr === undefined) return;
    out.push(`let S${id}ec${w}: u64 = 0;`, `let S${id}m${w}: u64 = 0;`);
    out.push(
      `@inline function S${id}c${w}(e: usize): u64 {`,
      `  if (S${id}ec${w} != epoch) { S${id}ec${w} = epoch; const x = S${id}v(e); S${id}m${w} = x == MISSING ? 0 : ${this.classFn(w)}(usize(u32(x)), u32(x >>> 32)); }`,
      `  return S${id}m${w};`,
      `}`,
    );
  }

  /** The constants of one length: a binary search on the first chunk, then the other chunks. */
  private emitBucket(out: string[], len: number, consts: Array<{ bytes: Uint8Array; mask: bigint }>, ind: string): void {
    const plan = chunkPlan(len);
    if (plan.length === 0) {
      out.push(`${ind}return 0x${consts[0]!.mask.toString(16)};`);
      return;
    }
    const first = plan[0]!;
    const ty = chunkType(first);
    const key = (b: Uint8Array) => BigInt(chunkValue(b, first));
    const byKey = new Map<bigint, Array<{ bytes: Uint8Array; mask: bigint }>>();
    for (const c of consts) byKey.set(key(c.bytes), [...(byKey.get(key(c.bytes)) ?? []), c]);
    const keys = [...byKey.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    out.push(`${ind}const c0 = ${chunkLoad('a', first)};`);
    const rest = plan.slice(1);
    const leaf = (k: bigint, ind2: string) => {
      const cs = byKey.get(k)!;
      if (rest.length === 0) {
        out.push(`${ind2}if (c0 == <${ty}>0x${k.toString(16)}) return 0x${cs[0]!.mask.toString(16)};`);
        return;
      }
      out.push(`${ind2}if (c0 == <${ty}>0x${k.toString(16)}) {`);
      for (const c of cs) out.push(`${ind2}  if (${rest.map((ch) => `${chunkLoad('a', ch)} == <${chunkType(ch)}>${chunkValue(c.bytes, ch)}`).join(' && ')}) return 0x${c.mask.toString(16)};`);
      out.push(`${ind2}  return 0;`, `${ind2}}`);
    };
    const tree = (lo: number, hi: number, ind2: string): void => {
      if (hi - lo <= 3) {
        for (let i = lo; i < hi; i++) leaf(keys[i]!, ind2);
        out.push(`${ind2}return 0;`);
        return;
      }
      const mid = (lo + hi) >> 1;
      out.push(`${ind2}if (c0 < <${ty}>0x${keys[mid]!.toString(16)}) {`);
      tree(lo, mid, ind2 + '  ');
      out.push(`${ind2}}`);
      tree(mid, hi, ind2);
    };
    tree(0, keys.length, ind);
  }

  /** Name of the pure needle scan of group g (takes a, l). */
  needleFn(folded: boolean, g: number): string {
    return `S${this.id}${folded ? 'i' : 'n'}${g}`;
  }

  /** The per-event memo of needle group g (needs `e`). */
  needleMemo(folded: boolean, g: number): string {
    return `S${this.id}${folded ? 'I' : 'N'}${g}(e)`;
  }

  private emitNeedles(out: string[], folded: boolean, g: number): void {
    const list = (folded ? this.ineedles : this.needles).slice(g * 64, g * 64 + 64);
    const fn = this.needleFn(folded, g);
    const all = list.length === 64 ? 0xffffffffffffffffn : (1n << BigInt(list.length)) - 1n;
    let empty = 0n;
    const byFirst = new Map<number, number[]>();
    const nonEmpty = list.filter((n) => n.length > 0);
    // Set-Horspool: a window of m bytes (m = the shortest needle, at most 255) slides over the
    // value; the table maps the window's last byte to how far the window can move without
    // skipping an occurrence (0 = some needle may start at the window: verify those with that
    // first byte). Needle bytes of folded needles count in both cases.
    const m = Math.min(255, ...nonEmpty.map((n) => n.length));
    const shift = new Uint8Array(256).fill(nonEmpty.length > 0 ? m : 0);
    const cases = (c: number) => (folded && c >= 97 && c <= 122 ? [c, c - 32] : [c]);
    list.forEach((n, i) => {
      if (n.length === 0) {
        empty |= 1n << BigInt(i);
        return;
      }
      for (let k = 0; k < m; k++) for (const c of cases(n[k]!)) shift[c] = Math.min(shift[c]!, m - 1 - k);
      const key = n[0]!;
      byFirst.set(key, [...(byFirst.get(key) ?? []), i]);
    });
    const statics: string[] = [];
    const head = [`function ${fn}(a: usize, l: u32): u64 {`, `  let r: u64 = 0x${empty.toString(16)};`];
    if (nonEmpty.length === 0) {
      out.push(...head, `  return r;`, `}`);
    } else {
      out.push(`const ${fn}T = ${staticBytes(shift)};`, ...head);
      out.push(`  if (l < ${m}) return r;`, `  const end = l - ${m};`, `  let i: u32 = 0;`, `  while (i <= end) {`);
      out.push(`    const sh = u32(load<u8>(${fn}T + load<u8>(a + i + ${m - 1})));`, `    if (sh != 0) { i += sh; continue; }`, `    const p = a + i;`, `    const rem = l - i;`);
      out.push(`    switch (${folded ? 'lower(load<u8>(p))' : 'u32(load<u8>(p))'}) {`);
      for (const [first, idxs] of [...byFirst].sort((x, y) => x[0] - y[0])) {
        out.push(`      case ${first}: {`);
        for (const i of idxs) {
          const n = list[i]!;
          let check: string;
          if (folded) {
            const name = `${fn}D${i}`;
            statics.push(`const ${name} = ${staticBytes(n)};`);
            check = `ieqBytes(p, ${name}, ${n.length})`;
          } else check = eqAt('p', n);
          out.push(`        if (rem >= ${n.length} && ${check}) r |= 0x${(1n << BigInt(i)).toString(16)};`);
        }
        out.push(`        break;`, `      }`);
      }
      out.push(`      default: break;`, `    }`, `    if (r == 0x${all.toString(16)}) return r;`, `    i++;`, `  }`, `  return r;`, `}`);
    }
    out.push(...statics);
    if (this.expr === undefined) return;
    const memo = `S${this.id}${folded ? 'I' : 'N'}${g}`;
    out.push(`let ${memo}e: u64 = 0;`, `let ${memo}m: u64 = 0;`);
    out.push(`@inline function ${memo}(e: usize): u64 {`, `  if (${memo}e != epoch) { ${memo}e = epoch; const x = S${this.id}v(e); ${memo}m = x == MISSING ? 0 : ${fn}(usize(u32(x)), u32(x >>> 32)); }`, `  return ${memo}m;`, `}`);
  }
}

/** A construct the code generator cannot compile (reported, never thrown across the stage). */
export class CodegenLimit extends Error {}
