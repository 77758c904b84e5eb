// Benchmark `differential`: the larger run of test/engine/differential-language.test.ts. Every
// leaf the checker accepts (support/language-combinations.ts: operator × modifier × transformer × field
// type × right-hand side, derived from the checker's tables) is one rule; random events of both
// sources (missing fields, lists, ancestors) go through the compiled module and the reference
// interpreter. Reports the accepted leaves, those the compiled evaluator refuses (must be 0), the
// conditions × events evaluated and the differences (must be 0). Seed: DIFF_SEED or the clock.
import fc from 'fast-check';
import { loadRules } from '../host/engine/index.js';
import { collectPools, compileAll, compiledMatches, eventArb, oracle, toEvents } from '../support/differential.js';
import { enumerate, EXTRA_STRINGS, listFields, rulesYaml, TYPES } from '../support/language-combinations.js';
import { figure, progress } from './report.js';

const S = 'differential';
const BATCHES = 10;
const BATCH = 200;

export async function run(): Promise<void> {
  const seed = Number(process.env.DIFF_SEED ?? Date.now() % 2 ** 31);
  const all = enumerate();
  figure(S, 'accepted_leaves', all.leaves.length, 'leaves', { candidates: all.candidates });
  figure(S, 'refused_by_compiled_evaluator', all.refused.length, 'leaves', { first: all.refused.slice(0, 3) });
  // A leaf the checker accepts can still make a rule the loader refuses, as Falco's does: evt.type
  // compared with something other than literals cannot index the rule's event types. Those rules
  // are left out (counted); any other load error stops the run.
  let leaves = all.leaves.filter((l) => l.compiles);
  let loaded = loadRules([{ name: 'combinations.yaml', text: rulesYaml(leaves) }]);
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  const indexing = errors.filter((d) => /event-type indexing/.test(d.message));
  if (indexing.length > 0 && indexing.length === errors.length) {
    const refused = new Set(indexing.map((d) => Number(/^c(\d+)$/.exec(d.locations.find((l) => l.itemType === 'rule')?.itemName ?? '')?.[1] ?? -1)));
    leaves = leaves.filter((_, i) => !refused.has(i));
    figure(S, 'refused_by_loader_evttype_indexing', refused.size, 'leaves', { note: 'evt.type compared with a non-literal: refused at rule load, as Falco does' });
    loaded = loadRules([{ name: 'combinations.yaml', text: rulesYaml(leaves) }]);
  }
  if (!loaded.ok)
    throw new Error(
      loaded.diagnostics
        .filter((d) => d.severity === 'error')
        .slice(0, 3)
        .map((d) => d.message)
        .join('\n'),
    );
  const rules = loaded.ruleset.rules;
  const module = await compileAll(rules);
  const pools = collectPools(rules);
  for (const p of pools.values()) if (p.kind === 'str') p.values = [...new Set([...p.values, ...EXTRA_STRINGS])];
  const lists = listFields(rules);
  const per = { syscall: rules.filter((r) => r.source === 'syscall').length, k8s_audit: rules.filter((r) => r.source === 'k8s_audit').length };
  const arbs = { syscall: fc.array(eventArb(pools, 'syscall', TYPES, lists), { minLength: BATCH, maxLength: BATCH }), k8s_audit: fc.array(eventArb(pools, 'k8s_audit', [], lists), { minLength: BATCH, maxLength: BATCH }) };
  let tried = 0;
  let events = 0;
  let differences = 0;
  const examples: string[] = [];
  const t0 = performance.now();
  for (let b = 0; b < BATCHES; b++) {
    for (const source of ['syscall', 'k8s_audit'] as const) {
      const objs = fc.sample(arbs[source], { numRuns: 1, seed: seed + 2 * b + (source === 'syscall' ? 0 : 1) })[0]!;
      const evs = toEvents(objs, source);
      const want = new Set(oracle(rules, evs));
      const got = new Set(compiledMatches(module, evs));
      for (const m of [...want].filter((x) => !got.has(x)).concat([...got].filter((x) => !want.has(x)))) {
        differences++;
        if (examples.length < 3) {
          const [ev, id] = m.split(':').map(Number);
          examples.push(`${rules[id!]!.name}: ${JSON.stringify(objs[ev!])}`);
        }
      }
      tried += evs.length * per[source];
      events += evs.length;
    }
    progress(`${S}: batch ${b + 1}/${BATCHES}, ${tried} conditions × events, ${differences} differences`);
  }
  figure(S, 'conditions_x_events', tried, 'evaluations', { rules: rules.length, events, seed, seconds: (performance.now() - t0) / 1000 });
  figure(S, 'differences', differences, 'differences', { examples });
}
