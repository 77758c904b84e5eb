// Differential test over the whole condition language as the checker defines it
// (support/language-combinations.ts): every accepted operator × modifier × transformer × field type ×
// right-hand side (literal, literal list, field) must compile (both engines accept what the
// checker accepts), and one rule per combination class is run on random events (missing fields,
// list fields, ancestors, both sources) through the compiled module and the reference
// interpreter: the matches must be equal. Fixed seed here (DIFF_SEED to vary); a larger run is
// `npm run bench -- differential`.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../host/engine/index.js';
import { collectPools, compileAll, compiledMatches, eventArb, oracle, toEvents } from '../../support/differential.js';
import { enumerate, EXTRA_STRINGS, listFields, oneLeafPerClass, rulesYaml, TYPES } from '../../support/language-combinations.js';

const EVENTS = 400;
const BATCH = 200;

const all = enumerate();

test('every leaf the checker accepts compiles to WASM', () => {
  assert.ok(all.leaves.length > 5000, `only ${all.leaves.length} accepted leaves`);
  assert.equal(all.refused.slice(0, 10), []);
});

test('differential: one rule per accepted combination class, interpreter = compiled module', async () => {
  // the leaves both engines accept (the test above fails on any other)
  // DIFF_ONLY (a regex over leaf texts) narrows the run to some leaves, for a quick look at one operator or transformer
  const only = process.env.DIFF_ONLY ? new RegExp(process.env.DIFF_ONLY) : undefined;
  const leaves = oneLeafPerClass(all.leaves.filter((l) => l.compiles && (!only || only.test(l.text))));
  const loaded = loadRules([{ name: 'combinations.yaml', text: rulesYaml(leaves) }]);
  assert.ok(
    loaded.ok,
    loaded.diagnostics
      .filter((d) => d.severity === 'error')
      .slice(0, 5)
      .map((d) => d.message)
      .join('\n'),
  );
  const rules = loaded.ruleset.rules;
  assert.is(rules.length, leaves.length);
  const module = await compileAll(rules);
  const pools = collectPools(rules);
  for (const p of pools.values()) if (p.kind === 'str') p.values = [...new Set([...p.values, ...EXTRA_STRINGS])];
  const lists = listFields(rules);
  const bySource = { syscall: rules.filter((r) => r.source === 'syscall').length, k8s_audit: rules.filter((r) => r.source === 'k8s_audit').length };
  const arb = fc.tuple(fc.array(eventArb(pools, 'syscall', TYPES, lists), { minLength: BATCH / 2, maxLength: BATCH / 2 }), fc.array(eventArb(pools, 'k8s_audit', [], lists), { minLength: BATCH / 2, maxLength: BATCH / 2 }));
  let tried = 0;
  let matched = 0;
  fc.assert(
    fc.property(arb, ([sys, audit]) => {
      for (const [objs, source] of [
        [sys, 'syscall'],
        [audit, 'k8s_audit'],
      ] as const) {
        const events = toEvents(objs, source);
        const want = oracle(rules, events);
        tried += events.length * bySource[source];
        matched += want.length;
        assert.equal(compiledMatches(module, events), want);
      }
    }),
    { numRuns: EVENTS / BATCH, seed: Number(process.env.DIFF_SEED ?? 20261125) },
  );
  if (!only) assert.ok(tried >= 100_000, `only ${tried} condition × event evaluations`);
  process.stderr.write(`differential (language): ${all.candidates} candidates, ${all.leaves.length} accepted, ${rules.length} rules (one per class), ${tried} conditions × events, ${matched} matches, 0 differences\n`);
});

test.run();
