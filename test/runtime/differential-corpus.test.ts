// Differential test over every rule of the four corpus files: the compiled WebAssembly evaluator
// and the reference interpreter must agree on every (event, rule) pair, for 100,000 random field
// events per source set, drawn from the constants the rules compare against (fast-check; a
// failure shrinks to a minimal batch and prints the seed).
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules, type LoadedRule } from '../../host/engine/index.js';
import { walkChecked } from '../../host/engine/ir.js';
import { collectPools, compileAll, compiledMatches, eventArb, oracle, toEvents } from '../../support/differential.js';
import { corpusText } from '../../support/corpus.js';

const read = (n: string) => ({ name: n, text: corpusText(n) });
const EVENTS = 100_000;
const BATCH = 1000;

function listFields(rules: readonly LoadedRule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) walkChecked(r.condition, (n) => n.kind === 'cmp' && n.left.kind === 'field' && n.left.def.isList && out.add(n.left.canonical));
  return out;
}

const SETS: Array<{ name: string; files: string[]; source: 'syscall' | 'k8s_audit' }> = [
  { name: 'falco_rules + incubating + sandbox', files: ['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml'], source: 'syscall' },
  { name: 'k8s_audit_rules', files: ['k8s_audit_rules.yaml'], source: 'k8s_audit' },
];

for (const set of SETS) {
  test(`differential (${set.name}): every rule compiles and agrees with the interpreter on ${EVENTS} events`, async () => {
    const loaded = loadRules(set.files.map(read));
    assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
    const rules = [...loaded.ruleset.rules].sort((a, b) => a.index - b.index);
    const module = await compileAll(rules);
    assert.is(module.rules.length, rules.length, 'every rule is in the module');
    const types = [...new Set(rules.flatMap((r) => [...(r.evttypes ?? [])]))].sort();
    const arb = fc.array(eventArb(collectPools(rules), set.source, types, listFields(rules)), { minLength: BATCH, maxLength: BATCH });
    let matched = 0;
    const matchedRules = new Set<string>();
    fc.assert(
      fc.property(arb, (objs) => {
        const events = toEvents(objs, set.source);
        const want = oracle(rules, events);
        const got = compiledMatches(module, events);
        matched += want.length;
        for (const w of want) matchedRules.add(w.split(':')[1]!);
        assert.equal(got, want);
      }),
      { numRuns: EVENTS / BATCH, seed: Number(process.env.DIFF_SEED ?? 20240601) },
    );
    // The events are useful only if rules actually match sometimes.
    assert.ok(matched > EVENTS / 100, `only ${matched} matches in ${EVENTS} events`);
    process.stderr.write(`differential (${set.name}): ${rules.length} rules, ${EVENTS} events, ${matched} matches of ${matchedRules.size} distinct rules\n`);
  });
}

test.run();
