// `regex` compiled at codegen time to a DFA over UTF-8 bytes (no backtracking at run time), with
// the reference interpreter's semantics: the whole value must match, as
// `new RegExp('^(?:' + p + ')$', 'u')` would on the decoded string. Supported: literals,
// `.`, classes `[...]`/`[^...]` with ranges, `\d \D \w \W \s \S` and escaped punctuation,
// groups `(...)`/`(?:...)`, `|`, `* + ? {n} {n,} {n,m}` (lazy forms match the same strings), `^`
// at the start and `$` at the end. Anything else (backreferences, lookaround, `\b`, Unicode
// properties) is reported as a CodegenLimit. Code point sets become UTF-8 byte sequences
// (the utf8-ranges construction), the NFA becomes a DFA by subset construction.
import { CodegenLimit } from './strings.js';

/** Code point ranges, inclusive, sorted and merged. */
type Ranges = Array<[number, number]>;

type Node =
  | { k: 'set'; r: Ranges }
  | { k: 'cat'; xs: Node[] }
  | { k: 'alt'; xs: Node[] }
  | { k: 'rep'; x: Node; min: number; max: number };

const MAX_CP = 0x10ffff;
const DIGIT: Ranges = [[48, 57]];
const WORD: Ranges = [[48, 57], [65, 90], [95, 95], [97, 122]];
const SPACE: Ranges = [[9, 13], [32, 32], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]];
const DOT: Ranges = negate([[10, 10], [13, 13], [0x2028, 0x2029]]);

function norm(r: Ranges): Ranges {
  const s = [...r].sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of s) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function negate(r: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of norm(r)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

/** Recursive-descent parser of the supported syntax. */
class Parser {
  private i = 0;
  constructor(private readonly p: string) {}

  parse(): Node {
    if (this.p.startsWith('^')) this.i = 1;
    const n = this.alt();
    if (this.i < this.p.length) throw new CodegenLimit(`regex: unsupported syntax at offset ${this.i} of '${this.p}'`);
    return n;
  }

  private alt(): Node {
    const xs = [this.cat()];
    while (this.p[this.i] === '|') {
      this.i++;
      xs.push(this.cat());
    }
    return xs.length === 1 ? xs[0]! : { k: 'alt', xs };
  }

  private cat(): Node {
    const xs: Node[] = [];
    while (this.i < this.p.length && this.p[this.i] !== '|' && this.p[this.i] !== ')') {
      if (this.p[this.i] === '$' && this.i === this.p.length - 1) {
        this.i++;
        break;
      }
      xs.push(this.quant(this.atom()));
    }
    return { k: 'cat', xs };
  }

  private quant(x: Node): Node {
    const c = this.p[this.i];
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{' && /^\{\d+(,\d*)?\}/.test(this.p.slice(this.i))) {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(this.i))!;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (max < min || min > 100 || (max !== Infinity && max > 100)) throw new CodegenLimit(`regex: repetition ${m[0]} is out of range`);
      this.i += m[0].length - 1;
    } else return x;
    this.i++;
    if (this.p[this.i] === '?') this.i++; // lazy: the same set of full matches
    const n = this.p[this.i];
    if (n !== undefined && '*+?{'.includes(n) && !(n === '{' && !/^\{\d+(,\d*)?\}/.test(this.p.slice(this.i)))) {
      throw new CodegenLimit(`regex: nothing to repeat at offset ${this.i} of '${this.p}'`);
    }
    return this.quant({ k: 'rep', x, min, max });
  }

  private atom(): Node {
    const c = this.p[this.i]!;
    if (c === '(') {
      this.i++;
      if (this.p.startsWith('?:', this.i)) this.i += 2;
      else if (this.p[this.i] === '?') throw new CodegenLimit(`regex: lookaround and named groups are not supported ('${this.p}')`);
      const n = this.alt();
      if (this.p[this.i] !== ')') throw new CodegenLimit(`regex: missing ) in '${this.p}'`);
      this.i++;
      return n;
    }
    if (c === '[') return { k: 'set', r: this.cls() };
    if (c === '.') {
      this.i++;
      return { k: 'set', r: DOT };
    }
    if (c === '\\') return { k: 'set', r: this.escape(false) };
    if ('*+?{})]^$'.includes(c)) throw new CodegenLimit(`regex: unsupported or misplaced '${c}' at offset ${this.i} of '${this.p}'`);
    const cp = this.p.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return { k: 'set', r: [[cp, cp]] };
  }

  private escape(inClass: boolean): Ranges {
    const e = this.p[this.i + 1];
    this.i += 2;
    switch (e) {
      case 'd': return DIGIT;
      case 'D': return negate(DIGIT);
      case 'w': return WORD;
      case 'W': return negate(WORD);
      case 's': return SPACE;
      case 'S': return negate(SPACE);
      case 't': return [[9, 9]];
      case 'n': return [[10, 10]];
      case 'r': return [[13, 13]];
      case 'f': return [[12, 12]];
      case 'v': return [[11, 11]];
      case undefined: throw new CodegenLimit(`regex: trailing backslash in '${this.p}'`);
      default:
        if (/[\^$\\.*+?()[\]{}|/\-]/.test(e) && (inClass || e !== '-')) return [[e.charCodeAt(0), e.charCodeAt(0)]];
        throw new CodegenLimit(`regex: escape \\${e} is not supported by the compiled evaluator`);
    }
  }

  private cls(): Ranges {
    this.i++;
    let neg = false;
    if (this.p[this.i] === '^') {
      neg = true;
      this.i++;
    }
    const out: Ranges = [];
    const single = (): Ranges => {
      if (this.p[this.i] === '\\') return this.escape(true);
      const cp = this.p.codePointAt(this.i)!;
      this.i += cp > 0xffff ? 2 : 1;
      return [[cp, cp]];
    };
    while (this.i < this.p.length && this.p[this.i] !== ']') {
      const lo = single();
      if (this.p[this.i] === '-' && this.p[this.i + 1] !== ']' && this.i + 1 < this.p.length && lo.length === 1 && lo[0]![0] === lo[0]![1]) {
        this.i++;
        const hi = single();
        if (hi.length !== 1 || hi[0]![0] !== hi[0]![1]) throw new CodegenLimit(`regex: bad class range in '${this.p}'`);
        if (hi[0]![0] < lo[0]![0]) throw new CodegenLimit(`regex: range out of order in '${this.p}'`);
        out.push([lo[0]![0], hi[0]![0]]);
      } else out.push(...lo);
    }
    if (this.p[this.i] !== ']') throw new CodegenLimit(`regex: missing ] in '${this.p}'`);
    this.i++;
    return neg ? negate(out) : norm(out);
  }
}

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

/** An NFA over bytes: per state, byte-range edges and epsilon edges. */
class Nfa {
  readonly edges: Array<Array<{ lo: number; hi: number; to: number }>> = [];
  readonly eps: number[][] = [];
  state(): number {
    this.edges.push([]);
    this.eps.push([]);
    if (this.edges.length > 20000) throw new CodegenLimit('regex: pattern too large for the compiled evaluator');
    return this.edges.length - 1;
  }
  /** Builds node n between fresh states; returns [start, end]. */
  build(n: Node): [number, number] {
    const s = this.state();
    const e = this.state();
    switch (n.k) {
      case 'set': {
        const seqs: Array<Array<[number, number]>> = [];
        for (const [lo, hi] of n.r) utf8Seqs(lo, hi, seqs);
        for (const seq of seqs) {
          let cur = s;
          seq.forEach(([lo, hi], i) => {
            const to = i === seq.length - 1 ? e : this.state();
            this.edges[cur]!.push({ lo, hi, to });
            cur = to;
          });
        }
        break;
      }
      case 'cat': {
        let cur = s;
        for (const x of n.xs) {
          const [a, b] = this.build(x);
          this.eps[cur]!.push(a);
          cur = b;
        }
        this.eps[cur]!.push(e);
        break;
      }
      case 'alt':
        for (const x of n.xs) {
          const [a, b] = this.build(x);
          this.eps[s]!.push(a);
          this.eps[b]!.push(e);
        }
        break;
      case 'rep': {
        let cur = s;
        for (let i = 0; i < n.min; i++) {
          const [a, b] = this.build(n.x);
          this.eps[cur]!.push(a);
          cur = b;
        }
        if (n.max === Infinity) {
          const [a, b] = this.build(n.x);
          this.eps[cur]!.push(a, e);
          this.eps[b]!.push(a, e);
        } else {
          for (let i = n.min; i < n.max; i++) {
            const [a, b] = this.build(n.x);
            this.eps[cur]!.push(a, e);
            cur = b;
          }
          this.eps[cur]!.push(e);
        }
        break;
      }
    }
    return [s, e];
  }
}

/** A DFA: `next[state * 256 + byte]` (0 = dead), states 1.. with state 1 the start. */
export interface Dfa {
  states: number;
  next: Uint8Array;
  accept: Uint8Array;
}

/** Compiles a pattern; throws CodegenLimit for unsupported syntax or too many states. */
export function compileRegex(pattern: string, maxStates = 255): Dfa {
  const ast = new Parser(pattern).parse();
  const nfa = new Nfa();
  const [start, end] = nfa.build(ast);
  const closure = (set: number[]): number[] => {
    const seen = new Set(set);
    const stack = [...set];
    while (stack.length > 0) for (const t of nfa.eps[stack.pop()!]!) if (!seen.has(t)) (seen.add(t), stack.push(t));
    return [...seen].sort((a, b) => a - b);
  };
  const ids = new Map<string, number>();
  const sets: number[][] = [];
  const add = (set: number[]): number => {
    const key = set.join(',');
    let id = ids.get(key);
    if (id === undefined) {
      if (sets.length + 1 > maxStates) throw new CodegenLimit(`regex '${pattern}' needs more than ${maxStates} DFA states`);
      sets.push(set);
      id = sets.length; // 1-based; 0 = dead
      ids.set(key, id);
    }
    return id;
  };
  add(closure([start]));
  const rows: number[][] = [];
  for (let i = 0; i < sets.length; i++) {
    const row = new Array<number>(256).fill(0);
    for (let b = 0; b < 256; b++) {
      const to: number[] = [];
      for (const st of sets[i]!) for (const ed of nfa.edges[st]!) if (b >= ed.lo && b <= ed.hi) to.push(ed.to);
      if (to.length > 0) row[b] = add(closure(to));
    }
    rows.push(row);
  }
  const n = sets.length;
  const next = new Uint8Array((n + 1) * 256);
  rows.forEach((row, i) => next.set(row, (i + 1) * 256));
  const accept = new Uint8Array(n + 1);
  sets.forEach((s, i) => (accept[i + 1] = s.includes(end) ? 1 : 0));
  return { states: n, next, accept };
}

/** Runs a DFA over bytes (for tests). */
export function runDfa(d: Dfa, bytes: Uint8Array): boolean {
  let s = 1;
  for (const b of bytes) {
    s = d.next[s * 256 + b]!;
    if (s === 0) return false;
  }
  return d.accept[s] === 1;
}
