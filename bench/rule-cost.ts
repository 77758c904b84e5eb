// Benchmark `rule-cost` (issue 28, item 2): are the rule figures honest, and what does counting
// cost? On the stable ruleset (falco_rules.yaml, enabled rules) and the `eval` scenario's
// synthetic syscall events (binary batches of 4096 copied into linear memory, one evaluate call
// each, rule matching first, watchdog off on every module so only the rules differ):
// - counting on vs off: the same rules compiled with and without the group counters, the
//   counting one with its tally and cost sampling (one call in 16 timed whole) attached, passes
//   alternated in the same run; the figure is the share of events/s counting takes;
// - honest cost: the N rules the figures rank most costly are removed (a module without them)
//   and the drop in evaluation time is compared with the cost the figures gave them, for N in
//   1, 3, 5; the target is a relative error within 20 %.
// The machine is shared: every comparison is between passes of the same run, alternated.
import { loadRules, type LoadedRule, rankByCost, RuleStats } from '../host/engine/index.js';
import { MEM } from '../host/abi/module.js';
import { RuleCompiler } from '../host/runtime/compiler.js';
import { selectRules } from '../host/runtime/detection-engine.js';
import { RuleModule } from '../host/runtime/evaluator.js';
import { corpusText } from '../support/corpus.js';
import { syntheticEventsForProfile } from './eval.js';
import { figure, median, progress } from './report.js';

const S = 'rule-cost';
const EVENTS = 1 << 18;
const BATCH = 4096;
const PASSES = 7;

async function compiled(rules: readonly LoadedRule[], counters: boolean): Promise<RuleModule> {
  const compiler = new RuleCompiler({ counters });
  try {
    const c = await compiler.compile(rules);
    if (!c.ok) throw new Error(c.errors.map((e) => e.message).join('\n'));
    const m = RuleModule.create(c.compiled, 0);
    if (!m.ok) throw new Error(m.error.message);
    return m.module;
  } finally {
    await compiler.close();
  }
}

/** The events as binary batches (records + strings), encoded once by `module`'s layout. */
function batchesOf(module: RuleModule): Array<{ bytes: Uint8Array; count: number }> {
  const events = syntheticEventsForProfile(EVENTS);
  const out: Array<{ bytes: Uint8Array; count: number }> = [];
  for (let i = 0; i < events.length; i += BATCH) {
    const enc = module.encode('syscall', events, i, BATCH);
    out.push({ bytes: new Uint8Array(module.memory.buffer, MEM.batchBase, enc.heapEnd - MEM.batchBase).slice(), count: enc.count });
  }
  return out;
}

/** Milliseconds of one pass of every batch through `m`. */
function pass(m: RuleModule, batches: ReadonlyArray<{ bytes: Uint8Array; count: number }>): number {
  const mem = new Uint8Array(m.memory.buffer);
  const t = performance.now();
  for (const b of batches) {
    mem.set(b.bytes, MEM.batchBase);
    const r = m.evaluateRecords('syscall', b.count, true);
    if (!r.ok) throw new Error(r.error.message);
  }
  return performance.now() - t;
}

/** Median pass time of each module, passes alternated (after two warm passes each). */
function alternated(modules: readonly RuleModule[], batches: ReadonlyArray<{ bytes: Uint8Array; count: number }>): number[] {
  for (let w = 0; w < 2; w++) for (const m of modules) pass(m, batches);
  const times = modules.map(() => [] as number[]);
  for (let p = 0; p < PASSES; p++) modules.forEach((m, i) => times[i]!.push(pass(m, batches)));
  return times.map(median);
}

export async function run(): Promise<void> {
  const stable = loadRules([{ name: 'falco_rules.yaml', text: corpusText('falco_rules.yaml') }]);
  const rules = selectRules(stable.ruleset.rules, 'Debug');
  progress(`${rules.length} enabled rules of falco_rules.yaml, ${EVENTS} events`);
  const on = await compiled(rules, true);
  const off = await compiled(rules, false);
  const batches = batchesOf(on);
  const stats = new RuleStats();
  on.countInto(stats);

  const [onMs, offMs] = alternated([on, off], batches);
  const overhead = 1 - offMs! / onMs!;
  figure(S, 'counting_overhead', overhead * 100, '%', {
    on_events_per_s: Math.round(EVENTS / (onMs! / 1000)),
    off_events_per_s: Math.round(EVENTS / (offMs! / 1000)),
    target: '<= 5 %',
    note: 'share of WASM events/s that per-rule counting (module counters read lazily, 1 call in 16 timed whole, per-rule profiles 1 call in 1,024) takes; same run, passes alternated',
  });

  // The figures of everything the counting module evaluated (warm and timed passes alike): the
  // cost they give a rule, per pass.
  const ranked = rankByCost(stats.figures());
  const passes = 2 + PASSES;
  for (const n of [1, 3, 5]) {
    const top = ranked.slice(0, n);
    const names = new Set(top.map((f) => f.rule));
    const reduced = await compiled(
      rules.filter((r) => !names.has(r.name)),
      false,
    );
    const [fullMs, reducedMs] = alternated([off, reduced], batches);
    const measured = (fullMs! - reducedMs!) / fullMs!;
    const predicted = top.reduce((s, f) => s + f.costSeconds, 0) / passes / (fullMs! / 1000);
    figure(S, `top${n}_relative_error`, (Math.abs(predicted - measured) / measured) * 100, '%', {
      rules: top.map((f) => f.rule),
      cost_share: top.reduce((s, f) => s + f.share, 0),
      predicted_drop: predicted,
      measured_drop: measured,
      full_ms: fullMs,
      without_ms: reducedMs,
      target: '<= 20 %',
      note: 'predicted: the cost the figures gave these rules as a share of the full ruleset evaluation time; measured: the drop in evaluation time without them (same run, alternated)',
    });
  }
}
