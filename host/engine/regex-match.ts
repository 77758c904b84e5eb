// The reference interpreter's `regex` matcher: a parsed pattern (regex-syntax.ts) becomes a
// Thompson NFA over code points, simulated one code point at a time with the set of live states
// (no backtracking: time linear in the value for a given pattern). Whole-value match, as
// `new RegExp('^(?:' + p + ')$', 'u')`. The value is taken as its UTF-8 encoding would decode
// (a lone surrogate reads as U+FFFD), as the compiled evaluator sees it.
import { isWordChar, parseRegex, REGEX_HARD_LIMITS, type Assertion, type Ranges, type RegexNode } from './regex-syntax.js';

interface State {
  /** Consuming edges: a code point in r moves to `to`. */
  edges: Array<{ r: Ranges; to: number }>;
  /** Empty edges, some only where an assertion holds. */
  eps: Array<{ to: number; a?: Assertion }>;
}

function inRanges(r: Ranges, cp: number): boolean {
  for (const [lo, hi] of r) if (cp >= lo && cp <= hi) return true;
  return false;
}

/** A compiled pattern. */
export class CodePointRegex {
  private readonly states: State[] = [];
  private readonly start: number;
  private readonly end: number;

  /** Throws when the pattern is refused (the checker refuses it first at load). */
  constructor(pattern: string) {
    const parsed = parseRegex(pattern, REGEX_HARD_LIMITS);
    if (!parsed.ok) throw new Error(`invalid regex pattern '${pattern}': ${parsed.message}`);
    [this.start, this.end] = this.build(parsed.node);
  }

  private state(): number {
    return this.states.push({ edges: [], eps: [] }) - 1;
  }

  /** Builds a node between two fresh states. */
  private build(n: RegexNode): [number, number] {
    const s = this.state();
    const e = this.state();
    const eps = (from: number, to: number, a?: Assertion) => this.states[from]!.eps.push({ to, a });
    const chain = (from: number, x: RegexNode): number => {
      const [a, b] = this.build(x);
      eps(from, a);
      return b;
    };
    switch (n.k) {
      case 'set':
        this.states[s]!.edges.push({ r: n.r, to: e });
        break;
      case 'assert':
        eps(s, e, n.a);
        break;
      case 'cat':
        eps(n.xs.reduce(chain, s), e);
        break;
      case 'alt':
        for (const x of n.xs) eps(chain(s, x), e);
        break;
      case 'rep': {
        let cur = s;
        for (let i = 0; i < n.min; i++) cur = chain(cur, n.x);
        if (n.max === Infinity) {
          const [a, b] = this.build(n.x);
          eps(cur, a);
          eps(b, a);
          eps(b, e);
        } else {
          for (let i = n.min; i < n.max; i++) {
            eps(cur, e);
            cur = chain(cur, n.x);
          }
        }
        eps(cur, e);
        break;
      }
    }
    return [s, e];
  }

  /** The states reachable from `from` by empty edges whose assertions hold between prev and next. */
  private closure(from: Iterable<number>, prev: number | undefined, next: number | undefined): Set<number> {
    const holds = (a: Assertion | undefined) => a === undefined || (a === 'bol' ? prev === undefined : a === 'eol' ? next === undefined : (isWordChar(prev) !== isWordChar(next)) === (a === 'word'));
    const seen = new Set(from);
    const stack = [...seen];
    while (stack.length > 0) {
      for (const { to, a } of this.states[stack.pop()!]!.eps) {
        if (!seen.has(to) && holds(a)) {
          seen.add(to);
          stack.push(to);
        }
      }
    }
    return seen;
  }

  /** Whether the whole value matches. */
  test(value: string): boolean {
    const cps = Array.from(value, (c) => {
      const cp = c.codePointAt(0)!;
      return cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp;
    });
    let live = this.closure([this.start], undefined, cps[0]);
    for (let i = 0; i < cps.length && live.size > 0; i++) {
      const next: number[] = [];
      for (const st of live) for (const { r, to } of this.states[st]!.edges) if (inRanges(r, cps[i]!)) next.push(to);
      live = this.closure(next, cps[i], cps[i + 1]);
    }
    return live.has(this.end);
  }
}
