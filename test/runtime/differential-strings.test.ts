// Differential test aimed at the compiled string matching: many `contains`/`icontains` needles of
// different lengths on one field (the skip-table scan), overlapping and repeated-byte needles,
// `=`/`in`/`!=` sets with several constants of one length, prefixes and suffixes, over values
// built from the needles' own pieces (so near misses and matches at every offset are common);
// compiled WebAssembly and the reference interpreter must agree on every (event, rule) pair. Some
// values are long (past the old 4096-byte cut, up to 50 KiB), with the needles at both ends.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../host/engine/index.js';
import { compileAll, compiledMatches, longPad, oracle, toEvents } from '../../support/differential.js';

const EVENTS = 30_000;
const BATCH = 500;
const PIECES = ['/', '.', 'ss', 'h', 'id_', 'rsa', 'aa', 'a', 'AAB', 'Ab', '/etc', '/.ssh/', 'shadow', 'x', 'Z', 'é', ''];

const RULES = [
  ['needles', 'fd.name contains "/.ssh/" or fd.name contains "id_rsa"'],
  ['long needle first', 'fd.name contains "shadow" and not fd.name contains "aab"'],
  ['one-byte needle', 'fd.name contains "h" and fd.name contains "/etc/s"'],
  ['overlapping', 'fd.name contains "aaa" or fd.name contains "aab" or fd.name contains "abaa"'],
  ['folded', 'fd.name icontains "AAB" or fd.name icontains "ssh/" or fd.name icontains "é"'],
  ['folded long', 'fd.name icontains "id_RSA" and fd.name icontains "/."'],
  ['sets', 'fd.name in (/etc, /.ssh/, shadow, ss, aa, ab, /etc/shadow) or fd.name = "id_rsa"'],
  ['not in', 'fd.name != "/etc" and not fd.name in (aa, Ab, x, "")'],
  ['affixes', 'fd.name startswith "/etc" or fd.name endswith "rsa" or fd.name startswith "/.ssh/shadow" or fd.name endswith "/id_rsa"'],
  ['cmdline needles', 'proc.cmdline contains "ss" or proc.cmdline contains "h/" or proc.cmdline contains "aAB"'],
];

test(`differential (strings): ${RULES.length} string-heavy rules agree with the interpreter on ${EVENTS} events`, async () => {
  const yaml = RULES.map(([name, c]) => `- rule: ${name}\n  desc: d\n  condition: evt.type in (open, openat) and (${c})\n  output: o\n  priority: WARNING\n`).join('\n');
  const loaded = loadRules([{ name: 'strings.yaml', text: yaml }]);
  assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
  const rules = loaded.ruleset.rules;
  const module = await compileAll(rules);
  const short = fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }).map((xs) => xs.join(''));
  // 1 value in 20 is long: pieces around padding past the old 4096-byte cut (needles at both ends)
  const long = fc.tuple(short, longPad, short).map(([a, p, b]) => a + p + b);
  const value = fc.oneof({ weight: 19, arbitrary: short }, { weight: 1, arbitrary: long });
  const event = fc.record({ 'evt.type': fc.constantFrom('open', 'openat'), 'fd.name': value, 'proc.cmdline': value });
  let matched = 0;
  fc.assert(
    fc.property(fc.array(event, { minLength: BATCH, maxLength: BATCH }), (objs) => {
      const events = toEvents(objs, 'syscall');
      const want = oracle(rules, events);
      matched += want.length;
      assert.equal(compiledMatches(module, events), want);
    }),
    { numRuns: EVENTS / BATCH, seed: Number(process.env.DIFF_SEED ?? 31337) },
  );
  assert.ok(matched > EVENTS / 10, `only ${matched} matches`);
});

test.run();
