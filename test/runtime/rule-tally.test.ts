// The compiled tier's cost figures (host/runtime/rule-tally.ts), driven as the evaluator drives
// them, over real modules and real timings:
// - calibration against a preempted call: one sampled evaluate call that reads far too long (the
//   machine took the core away mid-call, here reported 10 s too long) must not inflate every
//   rule's cost;
// - attribution: a rule's cost is what removing it saves, so a rule whose costly operand another
//   rule of its group computes anyway (memoised per event) costs little, while a rule with an
//   equally costly operand of its own costs it;
// - cold code: a group's first profile runs code V8 has not optimised yet (measured on the
//   stable rules: the first rule's samples read -370 to +1,650 ns for a rule saving 20 to 30),
//   modelled here by a clock that reads the runs of one rule's pairs 10 times too long; the
//   group's second profile replaces the first, so that rule's cost is not 10 times its own;
// - profiles' schedule and their CPU time: a group is profiled at its first sampled call, again
//   SETTLE later, then once in 256 sampled calls (once in 64, they cost about 6 % of the rule-cost
//   bench's evaluation time, in bursts), and the tally accounts their CPU time (the bench adds it
//   to counting's steady cost).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evtTypeId, MEM } from '../../host/abi/module.js';
import { loadRules, RuleStats } from '../../host/engine/index.js';
import { RuleCompiler } from '../../host/runtime/compiler.js';
import { BatchEncoder } from '../../host/runtime/encode.js';
import { cpuSeconds, ModuleTally } from '../../host/runtime/rule-tally.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { FIGURE_EVENTS, FIGURE_RULES } from './rule-figures-fixture.js';

type EvaluateFn = (src: number, rec: number, n: number, first: number, out: number, cap: number) => number;

/** Two rules share a costly operand (one pass of the needle search over a long proc.cmdline, memoised per event); a third has one as costly of its own (fd.name). */
const SHARED_RULES = ['a', 'b']
  .map((n) => `- rule: Shared ${n}\n  desc: t\n  condition: evt.type = openat and proc.cmdline contains "#${n}"\n  output: o\n  priority: NOTICE\n`)
  .concat('- rule: Own\n  desc: t\n  condition: evt.type = openat and fd.name contains "#c"\n  output: o\n  priority: NOTICE\n')
  .join('');
const LONG = 'x'.repeat(2000);
const SHARED_EVENTS = Array.from({ length: 16 }, (_, i) => JSON.stringify({ source: 'syscall', fields: { 'evt.type': 'openat', 'proc.cmdline': `${LONG}${i}`, 'fd.name': `/${LONG}${i}` } })).join('\n');

/** The rule-figures fixture and SHARED_RULES in one module (one compile: it is the slow part), instantiated afresh. */
const compiledRules = (async () => {
  const compiler = new RuleCompiler({ counters: true, timeoutMs: 0 });
  try {
    return await compiler.compile(loadRules([{ name: 'figures.yaml', text: FIGURE_RULES + SHARED_RULES }]).ruleset.rules);
  } finally {
    await compiler.close();
  }
})();

async function instantiate() {
  const compiled = await compiledRules;
  assert.ok(compiled.ok, 'the rules compile');
  const instance = new WebAssembly.Instance(compiled.compiled.module, {});
  return { g: compiled.compiled.generated, instance, memory: instance.exports.memory as WebAssembly.Memory, evaluate: instance.exports.evaluate as EvaluateFn };
}

test('rule tally: a preempted sampled call does not inflate the costs (calibration by median)', async () => {
  const { g, instance, memory, evaluate } = await instantiate();
  const events = readReplayInput(FIGURE_EVENTS, 'fields').events.filter((e) => e.source === 'syscall');
  const enc = new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys).encode(memory, events, 0, events.length);
  const stats = new RuleStats();
  const tally = new ModuleTally(memory, instance.exports, g, stats, 1);
  let spent = 0;
  for (let call = 0; call < 200; call++) {
    assert.ok(tally.beforeCall(true), 'every call is sampled (sampleEvery 1)');
    const t0 = cpuSeconds();
    evaluate(0, MEM.batchBase, enc.count, 1, MEM.outBase, MEM.outSize / 8);
    const seconds = cpuSeconds() - t0;
    spent += seconds;
    // call 100: the machine preempted it, it reads 10 s too long
    tally.afterSampledCall(0, MEM.batchBase, enc.count, call === 100 ? seconds + 10 : seconds);
  }
  const cost = stats.figures().reduce((s, f) => s + f.costSeconds, 0);
  assert.ok(cost > 0, 'some cost');
  // the rules' cost is part of the calls' real time; a scale summed over the calls would put the 10 s on the rules
  assert.ok(cost < spent + 5, `rules' cost ${cost} s for ${spent} s of evaluate calls`);
});

test('rule tally: a rule costs what removing it saves (an operand its group computes anyway is not its cost)', async () => {
  const { g, instance, memory, evaluate } = await instantiate();
  const events = readReplayInput(SHARED_EVENTS, 'fields').events;
  const enc = new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys).encode(memory, events, 0, events.length);
  assert.is(enc.count, 16);
  // Each trial is a fresh tally, whose first sampled call profiles the group; the median over
  // trials leaves out a trial the machine preempted. Alone, each rule would cost one scan.
  const ratios: number[] = [];
  for (let trial = 0; trial < 9; trial++) {
    const stats = new RuleStats();
    const tally = new ModuleTally(memory, instance.exports, g, stats, 1);
    for (let call = 0; call < 4; call++) {
      tally.beforeCall(true);
      const t0 = cpuSeconds();
      assert.is(evaluate(0, MEM.batchBase, enc.count, 1, MEM.outBase, MEM.outSize / 8), 0);
      tally.afterSampledCall(0, MEM.batchBase, enc.count, cpuSeconds() - t0);
    }
    const cost = Object.fromEntries(stats.figures().map((f) => [f.rule, f.costSeconds]));
    // a trial whose own rule read 0 (a timing below the clock's resolution) counts as a failed one
    ratios.push(cost.Own! > 0 ? Math.max(cost['Shared a']!, cost['Shared b']!) / cost.Own! : Number.POSITIVE_INFINITY);
  }
  ratios.sort((x, y) => x - y);
  // removing either shared rule saves its needle test, not the scan (the other rule still does it): far below one scan
  assert.ok(ratios[4]! < 0.3, `shared rule's cost / own rule's cost, per trial: ${ratios.map((r) => r.toFixed(3)).join(', ')}`);
});

/** The process's CPU clock as it is (the tally's reads go through process.cpuUsage, which the cold-code test slows down). */
const realCpuUsage = process.cpuUsage.bind(process);
const realSeconds = () => {
  const u = realCpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * Own's cost in a fresh tally after `calls` sampled calls over SHARED_EVENTS; with `cold`, the
 * tally's CPU clock reads the runs of Own's pairs in the group's first profile 10 times as long.
 */
async function ownCost(calls: number, cold: boolean): Promise<number> {
  const { g, instance, memory, evaluate } = await instantiate();
  const events = readReplayInput(SHARED_EVENTS, 'fields').events;
  const enc = new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys).encode(memory, events, 0, events.length);
  const group = g.countSlots.find((s) => s.slot === evtTypeId('openat'))!;
  const k = group.rules.length;
  const own = group.rules.findIndex((id) => g.rules[id]!.name === 'Own');
  // The first profile's clock reads (ModuleTally.profile): 8 for the baseline (the empty call
  // and the loop, twice), then 2 rounds of k pairs (whole, without rule p), 2 reads a run.
  const ownPair = (read: number) => read > 8 && read <= 8 + 8 * k && Math.floor(((read - 9) % (4 * k)) / 4) === own;
  let reads = 0;
  let extra = 0;
  let last = 0;
  const slowed = (prev?: NodeJS.CpuUsage): NodeJS.CpuUsage => {
    const u = realCpuUsage(prev);
    const t = u.user + u.system;
    reads++;
    if (reads % 2 === 0 && ownPair(reads)) extra += 9 * (t - last);
    last = t;
    return { user: u.user + extra, system: u.system };
  };
  const stats = new RuleStats();
  const tally = new ModuleTally(memory, instance.exports, g, stats, 1);
  if (cold) process.cpuUsage = slowed;
  try {
    for (let call = 0; call < calls; call++) {
      tally.beforeCall(true);
      const t0 = realSeconds();
      evaluate(0, MEM.batchBase, enc.count, 1, MEM.outBase, MEM.outSize / 8);
      tally.afterSampledCall(0, MEM.batchBase, enc.count, realSeconds() - t0);
    }
  } finally {
    process.cpuUsage = realCpuUsage;
  }
  return stats.figures().find((f) => f.rule === 'Own')!.costSeconds;
}

test("rule tally: a rule whose pairs ran cold in its group's first profile is not charged for it (the second profile replaces the first)", async () => {
  // paired trials, a cold first profile against none; the median leaves out a preempted trial
  const ratios: number[] = [];
  for (let trial = 0; trial < 7; trial++) {
    const cold = await ownCost(40, true);
    const warm = await ownCost(40, false);
    ratios.push(warm > 0 ? cold / warm : Number.POSITIVE_INFINITY);
  }
  ratios.sort((x, y) => x - y);
  // charged for the cold runs, Own would cost about 10 times its warm cost
  assert.ok(ratios[3]! < 3, `Own's cost with a cold first profile / without, per trial: ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
});

test('rule tally: a group is profiled at its first sampled call, 2 later, then once in 256, and the profiles count their CPU time', async () => {
  const { g, instance, memory, evaluate } = await instantiate();
  const events = readReplayInput(FIGURE_EVENTS, 'fields').events.filter((e) => e.source === 'syscall');
  const enc = new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys).encode(memory, events, 0, events.length);
  // a clock that advances 1 µs a read: every timed profile run reads 1 µs, whatever the machine does
  let ticks = 0;
  process.cpuUsage = (prev?: NodeJS.CpuUsage) => {
    ticks++;
    return { user: ticks - (prev?.user ?? 0), system: 0 };
  };
  const profiled: number[] = [];
  try {
    const tally = new ModuleTally(memory, instance.exports, g, new RuleStats(), 1);
    for (let call = 0; call < 600; call++) {
      tally.beforeCall(true);
      evaluate(0, MEM.batchBase, enc.count, 1, MEM.outBase, MEM.outSize / 8);
      const before = tally.profileSeconds;
      tally.afterSampledCall(0, MEM.batchBase, enc.count, 1e-3);
      if (tally.profileSeconds > before) profiled.push(call);
    }
  } finally {
    process.cpuUsage = realCpuUsage;
  }
  assert.equal(profiled, [0, 2, 256, 512], 'the sampled calls that profiled');
});

test.run();
