// Benchmark `rule-cost` (issue 28, item 2): are the rule figures honest, and what does counting
// cost? On the stable ruleset (falco_rules.yaml, enabled rules) and the `eval` scenario's
// synthetic syscall events (binary batches of 4096 copied into linear memory, one evaluate call
// each, rule matching first, watchdog off on every module so only the rules differ). Five
// modules: counting on (its tally attached: one call in 16 timed whole), counting off, and
// counting off without the 1, 3, 5 rules the figures of warm passes rank most costly. Each
// round runs every batch (REPEAT times) through every module, the modules' order rotated from
// batch to batch, so the machine's drifting load falls on all alike; only the evaluate calls
// are timed, in the process's CPU time (on a loaded machine wall time is mostly waiting for a
// core). Every round's figures are printed, then the checks with medians and quartiles:
// - counting overhead: 1 - CPU(off) / CPU(on), target at most 5 %;
// - honest cost: predicted drop = the cost the figures gave the top N during that round's
//   counting calls / their CPU time; measured drop = 1 - CPU(without them) / CPU(off); relative
//   error |predicted - measured| / measured, target within 20 %.
import { loadRules, type LoadedRule, rankByCost, RuleStats } from '../host/engine/index.js';
import { MEM } from '../host/abi/module.js';
import { RuleCompiler } from '../host/runtime/compiler.js';
import { selectRules } from '../host/runtime/detection-engine.js';
import { RuleModule } from '../host/runtime/evaluator.js';
import type { SourceEvent } from '../host/engine/source-event.js';
import { corpusText } from '../support/corpus.js';
import { syntheticEventsForProfile } from './eval.js';
import { figure, progress } from './report.js';

const S = 'rule-cost';
const EVENTS = 1 << 18;
const BATCH = 4096;
const ROUNDS = Number(process.env.RULE_COST_ROUNDS ?? 15);
/** Passes over the events per round (about 0.1 s of CPU per module each). */
const REPEAT = 3;
/** Untimed rounds of each module first (V8 tiers wasm up in the background). */
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

/** A batch of records in one module's layout. */
interface Batch {
  bytes: Uint8Array;
  count: number;
}

/** The events as binary batches (records + strings) in `module`'s layout: a module without some rules has its own (other fields, other offsets), so each module gets its own encoding. */
function batchesOf(module: RuleModule, events: readonly SourceEvent[]): Batch[] {
  const out: Batch[] = [];
  for (let i = 0; i < events.length; i += BATCH) {
    const enc = module.encode('syscall', events, i, BATCH);
    out.push({ bytes: new Uint8Array(module.memory.buffer, MEM.batchBase, enc.heapEnd - MEM.batchBase).slice(), count: enc.count });
  }
  return out;
}

/** One round: every batch REPEAT times through every module, the order rotated per batch; returns each module's CPU milliseconds in its evaluate calls. */
function round(modules: readonly RuleModule[], batches: ReadonlyMap<RuleModule, Batch[]>, shift: number): number[] {
  const cpu = modules.map(() => 0);
  const mems = modules.map((m) => new Uint8Array(m.memory.buffer));
  const n = batches.get(modules[0]!)!.length;
  for (let r = 0; r < REPEAT; r++)
    for (let b = 0; b < n; b++)
      for (let j = 0; j < modules.length; j++) {
        const i = (j + b + shift) % modules.length;
        const m = modules[i]!;
        const batch = batches.get(m)![b]!;
        mems[i]!.set(batch.bytes, MEM.batchBase);
        const c = process.cpuUsage();
        const res = m.evaluateRecords('syscall', batch.count, true);
        const used = process.cpuUsage(c);
        if (!res.ok) throw new Error(res.error.message);
        cpu[i]! += (used.user + used.system) / 1000;
      }
  return cpu;
}

/** Cost the figures gave each rule so far, by name. */
function costs(stats: RuleStats): Map<string, number> {
  return new Map(stats.figures().map((f) => [f.rule, f.costSeconds]));
}

/** The q-quantile of xs (linear between neighbours). */
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const at = q * (s.length - 1);
  const lo = Math.floor(at);
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (at - lo);
}

/** Median and quartiles of percentages, rounded for print. */
function spread(xs: readonly number[]): { median: number; q1: number; q3: number; min: number; max: number } {
  const r = (v: number) => Number((v * 100).toFixed(2));
  return { median: r(quantile(xs, 0.5)), q1: r(quantile(xs, 0.25)), q3: r(quantile(xs, 0.75)), min: r(Math.min(...xs)), max: r(Math.max(...xs)) };
}

export async function run(): Promise<void> {
  const stable = loadRules([{ name: 'falco_rules.yaml', text: corpusText('falco_rules.yaml') }]);
  const rules = selectRules(stable.ruleset.rules, 'Debug');
  progress(`${rules.length} enabled rules of falco_rules.yaml, ${EVENTS} events, ${ROUNDS} rounds`);
  const on = await compiled(rules, true);
  const off = await compiled(rules, false);
  const events = syntheticEventsForProfile(EVENTS);
  const batches = new Map<RuleModule, Batch[]>([
    [on, batchesOf(on, events)],
    [off, batchesOf(off, events)],
  ]);
  const stats = new RuleStats();
  on.countInto(stats);

  // Ranking: the figures of warm rounds of the counting module.
  for (let w = 0; w < WARM; w++) round([on], batches, 0);
  const ranked = rankByCost(stats.figures());
  const summed = ranked.reduce((s, f) => s + f.costSeconds, 0);
  figure(S, 'ranking', ranked.length, 'rules', {
    note: 'the most costly rules after the warm rounds: evaluations, ns per evaluation (cost / evaluations), share of the summed rule costs',
    top: ranked.slice(0, 10).map((f) => ({ rule: f.rule, evaluations: f.evaluations, ns_per_evaluation: Number(((f.costSeconds / Math.max(1, f.evaluations)) * 1e9).toFixed(2)), share: Number((f.costSeconds / summed).toFixed(4)) })),
  });
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
  for (let w = 0; w < WARM; w++) round(modules.slice(1), batches, w);

  // Rounds: the counting module's calls are measured against the figures it produced during
  // that very round (their cost delta / its CPU time).
  const overheads: number[] = [];
  const totals = modules.map(() => 0);
  const predicted = TOPS.map(() => [] as number[]);
  const measured = TOPS.map(() => [] as number[]);
  const errors = TOPS.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    const before = costs(stats);
    const cpu = round(modules, batches, r);
    const after = costs(stats);
    cpu.forEach((c, i) => (totals[i]! += c));
    const [onCpu, offCpu] = [cpu[0]!, cpu[1]!];
    const overhead = 1 - offCpu / onCpu;
    overheads.push(overhead);
    figure(S, 'counting_overhead_round', overhead * 100, '%', {
      round: r,
      on_cpu_ms: onCpu,
      off_cpu_ms: offCpu,
      on_events_per_s_cpu: Math.round((REPEAT * EVENTS) / (onCpu / 1000)),
      off_events_per_s_cpu: Math.round((REPEAT * EVENTS) / (offCpu / 1000)),
    });
    tops.forEach((top, i) => {
      const cost = top.reduce((s, f) => s + (after.get(f.rule)! - before.get(f.rule)!), 0);
      const p = cost / (onCpu / 1000);
      const d = 1 - cpu[2 + i]! / offCpu;
      predicted[i]!.push(p);
      measured[i]!.push(d);
      errors[i]!.push(Math.abs(p - d) / d);
      figure(S, `top${top.length}_round`, (Math.abs(p - d) / d) * 100, '%', { round: r, predicted_drop: p, measured_drop: d, full_cpu_ms: offCpu, without_cpu_ms: cpu[2 + i]! });
    });
  }

  const oh = spread(overheads);
  figure(S, 'counting_overhead', oh.median, '%', {
    check: `median ${oh.median} % (quartiles ${oh.q1} to ${oh.q3} %, rounds ${oh.min} to ${oh.max} %); target <= 5 %: ${oh.median <= 5 ? 'met' : 'NOT met'}`,
    ...oh,
    all_rounds: Number(((1 - totals[1]! / totals[0]!) * 100).toFixed(2)),
    rounds: overheads.map((o) => Number((o * 100).toFixed(2))),
    target: '<= 5 %',
    note: 'per round, 1 - CPU(counters off) / CPU(counters on) of the same batches, interleaved; all_rounds: the same over the sums of every round (profiles of the tally included wherever they fell)',
  });
  tops.forEach((top, i) => {
    const p = spread(predicted[i]!);
    const d = spread(measured[i]!);
    const e = spread(errors[i]!);
    const err = (Math.abs(quantile(predicted[i]!, 0.5) - quantile(measured[i]!, 0.5)) / quantile(measured[i]!, 0.5)) * 100;
    figure(S, `top${top.length}_relative_error`, err, '%', {
      check: `top ${top.length}: predicted drop ${p.median} % (quartiles ${p.q1} to ${p.q3}), measured ${d.median} % (quartiles ${d.q1} to ${d.q3}); relative error of the medians ${err.toFixed(1)} %, per round median ${e.median} % (quartiles ${e.q1} to ${e.q3}); target <= 20 %: ${err <= 20 ? 'met' : 'NOT met'}`,
      rules: top.map((f) => f.rule),
      predicted_drop_pct: p,
      measured_drop_pct: d,
      round_error_pct: e,
      target: '<= 20 %',
      note: "predicted: the cost the figures gave these rules during a round's counting calls, over those calls' CPU time; measured: 1 - CPU time of the ruleset without them / CPU time of the full ruleset (counters off), same batches, interleaved",
    });
  });
}
