// `regex` compiled at codegen time to a matcher over UTF-8 bytes that never backtracks, with the
// reference interpreter's semantics (whole-value match, host/engine/regex-syntax.ts; every
// pattern the checker accepts). A parsed pattern becomes a Thompson NFA over bytes (code point
// sets as UTF-8 byte-range sequences, the utf8-ranges construction, with shared suffixes), then
// its position (Glushkov) form: a position is an edge group (from, to) with a byte label, and
// `follow` says which positions can come next; the assertions (`^ $ \b \B`) are resolved in the
// empty closures for each context of previous and next byte (none, word, non-word). From there:
//   - a DFA by subset construction when it has at most REGEX_BUDGET.dfaStates states
//     (assembly/dfa.ts dfaMatch: one table load per byte);
//   - otherwise the position sets run bit-parallel (assembly/dfa.ts nfaMatch: per byte, the
//     union of the follow rows of the live positions, masked by the byte's label row), time
//     linear in the value; at most REGEX_BUDGET.positions positions, beyond that CodegenLimit.
// This is how `(a+)+b|[ab]*a[ab]{8}` (a DFA of more than 512 states) compiles: 15 positions.
import { MAX_CP, parseRegex, REGEX_HARD_LIMITS, type Assertion, type Ranges } from '../regex-syntax.js';
import { thompson, type ThompsonTarget } from '../regex-thompson.js';
import { CodegenLimit } from './strings.js';

/** Most DFA states (u8 state numbers) and most positions of the bit-parallel form (8 words). */
const REGEX_BUDGET = { dfaStates: 255, positions: 512 } as const;

/** UTF-8 byte-range sequences for a code point range (surrogates excluded). */
function utf8Seqs(lo: number, hi: number, out: Array<Array<[number, number]>>): void {
  if (lo > hi) return;
  if (lo <= 0xdfff && hi >= 0xd800) {
    utf8Seqs(lo, 0xd7ff, out);
    utf8Seqs(0xe000, hi, out);
    return;
  }
  const limits = [0x7f, 0x7ff, 0xffff, MAX_CP];
  for (const m of limits) {
    if (lo <= m && hi > m) {
      utf8Seqs(lo, m, out);
      utf8Seqs(m + 1, hi, out);
      return;
    }
  }
  if (hi <= 0x7f) {
    out.push([[lo, hi]]);
    return;
  }
  const n = hi <= 0x7ff ? 2 : hi <= 0xffff ? 3 : 4;
  for (let i = 1; i < n; i++) {
    const m = (1 << (6 * i)) - 1;
    if ((lo & ~m) !== (hi & ~m)) {
      if ((lo & m) !== 0) {
        utf8Seqs(lo, lo | m, out);
        utf8Seqs((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) !== m) {
        utf8Seqs(lo, (hi & ~m) - 1, out);
        utf8Seqs(hi & ~m, hi, out);
        return;
      }
    }
  }
  const a = Buffer.from(String.fromCodePoint(lo));
  const b = Buffer.from(String.fromCodePoint(hi));
  out.push(Array.from(a, (x, i) => [x, b[i]!] as [number, number]));
}

/** A Thompson NFA over bytes: per state, byte-range edges and empty edges (some asserted). */
class ByteNfa implements ThompsonTarget {
  readonly edges: Array<Array<{ lo: number; hi: number; to: number }>> = [];
  readonly eps: Array<Array<{ to: number; a?: Assertion }>> = [];
  /** Whether some empty edge is `\b` or `\B` (then contexts depend on the bytes around). */
  wordAsserts = false;

  state(): number {
    this.edges.push([]);
    this.eps.push([]);
    return this.edges.length - 1;
  }

  link(from: number, to: number, a?: Assertion): void {
    if (a === 'word' || a === 'nonword') this.wordAsserts = true;
    this.eps[from]!.push({ to, a });
  }

  /** The byte sequences of the code points in r, from `from` to `to`. */
  consume(from: number, to: number, r: Ranges): void {
    const seqs: Array<Array<[number, number]>> = [];
    for (const [lo, hi] of r) utf8Seqs(lo, hi, seqs);
    // sequences ending alike share their tail states (`.` is 16 positions, not 40)
    const tails = new Map<string, number>();
    for (const seq of seqs) {
      let next = to;
      for (let j = seq.length - 1; j >= 1; j--) {
        const key = seq.slice(j).join(' ');
        let st = tails.get(key);
        if (st === undefined) {
          st = this.state();
          this.edges[st]!.push({ lo: seq[j]![0], hi: seq[j]![1], to: next });
          tails.set(key, st);
        }
        next = st;
      }
      this.edges[from]!.push({ lo: seq[0]![0], hi: seq[0]![1], to: next });
    }
  }
}

/** A byte's side of a `\b`: ASCII letters, digits and `_` are word bytes (never a UTF-8 lead or continuation byte). */
function isWordByte(b: number): boolean {
  return (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || b === 95 || (b >= 97 && b <= 122);
}

/** What is around a point of the value: no byte (start or end), a non-word byte, a word byte. */
type Side = -1 | 0 | 1;

/**
 * The position form of a pattern. Sets of positions are bigints (bit p = position p).
 * `first[nw]`: positions the first byte can take (next byte word or not); `follow[pw * 2 + nw][p]`:
 * positions after p (previous byte word or not, next byte word or not); `final[pw]`: positions
 * after which the value may end; without `\b`/`\B` only index 0 of each exists.
 */
export interface Positions {
  n: number;
  wordAsserts: boolean;
  label: bigint[];
  first: bigint[];
  follow: bigint[][];
  final: bigint[];
  startAccept: boolean;
}

const bitRange = (lo: number, hi: number) => ((1n << BigInt(hi - lo + 1)) - 1n) << BigInt(lo);

/** Parses a pattern and builds its position form; CodegenLimit when refused or over budget. */
export function positions(pattern: string): Positions {
  const parsed = parseRegex(pattern, REGEX_HARD_LIMITS);
  if (!parsed.ok) throw new CodegenLimit(`regex '${pattern}': ${parsed.message}`);
  const nfa = new ByteNfa();
  const [start, end] = thompson(nfa, parsed.node);
  // edges grouped by (from, to): one position each, labelled with the union of their bytes
  const pos: Array<{ to: number; label: bigint }> = [];
  const out: number[][] = nfa.edges.map(() => []);
  nfa.edges.forEach((edges, from) => {
    const byTo = new Map<number, number>();
    for (const { lo, hi, to } of edges) {
      let p = byTo.get(to);
      if (p === undefined) {
        p = pos.push({ to, label: 0n }) - 1;
        byTo.set(to, p);
        out[from]!.push(p);
      }
      pos[p]!.label |= bitRange(lo, hi);
    }
  });
  if (pos.length > REGEX_BUDGET.positions) {
    throw new CodegenLimit(`regex '${pattern}' needs ${pos.length} positions, more than the ${REGEX_BUDGET.positions} the compiled evaluator runs`);
  }
  const holds = (a: Assertion | undefined, prev: Side, next: Side) => a === undefined || (a === 'bol' ? prev === -1 : a === 'eol' ? next === -1 : ((prev === 1) !== (next === 1)) === (a === 'word'));
  /** Positions leaving the empty closure of q, and whether it reaches the end. */
  const reach = (q: number, prev: Side, next: Side): { set: bigint; accept: boolean } => {
    const seen = new Set([q]);
    const stack = [q];
    let set = 0n;
    while (stack.length > 0) {
      const st = stack.pop()!;
      for (const p of out[st]!) set |= 1n << BigInt(p);
      for (const { to, a } of nfa.eps[st]!) {
        if (!seen.has(to) && holds(a, prev, next)) {
          seen.add(to);
          stack.push(to);
        }
      }
    }
    return { set, accept: seen.has(end) };
  };
  const sides: Side[] = nfa.wordAsserts ? [0, 1] : [0];
  const label = Array.from({ length: 256 }, () => 0n);
  pos.forEach((p, i) => {
    for (let b = 0; b < 256; b++) if ((p.label >> BigInt(b)) & 1n) label[b]! |= 1n << BigInt(i);
  });
  const follow: bigint[][] = [];
  for (const pw of sides) for (const nw of sides) follow[pw * 2 + nw] = pos.map((p) => reach(p.to, pw, nw).set);
  return {
    n: pos.length,
    wordAsserts: nfa.wordAsserts,
    label,
    first: sides.map((nw) => reach(start, -1, nw).set),
    follow,
    final: sides.map((pw) => pos.reduce((acc, p, i) => (reach(p.to, pw, -1).accept ? acc | (1n << BigInt(i)) : acc), 0n)),
    startAccept: reach(start, -1, -1).accept,
  };
}

/** The union of the follow rows of the positions in d. */
function followOf(P: Positions, d: bigint, pw: number, nw: number): bigint {
  const rows = P.follow[P.wordAsserts ? pw * 2 + nw : 0]!;
  let u = 0n;
  for (let p = 0; d !== 0n; p++, d >>= 1n) if (d & 1n) u |= rows[p]!;
  return u;
}

/** A DFA: `next[state * 256 + byte]` (0 = dead), states 1.. with state 1 the start. */
export interface Dfa {
  states: number;
  next: Uint8Array;
  accept: Uint8Array;
}

/** Subset construction over position sets (and the side of the last byte); undefined past maxStates (at most 255). */
export function buildDfa(P: Positions, maxStates: number = REGEX_BUDGET.dfaStates): Dfa | undefined {
  maxStates = Math.min(maxStates, REGEX_BUDGET.dfaStates);
  const word = (b: number) => (P.wordAsserts && isWordByte(b) ? 1 : 0);
  const sets: Array<{ d: bigint; pw: number }> = [
    { d: 0n, pw: 0 },
    { d: 0n, pw: 0 },
  ]; // 0 dead, 1 start
  const ids = new Map<string, number>();
  const rows: number[][] = [];
  for (let i = 1; i < sets.length; i++) {
    const { d, pw } = sets[i]!;
    const base = i === 1 ? [P.first[0]!, P.first[P.wordAsserts ? 1 : 0]!] : [followOf(P, d, pw, 0), followOf(P, d, pw, 1)];
    const row = new Array<number>(256).fill(0);
    for (let b = 0; b < 256; b++) {
      const nw = word(b);
      const d2 = base[nw]! & P.label[b]!;
      if (d2 === 0n) continue;
      const key = `${d2.toString(36)}/${nw}`;
      let id = ids.get(key);
      if (id === undefined) {
        if (sets.length > maxStates) return undefined;
        id = sets.push({ d: d2, pw: nw }) - 1;
        ids.set(key, id);
      }
      row[b] = id;
    }
    rows.push(row);
  }
  const n = sets.length - 1;
  const next = new Uint8Array((n + 1) * 256);
  rows.forEach((row, i) => next.set(row, (i + 1) * 256));
  const accept = new Uint8Array(n + 1);
  accept[1] = P.startAccept ? 1 : 0;
  for (let i = 2; i <= n; i++) accept[i] = (sets[i]!.d & P.final[sets[i]!.pw]!) !== 0n ? 1 : 0;
  return { states: n, next, accept };
}

/**
 * The bit-parallel form as assembly/dfa.ts nfaMatch reads it: u64 rows of `words` words,
 * label[256], first[V], final[V], follow[V * V][n] (V = 2 with `\b`/`\B`, else 1);
 * flags: 1 = word assertions, 2 = the empty value matches.
 */
interface BitNfa {
  n: number;
  words: number;
  flags: number;
  table: Uint8Array;
}

/** Lays out the position form for nfaMatch. */
function bitNfa(P: Positions): BitNfa {
  const words = Math.max(1, Math.ceil(P.n / 64));
  const rows = [...P.label, ...P.first, ...P.final, ...P.follow.flat()];
  const table = Buffer.alloc(rows.length * words * 8);
  rows.forEach((r, i) => {
    for (let w = 0; w < words; w++) table.writeBigUInt64LE((r >> BigInt(64 * w)) & 0xffffffffffffffffn, (i * words + w) * 8);
  });
  return { n: P.n, words, flags: (P.wordAsserts ? 1 : 0) | (P.startAccept ? 2 : 0), table: new Uint8Array(table) };
}

/** A compiled pattern: a DFA when small enough, else the bit-parallel position form. */
export type CompiledRegex = { kind: 'dfa'; dfa: Dfa } | { kind: 'nfa'; nfa: BitNfa };

/** Compiles a pattern; throws CodegenLimit for a refused pattern or one over REGEX_BUDGET.positions. */
export function compileRegex(pattern: string, maxStates: number = REGEX_BUDGET.dfaStates): CompiledRegex {
  const P = positions(pattern);
  const dfa = buildDfa(P, maxStates);
  return dfa ? { kind: 'dfa', dfa } : { kind: 'nfa', nfa: bitNfa(P) };
}

/** Runs a DFA over bytes (tests; assembly/dfa.ts dfaMatch is the same loop). */
export function runDfa(d: Dfa, bytes: Uint8Array): boolean {
  let s = 1;
  for (const b of bytes) {
    s = d.next[s * 256 + b]!;
    if (s === 0) return false;
  }
  return d.accept[s] === 1;
}

/** Runs the bit-parallel form over bytes (tests; the loop of assembly/dfa.ts nfaMatch, with bigints). */
export function runBitNfa(P: Positions, bytes: Uint8Array): boolean {
  if (bytes.length === 0) return P.startAccept;
  const word = (b: number) => (P.wordAsserts && isWordByte(b) ? 1 : 0);
  let nw = word(bytes[0]!);
  let d = P.first[nw]! & P.label[bytes[0]!]!;
  for (let i = 1; i < bytes.length && d !== 0n; i++) {
    const pw = nw;
    nw = word(bytes[i]!);
    d = followOf(P, d, pw, nw) & P.label[bytes[i]!]!;
  }
  return (d & P.final[nw]!) !== 0n;
}
