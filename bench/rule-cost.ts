// Benchmark `rule-cost` (issue 28, item 2): are the rule figures honest, and what does counting
// cost? On the stable ruleset (falco_rules.yaml, enabled rules) and the `eval` scenario's
// synthetic syscall events (binary batches of 4096 copied into linear memory, one evaluate call
// each, rule matching first, watchdog off on every module so only the rules differ). Five
// modules: counting on (its tally attached: one call in 16 timed whole), counting off, and
// counting off without the 1, 3, 5 rules the figures of warm passes rank most costly. Each
// round times one pass of each (REPEAT times the events), the order reversed every other round
// so the machine's drifting load falls on all; every round's figures are printed, then medians.
// Times are the process's CPU time: on a loaded machine wall time is mostly waiting for a core.
// - counting overhead: 1 - CPU(off) / CPU(on), target at most 5 %;
// - honest cost: predicted drop = the cost the figures gave the top N during that round's
//   counting pass / that pass's CPU time; measured drop = 1 - CPU(without them) / CPU(off);
//   relative error |predicted - measured| / measured, target within 20 %.
import { loadRules, type LoadedRule, rankByCost, RuleStats } from '../host/engine/index.js';
import { MEM } from '../host/abi/module.js';
import { RuleCompiler } from '../host/runtime/compiler.js';
import { selectRules } from '../host/runtime/detection-engine.js';
import { RuleModule } from '../host/runtime/evaluator.js';
import type { SourceEvent } from '../host/engine/source-event.js';
import { corpusText } from '../support/corpus.js';
import { syntheticEventsForProfile } from './eval.js';
import { figure, median, progress } from './report.js';

const S = 'rule-cost';
const EVENTS = 1 << 18;
const BATCH = 4096;
const ROUNDS = 9;
/** Passes over the events per timed pass (about 0.1 s of CPU each). */
const REPEAT = 3;
/** Untimed passes of each module first (V8 tiers wasm up in the background). */
const WARM = 2;
const TOPS = [1, 3, 5];

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

/** The events as binary batches (records + strings) in `module`'s layout: a module without some rules has its own (other fields, other offsets), so each module gets its own encoding. */
function batchesOf(module: RuleModule, events: readonly SourceEvent[]): Array<{ bytes: Uint8Array; count: number }> {
  const out: Array<{ bytes: Uint8Array; count: number }> = [];
  for (let i = 0; i < events.length; i += BATCH) {
    const enc = module.encode('syscall', events, i, BATCH);
    out.push({ bytes: new Uint8Array(module.memory.buffer, MEM.batchBase, enc.heapEnd - MEM.batchBase).slice(), count: enc.count });
  }
  return out;
}

/** One pass of every batch through a module: wall and CPU milliseconds. */
interface PassTime {
  wall: number;
  cpu: number;
}

/** Times one pass of every batch through `m` (wall clock, and the process's CPU time, which a preempting machine does not lengthen). */
function pass(m: RuleModule, batches: ReadonlyArray<{ bytes: Uint8Array; count: number }>): PassTime {
  const mem = new Uint8Array(m.memory.buffer);
  const c = process.cpuUsage();
  const t = performance.now();
  for (let r = 0; r < REPEAT; r++)
    for (const b of batches) {
      mem.set(b.bytes, MEM.batchBase);
      const r = m.evaluateRecords('syscall', b.count, true);
      if (!r.ok) throw new Error(r.error.message);
    }
  const wall = performance.now() - t;
  const used = process.cpuUsage(c);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

/** Cost the figures gave each rule so far, by name. */
function costs(stats: RuleStats): Map<string, number> {
  return new Map(stats.figures().map((f) => [f.rule, f.costSeconds]));
}

export async function run(): Promise<void> {
  const stable = loadRules([{ name: 'falco_rules.yaml', text: corpusText('falco_rules.yaml') }]);
  const rules = selectRules(stable.ruleset.rules, 'Debug');
  progress(`${rules.length} enabled rules of falco_rules.yaml, ${EVENTS} events, ${ROUNDS} rounds`);
  const on = await compiled(rules, true);
  const off = await compiled(rules, false);
  const events = syntheticEventsForProfile(EVENTS);
  const batches = new Map<RuleModule, Array<{ bytes: Uint8Array; count: number }>>([
    [on, batchesOf(on, events)],
    [off, batchesOf(off, events)],
  ]);
  const stats = new RuleStats();
  on.countInto(stats);

  // Ranking: the figures of warm passes of the counting module.
  for (let w = 0; w < WARM; w++) pass(on, batches.get(on)!);
  const ranked = rankByCost(stats.figures());
  const tops = TOPS.map((n) => ranked.slice(0, n));
  const reduced: RuleModule[] = [];
  for (const top of tops) {
    const names = new Set(top.map((f) => f.rule));
    const m = await compiled(
      rules.filter((r) => !names.has(r.name)),
      false,
    );
    reduced.push(m);
    batches.set(m, batchesOf(m, events));
  }
  const modules = [on, off, ...reduced];
  for (let w = 0; w < WARM; w++) for (const m of modules.slice(1)) pass(m, batches.get(m)!);

  // Rounds: every module once, in an order reversed every other round so drift in the
  // machine's load falls on all of them alike. The counting module's pass is measured against
  // the figures it produced during that very pass (its cost delta / its wall time).
  const overheads: number[] = [];
  const predicted = TOPS.map(() => [] as number[]);
  const measured = TOPS.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? modules : [...modules].reverse();
    const times = new Map<RuleModule, PassTime>();
    let before = new Map<string, number>();
    let after = new Map<string, number>();
    for (const m of order) {
      if (m === on) before = costs(stats);
      times.set(m, pass(m, batches.get(m)!));
      if (m === on) after = costs(stats);
    }
    const onT = times.get(on)!;
    const offT = times.get(off)!;
    const overhead = 1 - offT.cpu / onT.cpu;
    overheads.push(overhead);
    figure(S, 'counting_overhead_round', overhead * 100, '%', {
      round,
      on_events_per_s_cpu: Math.round((REPEAT * EVENTS) / (onT.cpu / 1000)),
      off_events_per_s_cpu: Math.round((REPEAT * EVENTS) / (offT.cpu / 1000)),
      on_wall_ms: onT.wall,
      off_wall_ms: offT.wall,
    });
    tops.forEach((top, i) => {
      const cost = top.reduce((s, f) => s + (after.get(f.rule)! - before.get(f.rule)!), 0);
      const p = cost / (onT.cpu / 1000);
      const red = times.get(reduced[i]!)!;
      const d = 1 - red.cpu / offT.cpu;
      predicted[i]!.push(p);
      measured[i]!.push(d);
      figure(S, `top${top.length}_round`, (Math.abs(p - d) / d) * 100, '%', {
        round,
        predicted_drop: p,
        measured_drop: d,
        measured_drop_wall: 1 - red.wall / offT.wall,
        full_cpu_ms: offT.cpu,
        without_cpu_ms: red.cpu,
      });
    });
  }

  const oh = median(overheads);
  figure(S, 'counting_overhead', oh * 100, '%', {
    rounds: overheads.map((o) => Number((o * 100).toFixed(2))),
    target: '<= 5 %',
    note: 'median over rounds of the share of WASM events/s (process CPU time) that per-rule counting takes (module counters read lazily, 1 call in 16 timed whole, per-rule profiles 1 call in 1,024); same run, passes alternated',
  });
  tops.forEach((top, i) => {
    const p = median(predicted[i]!);
    const d = median(measured[i]!);
    figure(S, `top${top.length}_relative_error`, (Math.abs(p - d) / d) * 100, '%', {
      rules: top.map((f) => f.rule),
      cost_share_of_rules: top.reduce((s, f) => s + f.share, 0),
      predicted_drop: p,
      measured_drop: d,
      target: '<= 20 %',
      note: "medians over rounds. predicted: the cost the figures gave these rules during a pass of the counting module, over that pass's CPU time; measured: 1 - CPU time of a pass without them / CPU time of the full ruleset (counters off), same round",
    });
  });
}
