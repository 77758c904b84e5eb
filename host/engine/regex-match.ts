// The reference interpreter's `regex` matcher: a parsed pattern (regex-syntax.ts) becomes a
// Thompson NFA over code points, simulated one code point at a time with the set of live states
// (no backtracking: time linear in the value for a given pattern). Whole-value match, as
// `new RegExp('^(?:' + p + ')$', 'u')`. The value is taken as its UTF-8 encoding would decode
// (a lone surrogate reads as U+FFFD), as the compiled evaluator sees it.
import { isWordChar, parseRegex, REGEX_HARD_LIMITS, type Assertion, type Ranges } from './regex-syntax.js';
import { thompson, type ThompsonTarget } from './regex-thompson.js';

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
export class CodePointRegex implements ThompsonTarget {
  private readonly states: State[] = [];
  private readonly start: number;
  private readonly end: number;

  /** Throws when the pattern is refused (the checker refuses it first at load). */
  constructor(pattern: string) {
    const parsed = parseRegex(pattern, REGEX_HARD_LIMITS);
    if (!parsed.ok) throw new Error(`invalid regex pattern '${pattern}': ${parsed.message}`);
    [this.start, this.end] = thompson(this, parsed.node);
  }

  state(): number {
    return this.states.push({ edges: [], eps: [] }) - 1;
  }

  /** Consuming edges: a code point of `r` moves `from` to `to`. */
  consume(from: number, to: number, r: Ranges): void {
    this.states[from]!.edges.push({ r, to });
  }

  link(from: number, to: number, a?: Assertion): void {
    this.states[from]!.eps.push({ to, a });
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
