// Generated `regex` patterns from the whole supported syntax (atoms, classes, escapes, groups,
// alternation, quantifiers, anchors, word boundaries) and short inputs over their characters,
// shared by the matcher test (codegen-regex) and the engine differential test.
import fc from 'fast-check';

const atom = fc.constantFrom('a', 'b', 'é', '.', '\\d', '\\w', '\\s', '\\W', '[ab]', '[^a]', '[a-c\\d]', '\\.', '\\x62', '😀', '\\b', '\\B', '^', '$');
const quant = fc.constantFrom('', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?');
const zeroWidth = (a: string) => a === '^' || a === '$' || a === '\\b' || a === '\\B';

/** Patterns of at most 32 characters. */
export const regexArb: fc.Arbitrary<string> = fc
  .letrec((tie) => ({
    term: fc.oneof({ weight: 4, arbitrary: fc.tuple(atom, quant).map(([a, q]) => (zeroWidth(a) ? a : a + q)) }, { weight: 1, arbitrary: fc.tuple(tie('alt') as fc.Arbitrary<string>, quant).map(([x, q]) => `(${x})${q}`) }),
    cat: fc.array(tie('term') as fc.Arbitrary<string>, { maxLength: 4 }).map((xs) => xs.join('')),
    alt: fc.array(tie('cat') as fc.Arbitrary<string>, { minLength: 1, maxLength: 3 }).map((xs) => xs.join('|')),
  }))
  .alt.filter((p) => (p as string).length <= 32) as fc.Arbitrary<string>;

/** Inputs of up to 10 characters, multi-byte ones included. */
export const regexInput: fc.Arbitrary<string> = fc.array(fc.constantFrom('a', 'b', 'c', 'é', '1', ' ', '.', '😀', '_'), { maxLength: 10 }).map((xs) => xs.join(''));
