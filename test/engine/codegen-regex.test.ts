// regex compiled to a DFA over UTF-8 bytes must accept exactly what the reference interpreter's
// `new RegExp('^(?:' + p + ')$', 'u')` accepts: a table of patterns, each checked on every
// string of a fixed list and on 2,000 random strings (fast-check) built from the pattern's own
// characters plus multi-byte ones; and the constructs it refuses, with their messages.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileRegex, runDfa } from '../../host/engine/codegen/regex.js';

const PATTERNS = [
  'abc', 'a|b|', 'a*', 'a+b?', '(ab)+', '(?:ab|cd){2}', 'x{1,3}y{2,}', '[a-c]+', '[^a-c]*', '.', '.*', '\\d+', '\\D\\w\\W', '\\s*\\S',
  '^/etc/.*\\.conf$', '[\\-.]+', 'é.ü', '[α-ω]+', '[^α]', '\\.\\*\\?', 'a(b|c)*d', '(a|ab)(c|bcd)(d*)', '[\\d\\s]+', 'a{0}', '(?:x|y)*?z',
  '/usr/(s?bin|lib)/[a-z0-9_-]+', '.{2,4}', '😀+', '[😀-😂]',
];
const FIXED = ['', 'a', 'b', 'ab', 'abc', 'abab', 'abcd', 'cdcd', 'xyy', 'xxxyyy', 'abc1', '12', 'a_-', ' \t', 'x', '\n', 'é', 'éxü', 'αβγ', 'α', 'β', '/etc/x.conf', '/usr/bin/ls', '/usr/lib/a-b', '😀', '😀😀', '😁', '.*?', 'abd', 'acbd', 'abcd', '\u2028'];

for (const p of PATTERNS) {
  test(`regex dfa: ${p}`, () => {
    const re = new RegExp(`^(?:${p})$`, 'u');
    const dfa = compileRegex(p);
    for (const s of FIXED) assert.is(runDfa(dfa, Buffer.from(s)), re.test(s), `'${s}'`);
    const chars = [...new Set([...p.replace(/[\\^$]/g, ''), 'a', 'b', 'é', '😀', '\n', ' ', '/', '1'])];
    fc.assert(fc.property(fc.array(fc.constantFrom(...chars), { maxLength: 8 }), (cs) => {
      const s = cs.join('');
      assert.is(runDfa(dfa, Buffer.from(s)), re.test(s), `'${s}'`);
    }), { numRuns: 2000, seed: 11 });
  });
}

test('regex dfa: unsupported constructs are refused with a message', () => {
  const refuse = (p: string, msg: string) => assert.throws(() => compileRegex(p), (e: Error) => e.message.includes(msg), p);
  refuse('(a)\\1', 'escape \\1 is not supported');
  refuse('a(?=b)', 'lookaround and named groups are not supported');
  refuse('\\bword', 'escape \\b is not supported');
  refuse('a^b', "unsupported or misplaced '^'");
  refuse('(ab', 'missing )');
  refuse('[ab', 'missing ]');
  refuse('(a|b|c|d|e|f|g|h){30}[a-z]{0,20}(x|y)*', 'DFA states');
});

test.run();
