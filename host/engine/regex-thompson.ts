// Thompson's construction over a parsed regex (regex-syntax.ts), shared by the reference
// interpreter's code-point matcher (regex-match.ts) and the code generator's byte automaton
// (codegen/regex.ts). Consumes a RegexNode and an automaton under construction that says how to
// add a state, an empty edge (asserted or not) and the consuming edges of a character set (code
// points, or their UTF-8 byte sequences); produces the node's start and end states.
import type { Assertion, Ranges, RegexNode } from './regex-syntax.js';

/** An automaton being built: states are numbers from state(). */
export interface ThompsonTarget {
  state(): number;
  /** An empty edge, taken only where `a` holds when given. */
  link(from: number, to: number, a?: Assertion): void;
  /** Edges from `from` to `to` that consume one character of `r`. */
  consume(from: number, to: number, r: Ranges): void;
}

/** Builds node n between two fresh states of `t`; returns [start, end]. */
export function thompson(t: ThompsonTarget, n: RegexNode): [number, number] {
  const s = t.state();
  const e = t.state();
  const chain = (from: number, x: RegexNode): number => {
    const [a, b] = thompson(t, x);
    t.link(from, a);
    return b;
  };
  switch (n.k) {
    case 'set':
      t.consume(s, e, n.r);
      break;
    case 'assert':
      t.link(s, e, n.a);
      break;
    case 'cat':
      t.link(n.xs.reduce(chain, s), e);
      break;
    case 'alt':
      for (const x of n.xs) t.link(chain(s, x), e);
      break;
    case 'rep': {
      let cur = s;
      for (let i = 0; i < n.min; i++) cur = chain(cur, n.x);
      if (n.max === Infinity) {
        const [a, b] = thompson(t, n.x);
        t.link(cur, a);
        t.link(b, a);
        t.link(b, e);
      } else {
        for (let i = n.min; i < n.max; i++) {
          t.link(cur, e);
          cur = chain(cur, n.x);
        }
      }
      t.link(cur, e);
      break;
    }
  }
  return [s, e];
}
