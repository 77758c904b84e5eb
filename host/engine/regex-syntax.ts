// Syntax of the `regex` operator, shared by the checker, the reference interpreter and the code
// generator. A pattern matches the whole value, as `new RegExp('^(?:' + p + ')$', 'u')` would
// (JavaScript's syntax and meaning of `.`, `\s`, classes and escapes), except what RE2, Falco's
// regex engine, refuses: backreferences (`\1`, `\k<name>`) and lookaround (`(?=`, `(?!`,
// `(?<=`, `(?<!`) (libsinsp filter/regex: RE2::FullMatch). Repetition counts are at most 1000
// (RE2's limit) and a pattern at most REGEX_LIMITS.maxSize atoms once repetitions are expanded,
// so that every engine runs it in time linear in the value (no backtracking anywhere).
// Consumes a pattern; produces a plain AST over code point ranges, or a refusal with its offset.

/** Code point ranges, inclusive, sorted and merged. */
export type Ranges = Array<[number, number]>;

/** Zero-width tests: start of value, end of value, ASCII word boundary (`\b`) and its negation (`\B`). */
export type Assertion = 'bol' | 'eol' | 'word' | 'nonword';

export type RegexNode = { k: 'set'; r: Ranges } | { k: 'cat'; xs: RegexNode[] } | { k: 'alt'; xs: RegexNode[] } | { k: 'rep'; x: RegexNode; min: number; max: number } | { k: 'assert'; a: Assertion };

export type ParsedRegex = { ok: true; node: RegexNode } | { ok: false; message: string; offset: number };

export interface RegexLimits {
  /** Largest count in `{n,m}` (RE2's kMaxRepeat). */
  maxRepeat: number;
  /** Most character atoms once repetitions are expanded. */
  maxSize: number;
  /** Deepest nesting of groups (RE2's kMaxNest). */
  maxDepth: number;
}

/** The defaults (configuration: rules.maxRegexRepeat, rules.maxRegexAtoms, rules.maxRegexNesting). */
export const REGEX_LIMITS: Readonly<RegexLimits> = { maxRepeat: 1000, maxSize: 10_000, maxDepth: 1000 };

/** The most the configuration may raise them to; the stages after the checker (interpreter, code generator) parse with these, as the checker has applied the configured ones. */
export const REGEX_HARD_LIMITS: Readonly<RegexLimits> = { maxRepeat: 100_000, maxSize: 1_000_000, maxDepth: 2000 };

export const MAX_CP = 0x10ffff;
const DIGIT: Ranges = [[48, 57]];
const WORD: Ranges = [
  [48, 57],
  [65, 90],
  [95, 95],
  [97, 122],
];
const SPACE: Ranges = [
  [9, 13],
  [32, 32],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const DOT: Ranges = negate([
  [10, 10],
  [13, 13],
  [0x2028, 0x2029],
]);
const SYNTAX = '^$\\.*+?()[]{}|/';

/** Whether a code point is a word character for `\b` (ASCII letters, digits, `_`). */
export function isWordChar(cp: number | undefined): boolean {
  return cp !== undefined && ((cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || cp === 95 || (cp >= 97 && cp <= 122));
}

function norm(r: Ranges): Ranges {
  const s = r.map(([a, b]): [number, number] => [a, b]).sort((a, b) => a[0] - b[0]);
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

/** The ranges of a Unicode property escape, as JavaScript defines it (computed once per name). */
const propertyCache = new Map<string, Ranges>();
function property(name: string): Ranges {
  let r = propertyCache.get(name);
  if (!r) {
    const re = new RegExp(`^\\p{${name}}$`, 'u');
    r = [];
    for (let cp = 0; cp <= MAX_CP; cp++) {
      if (cp === 0xd800) cp = 0xe000; // lone surrogates never reach a matcher
      if (!re.test(String.fromCodePoint(cp))) continue;
      const last = r[r.length - 1];
      if (last && last[1] === cp - 1) last[1] = cp;
      else r.push([cp, cp]);
    }
    propertyCache.set(name, r);
  }
  return r;
}

class Refusal {
  constructor(
    readonly message: string,
    readonly offset: number,
  ) {}
}

/** Recursive descent over the pattern; one method per production. */
class Parser {
  private i = 0;
  private depth = 0;
  constructor(
    private readonly p: string,
    private readonly limits: RegexLimits,
  ) {}

  parse(): RegexNode {
    const n = this.alt();
    if (this.i < this.p.length) this.fail(this.p[this.i] === ')' ? 'unmatched )' : 'unexpected character');
    return n;
  }

  private fail(what: string, at = this.i): never {
    throw new Refusal(what, at);
  }

  private alt(): RegexNode {
    const xs = [this.cat()];
    while (this.p[this.i] === '|') {
      this.i++;
      xs.push(this.cat());
    }
    return xs.length === 1 ? xs[0]! : { k: 'alt', xs };
  }

  private cat(): RegexNode {
    const xs: RegexNode[] = [];
    while (this.i < this.p.length && this.p[this.i] !== '|' && this.p[this.i] !== ')') xs.push(this.quant(this.atom()));
    return xs.length === 1 ? xs[0]! : { k: 'cat', xs };
  }

  private quant(x: RegexNode): RegexNode {
    const at = this.i;
    const c = this.p[at];
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(at));
      if (!m) this.fail('incomplete quantifier');
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > this.limits.maxRepeat || (max !== Infinity && max > this.limits.maxRepeat)) this.fail(`repetition count above ${this.limits.maxRepeat} (rules.maxRegexRepeat, RE2's limit)`);
      if (max < min) this.fail('numbers out of order in {} quantifier');
      this.i += m[0].length - 1;
    } else return x;
    if (x.k === 'assert') this.fail('nothing to repeat', at);
    this.i++;
    if (this.p[this.i] === '?') this.i++; // lazy: the same set of whole-value matches
    if (this.i < this.p.length && '*+?{'.includes(this.p[this.i]!)) this.fail('nothing to repeat');
    return { k: 'rep', x, min, max };
  }

  private atom(): RegexNode {
    const c = this.p[this.i]!;
    if (c === '(') return this.group();
    if (c === '[') return { k: 'set', r: this.cls() };
    if (c === '^' || c === '$') {
      this.i++;
      return { k: 'assert', a: c === '^' ? 'bol' : 'eol' };
    }
    if (c === '.') {
      this.i++;
      return { k: 'set', r: DOT };
    }
    if (c === '\\') {
      const e = this.p[this.i + 1];
      if (e === 'b' || e === 'B') {
        this.i += 2;
        return { k: 'assert', a: e === 'b' ? 'word' : 'nonword' };
      }
      return { k: 'set', r: this.escape(false) };
    }
    if ('*+?{}]'.includes(c)) this.fail(c === ']' || c === '}' ? `lone '${c}'` : 'nothing to repeat');
    return { k: 'set', r: [this.literal()] };
  }

  private group(): RegexNode {
    const open = this.i;
    if (++this.depth > this.limits.maxDepth) this.fail(`groups nested deeper than ${this.limits.maxDepth} (rules.maxRegexNesting)`);
    this.i++;
    if (this.p.startsWith('?:', this.i)) this.i += 2;
    else if (/^\?(=|!|<=|<!)/.test(this.p.slice(this.i))) this.fail('lookaround is not supported (RE2 refuses it)', open);
    else if (this.p[this.i] === '?') {
      const m = /^\?<[A-Za-z_$][\w$]*>/.exec(this.p.slice(this.i));
      if (!m) this.fail('invalid group', open);
      this.i += m[0].length; // a named group matches as a plain group
    }
    const n = this.alt();
    if (this.p[this.i] !== ')') this.fail('missing )', open);
    this.i++;
    this.depth--;
    return n.k === 'assert' ? { k: 'cat', xs: [n] } : n; // a group may be repeated, a bare assertion not
  }

  private literal(): [number, number] {
    const cp = this.p.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return [cp, cp];
  }

  private hex(n: number): number {
    const h = this.p.slice(this.i, this.i + n);
    if (h.length !== n || !/^[0-9a-fA-F]+$/.test(h)) this.fail('invalid escape');
    this.i += n;
    return parseInt(h, 16);
  }

  /** `\` escapes: classes, control and code point escapes, escaped syntax characters. */
  private escape(inClass: boolean): Ranges {
    const at = this.i;
    const e = this.p[this.i + 1];
    this.i += 2;
    const one = (cp: number): Ranges => [[cp, cp]];
    switch (e) {
      case 'd':
        return DIGIT;
      case 'D':
        return negate(DIGIT);
      case 'w':
        return WORD;
      case 'W':
        return negate(WORD);
      case 's':
        return SPACE;
      case 'S':
        return negate(SPACE);
      case 't':
        return one(9);
      case 'n':
        return one(10);
      case 'v':
        return one(11);
      case 'f':
        return one(12);
      case 'r':
        return one(13);
      case 'b':
        return one(8); // in a class only (outside, \b is an assertion)
      case '0':
        if (/\d/.test(this.p[this.i] ?? '')) this.fail('invalid decimal escape', at);
        return one(0);
      case 'c': {
        const l = this.p[this.i] ?? '';
        if (!/[A-Za-z]/.test(l)) this.fail('invalid unicode escape', at);
        this.i++;
        return one(l.charCodeAt(0) % 32);
      }
      case 'x':
        return one(this.hex(2));
      case 'u': {
        if (this.p[this.i] === '{') {
          const m = /^\{([0-9a-fA-F]+)\}/.exec(this.p.slice(this.i));
          if (!m || parseInt(m[1]!, 16) > MAX_CP) this.fail('invalid unicode escape', at);
          this.i += m[0].length;
          return one(parseInt(m[1]!, 16));
        }
        const hi = this.hex(4);
        if (hi >= 0xd800 && hi <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(this.p.slice(this.i))) {
          this.i += 2;
          const lo = this.hex(4);
          return one(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00));
        }
        return one(hi);
      }
      case 'p':
      case 'P': {
        const m = /^\{([A-Za-z_=]+)\}/.exec(this.p.slice(this.i));
        if (!m) this.fail('invalid property name', at);
        try {
          new RegExp(`\\p{${m[1]}}`, 'u');
        } catch {
          this.fail('invalid property name', at);
        }
        this.i += m[0].length;
        return e === 'p' ? property(m[1]!) : negate(property(m[1]!));
      }
      case 'k':
        return this.fail('backreferences are not supported (RE2 refuses them)', at);
      case undefined:
        return this.fail('\\ at end of pattern', at);
      default:
        if (/[1-9]/.test(e)) this.fail('backreferences are not supported (RE2 refuses them)', at);
        if (SYNTAX.includes(e) || (inClass && e === '-')) return one(e.charCodeAt(0));
        return this.fail('invalid escape', at);
    }
  }

  /** `[...]` and `[^...]` with ranges. */
  private cls(): Ranges {
    const open = this.i;
    this.i++;
    const neg = this.p[this.i] === '^';
    if (neg) this.i++;
    const out: Ranges = [];
    const item = (): Ranges => (this.p[this.i] === '\\' ? this.escape(true) : [this.literal()]);
    const single = (r: Ranges) => r.length === 1 && r[0]![0] === r[0]![1];
    while (this.i < this.p.length && this.p[this.i] !== ']') {
      const at = this.i;
      const lo = item();
      if (this.p[this.i] === '-' && this.i + 1 < this.p.length && this.p[this.i + 1] !== ']') {
        this.i++;
        const hi = item();
        if (!single(lo) || !single(hi)) this.fail('invalid character class', at);
        if (hi[0]![0] < lo[0]![0]) this.fail('range out of order in character class', at);
        out.push([lo[0]![0], hi[0]![0]]);
      } else out.push(...lo);
    }
    if (this.p[this.i] !== ']') this.fail('missing ]', open);
    this.i++;
    return neg ? negate(out) : norm(out);
  }
}

/** Character atoms of a node once repetitions are expanded (an unbounded one counts once more than its minimum). */
function size(n: RegexNode): number {
  switch (n.k) {
    case 'set':
      return 1;
    case 'assert':
      return 0;
    case 'cat':
    case 'alt':
      return n.xs.reduce((s, x) => s + size(x), 0);
    case 'rep':
      return size(n.x) * Math.max(1, n.max === Infinity ? n.min + 1 : n.max);
  }
}

/** Parses a `regex` pattern. */
export function parseRegex(pattern: string, limits: RegexLimits = REGEX_LIMITS): ParsedRegex {
  try {
    const node = new Parser(pattern, limits).parse();
    const n = size(node);
    if (n > limits.maxSize) return { ok: false, message: `pattern too large: ${n} atoms once repetitions are expanded (at most rules.maxRegexAtoms=${limits.maxSize})`, offset: 0 };
    return { ok: true, node };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, message: e.message, offset: e.offset };
    throw e;
  }
}
