// The compiled tier's cost figures (host/runtime/rule-tally.ts), driven as the evaluator drives
// them, over real modules and real timings:
// - calibration against a preempted call: one sampled evaluate call that reads far too long (the
//   machine took the core away mid-call, here reported 10 s too long) must not inflate every
//   rule's cost;
// - attribution: what removing a rule saves (`loo`) leaves out a costly operand another rule of
//   its group computes anyway (memoised per event), while a rule with an equally costly operand
//   of its own saves it;
// - attribution of shared work: under `use`, the shared operand is split among the rules that use
//   it; under `loo`, counted apart for the group;
// - spoiled profiles: a group's first profile runs code V8 has not optimised yet (measured on the
//   stable rules: the first rule's samples read -370 to +1,650 ns for a rule saving 20 to 30) and
//   is replaced by its first warm one; a warm profile the machine spoiled is outvoted by the median of the group's
//   first 9 warm ones. Modelled by clocks that read the runs without one rule a tenth as long;
// - cold first calls: the first evaluate calls of a new module read 8 to 20 times a warm one;
//   nothing is costed before the calibration holds 8 ratios (but at a read for figures), so they do not scale
//   the costs;
// - profiles' schedule and their time: a group is profiled at its first sampled call, at its next
//   9 turns, then once in 256 sampled calls (once in 64, they cost about 6 % of the rule-cost
//   bench's evaluation time, in bursts); one sampled call carries at most its budget of profiles,
//   a profile going on over several calls if need be, at least one pair of runs in each (a new
//   module's first sampled calls profiled every group at once: tens of ms on one batch; then one
//   group's whole profile at once: 15 to 80 ms on a batch while a compile ran);
//   the tally accounts all of their time (the bench adds it to counting's steady cost);
// - sampling: calls are sampled at random gaps of 1 to 31 (mean 16), so no phase of a caller's
//   pattern (the rule-cost bench's turns of 16 batches, whose first call is cold) is always the
//   sampled one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evtTypeId, MEM } from '../../host/abi/module.js';
import { loadRules, RuleStats } from '../../host/engine/index.js';
import { RuleCompiler } from '../../host/runtime/compiler.js';
import { BatchEncoder } from '../../host/runtime/encode.js';
import { ModuleTally } from '../../host/runtime/rule-tally.js';
import { cpuSeconds, Recent } from '../../host/runtime/tally-clock.js';
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
  // no build deadline: on a loaded machine the build may take minutes (a deadline would race the machine's load)
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
  const tally = new ModuleTally(memory, instance.exports, g, stats, { sampleEvery: 1 });
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

test('rule tally: a rule saves what removing it saves (`loo`: an operand its group computes anyway is not its saving)', async () => {
  const { g, instance, memory, evaluate } = await instantiate();
  const events = readReplayInput(SHARED_EVENTS, 'fields').events;
  const enc = new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys).encode(memory, events, 0, events.length);
  assert.is(enc.count, 16);
  // Each trial is a fresh tally, whose first sampled call profiles the group; the median over
  // trials leaves out a trial the machine preempted. Alone, each rule would cost one scan.
  const ratios: number[] = [];
  for (let trial = 0; trial < 9; trial++) {
    const stats = new RuleStats();
    const tally = new ModuleTally(memory, instance.exports, g, stats, { sampleEvery: 1 });
    for (let call = 0; call < 4; call++) {
      tally.beforeCall(true);
      const t0 = cpuSeconds();
      assert.is(evaluate(0, MEM.batchBase, enc.count, 1, MEM.outBase, MEM.outSize / 8), 0);
      tally.afterSampledCall(0, MEM.batchBase, enc.count, cpuSeconds() - t0);
    }
    // the figures (`use`) give each shared rule half the scan they share; removing one saves none of it
    const cost = Object.fromEntries(tally.attributed().costs.loo);
    // a trial whose own rule read 0 (a timing below the clock's resolution) counts as a failed one
    ratios.push(cost.Own! > 0 ? Math.max(cost['Shared a']!, cost['Shared b']!) / cost.Own! : Number.POSITIVE_INFINITY);
  }
  ratios.sort((x, y) => x - y);
  // removing either shared rule saves its needle test, not the scan (the other rule still does it): far below one scan
  assert.ok(ratios[4]! < 0.3, `shared rule's cost / own rule's cost, per trial: ${ratios.map((r) => r.toFixed(3)).join(', ')}`);
});

/** The clocks as they are (the tally reads process.cpuUsage and performance.now; the skewed-run tests shift both). */
const realCpuUsage = process.cpuUsage.bind(process);
const realNow = performance.now.bind(performance);

/**
 * The module's exports with `profile` wrapped so that the runs `skew(profile, slot, skip)` names
 * read that many times their length on both clocks the tally reads, as a run that cold code or
 * the machine spoiled would; `profile` counts the tally's profiles from 1 (each begins with the
 * baseline's empty call, slot -1 over 0 records). `restore` puts the clocks back.
 */
function skewedRuns(exports: WebAssembly.Exports, skew: (profile: number, slot: number, skip: number) => number): { exports: WebAssembly.Exports; restore(): void } {
  const profileFn = exports.profile as (slot: number, skip: number, first: number, rec: number, stride: number, idx: number, m: number) => number;
  let extraUs = 0;
  let profile = 0;
  let lastSlot = 0;
  const wrapped = (slot: number, skip: number, first: number, rec: number, stride: number, idx: number, m: number): number => {
    if (slot === -1 && m === 0 && lastSlot !== -1) profile++;
    lastSlot = slot;
    const f = skew(profile, slot, skip);
    const t0 = realNow();
    const r = profileFn(slot, skip, first, rec, stride, idx, m);
    extraUs += (f - 1) * (realNow() - t0) * 1000;
    return r;
  };
  process.cpuUsage = (prev?: NodeJS.CpuUsage) => {
    const u = realCpuUsage();
    return { user: u.user + Math.round(extraUs) - (prev?.user ?? 0), system: u.system - (prev?.system ?? 0) };
  };
  performance.now = () => realNow() + extraUs / 1000;
  return {
    exports: { ...exports, profile: wrapped },
    restore() {
      process.cpuUsage = realCpuUsage;
      performance.now = realNow;
    },
  };
}

/**
 * Shared a's and Own's savings (`loo`), the figures' total and every attribution in a fresh tally after `calls` sampled calls over SHARED_EVENTS (`seconds`:
 * what the evaluator reports for sampled call i); with `spoiled` (a profile's number), the runs
 * without Shared a in that profile read a tenth of their length, so that its leave-one-out
 * samples there read nearly the whole group's time, many times what it saves.
 */
async function sharedCost(calls: number, spoiled?: number, seconds = (_i: number, s: number) => s): Promise<{ shared: number; own: number; total: number; attributed: ReturnType<ModuleTally['attributed']> }> {
  const { g, instance, memory, evaluate } = await instantiate();
  const events = readReplayInput(SHARED_EVENTS, 'fields').events;
  const enc = new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys).encode(memory, events, 0, events.length);
  const group = g.countSlots.find((s) => s.slot === evtTypeId('openat'))!;
  const shared = group.rules.findIndex((id) => g.rules[id]!.name === 'Shared a');
  const skewed = skewedRuns(instance.exports, (profile, slot, skip) => (profile === spoiled && slot === group.slot && skip === shared ? 0.1 : 1));
  const stats = new RuleStats();
  const tally = new ModuleTally(memory, skewed.exports, g, stats, { sampleEvery: 1 });
  try {
    for (let call = 0; call < calls; call++) {
      tally.beforeCall(true);
      const t0 = realNow();
      evaluate(0, MEM.batchBase, enc.count, 1, MEM.outBase, MEM.outSize / 8);
      tally.afterSampledCall(0, MEM.batchBase, enc.count, seconds(call, (realNow() - t0) / 1000));
    }
  } finally {
    skewed.restore();
  }
  const figures = stats.figures();
  const attributed = tally.attributed();
  // what removing each saves (`loo`): the figures give Shared a half the scan it shares with Shared b
  const cost = (rule: string) => attributed.costs.loo.get(rule)!;
  return { shared: cost('Shared a'), own: cost('Own'), total: figures.reduce((s, f) => s + f.costSeconds, 0), attributed };
}

/**
 * Shared a's cost over Own's in each of 7 trials of a spoiled run, sorted: Shared a saves its
 * needle test (far below one scan: the shared-operand test above), Own a scan; spoiled, Shared a
 * reads nearly the whole group's time, two scans. The median leaves out a preempted trial.
 */
async function sharedOverOwn(spoiled: number): Promise<number[]> {
  const ratios: number[] = [];
  for (let trial = 0; trial < 7; trial++) {
    const c = await sharedCost(40, spoiled);
    ratios.push(c.own > 0 ? c.shared / c.own : Number.POSITIVE_INFINITY);
  }
  return ratios.sort((x, y) => x - y);
}

test('rule tally: the work a group shares is split among the rules that use it (`use`), or counted apart for the group (`loo`), not charged to the rule that saves most removed', async () => {
  // Shared a and Shared b each save their needle test removed alone; the scan of proc.cmdline
  // they share is saved only by removing both. Own's scan of fd.name is its own. So the two
  // shared rules together cost one scan under `use`, as Own does, and under `loo` the openat
  // group's shared work is one scan. Split in proportion to leave-one-out rates (`rates`), Own,
  // which saves most removed, is charged the shared scan too: the two read about 0 against it.
  const use: number[] = [];
  const apart: number[] = [];
  for (let trial = 0; trial < 7; trial++) {
    const { costs, shared } = (await sharedCost(40)).attributed;
    const own = costs.use.get('Own')!;
    use.push(own > 0 ? (costs.use.get('Shared a')! + costs.use.get('Shared b')!) / own : Number.POSITIVE_INFINITY);
    const ownAlone = costs.loo.get('Own')!;
    apart.push(ownAlone > 0 ? shared.get('openat')! / ownAlone : Number.POSITIVE_INFINITY);
  }
  use.sort((x, y) => x - y);
  apart.sort((x, y) => x - y);
  const show = (xs: number[]) => xs.map((r) => r.toFixed(3)).join(', ');
  assert.ok(use[3]! > 0.5 && use[3]! < 2, `use: (Shared a + Shared b) / Own, per trial: ${show(use)}`);
  assert.ok(apart[3]! > 0.5 && apart[3]! < 2, `loo: the openat group's shared work / Own, per trial: ${show(apart)}`);
});

test("rule tally: a rule whose runs read wrong in its group's first profile (cold code) is not charged for it (the first profile is discarded)", async () => {
  const ratios = await sharedOverOwn(1);
  // charged for the spoiled runs, Shared a would cost about twice Own
  assert.ok(ratios[3]! < 0.5, `Shared a's cost / Own's with a spoiled first profile, per trial: ${ratios.map((r) => r.toFixed(3)).join(', ')}`);
});

test("rule tally: one spoiled warm profile does not set a rule's rate (the median of the group's first 9 warm profiles)", async () => {
  // on c7afe92 the group's second profile replaced its first and was the only one for 256 sampled calls
  const ratios = await sharedOverOwn(2);
  assert.ok(ratios[3]! < 0.5, `Shared a's cost / Own's with its first warm profile spoiled, per trial: ${ratios.map((r) => r.toFixed(3)).join(', ')}`);
});

test('rule tally: the first sampled calls, run cold, do not scale the costs (nothing is costed before the calibration holds 8 ratios)', async () => {
  // the first 3 evaluate calls read 20 times their time, as the cold first calls of a new module
  // measured (8 to 20 times); on c7afe92 the scale was the median of so few ratios, and every cost
  // charged meanwhile carried it (about 3.6 times the clean total over 40 calls)
  const ratios: number[] = [];
  for (let trial = 0; trial < 7; trial++) {
    const cold = await sharedCost(40, undefined, (i, s) => (i < 3 ? 20 * s : s));
    const clean = await sharedCost(40);
    ratios.push(clean.total > 0 ? cold.total / clean.total : Number.POSITIVE_INFINITY);
  }
  ratios.sort((x, y) => x - y);
  assert.ok(ratios[3]! < 1.8, `all rules' cost with 3 cold first calls / without, per trial: ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
});

/**
 * The module's exports with `profile` watched: the group slots each profile ran (slot -1 is the
 * baseline loop) and how many runs, each run made to read `extraUs` longer on both clocks the
 * tally reads. `restore` puts the clocks back.
 */
function watchedRuns(exports: WebAssembly.Exports, extraUs: number) {
  const profileFn = exports.profile as (slot: number, skip: number, first: number, rec: number, stride: number, idx: number, m: number) => number;
  let added = 0;
  const seen = { slots: new Set<number>(), runs: 0, groupRuns: 0 };
  const wrapped = (slot: number, skip: number, first: number, rec: number, stride: number, idx: number, m: number): number => {
    if (slot !== -1) {
      seen.slots.add(slot);
      seen.groupRuns++;
    }
    seen.runs++;
    added += extraUs;
    return profileFn(slot, skip, first, rec, stride, idx, m);
  };
  process.cpuUsage = (prev?: NodeJS.CpuUsage) => {
    const u = realCpuUsage();
    return { user: u.user + added - (prev?.user ?? 0), system: u.system - (prev?.system ?? 0) };
  };
  performance.now = () => realNow() + added / 1000;
  return {
    exports: { ...exports, profile: wrapped },
    seen,
    restore() {
      process.cpuUsage = realCpuUsage;
      performance.now = realNow;
    },
  };
}

/** The figures fixture's syscall events, encoded, with a tally over a watched `profile` (every call sampled); `groups`: the slots of the groups they reach (connect has no rule). */
async function watchedTally(extraUs: number, profileBudget?: number, holdProfiles?: () => boolean) {
  const { g, instance, memory, evaluate } = await instantiate();
  const events = readReplayInput(FIGURE_EVENTS, 'fields').events.filter((e) => e.source === 'syscall');
  const enc = new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys).encode(memory, events, 0, events.length);
  const watched = watchedRuns(instance.exports, extraUs);
  const tally = new ModuleTally(memory, watched.exports, g, new RuleStats(), { sampleEvery: 1, holdProfiles, ...(profileBudget === undefined ? {} : { profileBudget }) });
  /** One sampled call; returns the group slots it profiled. */
  const call = (): number[] => {
    tally.beforeCall(true);
    evaluate(0, MEM.batchBase, enc.count, 1, MEM.outBase, MEM.outSize / 8);
    watched.seen.slots.clear();
    watched.seen.groupRuns = 0;
    tally.afterSampledCall(0, MEM.batchBase, enc.count, 1e-3);
    return [...watched.seen.slots];
  };
  const groups = ['open', 'openat', 'execve'].map(evtTypeId);
  /** Rules of each group (by slot): a whole profile is PROFILE_RUNS (3) pairs per rule. */
  const rulesOf = new Map(groups.map((s) => [s, g.countSlots.find((c) => c.slot === s)!.rules.length]));
  return { tally, call, seen: watched.seen, restore: watched.restore, groups, rulesOf };
}

test('rule tally: one sampled call carries at most its budget of profiles (a profile goes on over the next calls, one pair of runs at least in each); a group is profiled cold, then at its next 9 turns (warm), then once in 256 sampled calls', async () => {
  const w = await watchedTally(0, 0);
  const byGroup = new Map<number, number[]>();
  try {
    for (let call = 0; call < 1200; call++) {
      const slots = w.call();
      // budget 0: one step (whole, without a rule, the rule alone) of the first group due, after
      // its untimed run over this call's events (and, once per group, the runs that compile its
      // two loops); a new module's first call profiled every group it reached, then one group's
      // whole profile
      assert.ok(slots.length <= 1, `call ${call} profiled groups ${slots.join(', ')}`);
      assert.ok(w.seen.groupRuns <= 6, `call ${call} ran its group ${w.seen.groupRuns} times`);
      for (const s of slots) byGroup.set(s, [...(byGroup.get(s) ?? []), call]);
    }
  } finally {
    w.restore();
  }
  assert.equal([...byGroup.keys()].sort(), [...w.groups].sort(), 'every syscall group of the replay is profiled');
  const pairs = (slot: number) => 3 * w.rulesOf.get(slot)!;
  // the groups take turns (one whole profile each) through their cold and 9 warm profiles
  const warmUp = 10 * w.groups.reduce((s, slot) => s + pairs(slot), 0);
  for (const [slot, calls] of byGroup) {
    // the calls of one profile are consecutive (a profile under way goes first), 3 pairs per rule
    const profiles: number[][] = [];
    for (const c of calls) {
      const last = profiles.at(-1);
      if (last && last.length < pairs(slot) && c === last.at(-1)! + 1) last.push(c);
      else profiles.push([c]);
    }
    const shape = `group ${slot} (${w.rulesOf.get(slot)} rules) profiled at calls ${calls.join(', ')}`;
    for (const p of profiles.slice(0, -1)) assert.is(p.length, pairs(slot), shape);
    assert.ok(profiles.length >= 12 && profiles[9]!.at(-1)! < warmUp, shape);
    // after the warm ones, a profile is due 256 sampled calls after the last one ended, and
    // starts then or once the profile under way then has ended
    const longest = Math.max(...w.groups.map(pairs));
    for (let i = 10; i < profiles.length; i++) {
      const gap = profiles[i]![0]! - profiles[i - 1]!.at(-1)!;
      assert.ok(gap >= 256 && gap <= 256 + longest, `${shape}: a gap of ${gap}`);
    }
  }
});

test("rule tally: unbounded (every call sampled, `rae profile`), a call profiles every group it reached; a profile's time covers all its runs", async () => {
  // each run of the profile loop reads 1 ms longer: profileSeconds must hold at least 1 ms per run
  // (timed on the per-run watch, restarted inside the profile, it held about the last run's)
  const w = await watchedTally(1000);
  try {
    const slots = w.call();
    assert.equal(slots.sort(), [...w.groups].sort(), 'the first sampled call profiled every group');
    assert.ok(w.seen.runs > 10, `${w.seen.runs} runs`);
    assert.ok(w.tally.profileSeconds >= w.seen.runs * 1e-3, `profileSeconds ${w.tally.profileSeconds} s for ${w.seen.runs} runs of 1 ms or more`);
  } finally {
    w.restore();
  }
});

test('rule tally: while the compile worker builds (holdProfiles), sampled calls profile nothing; the profiles due run once it is done', async () => {
  let building = true;
  const w = await watchedTally(0, undefined, () => building);
  try {
    for (let call = 0; call < 40; call++) assert.equal(w.call(), [], `call ${call} profiled while the worker built`);
    assert.is(w.seen.runs, 0, 'no profile run while the worker built');
    assert.is(w.tally.profileSeconds, 0);
    building = false;
    assert.equal(w.call().sort(), [...w.groups].sort(), 'the first sampled call after the build profiled every group it reached');
  } finally {
    w.restore();
  }
});

/** The calls beforeCall samples among `calls`, with sampleEvery 16 and the random source given. */
async function sampledCalls(calls: number, random: () => number): Promise<number[]> {
  const { g, instance, memory } = await instantiate();
  const tally = new ModuleTally(memory, instance.exports, g, new RuleStats(), { sampleEvery: 16, random });
  const sampled: number[] = [];
  for (let call = 0; call < calls; call++) if (tally.beforeCall(true)) sampled.push(call);
  return sampled;
}

test('rule tally: calls are sampled at random gaps of 1 to 31 calls, mean 16 (a fixed period samples one phase of whatever repeats in the caller)', async () => {
  // a seeded source (an LCG): the same gaps every run
  let state = 12345;
  const seeded = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 4294967296;
  };
  const sampled = await sampledCalls(32000, seeded);
  const gaps = sampled.slice(1).map((c, i) => c - sampled[i]!);
  assert.ok(Math.min(...gaps) >= 1 && Math.max(...gaps) <= 31, `gaps ${Math.min(...gaps)} to ${Math.max(...gaps)}`);
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  assert.ok(Math.abs(mean - 16) < 0.5, `mean gap ${mean}`);
  // every gap of 1 to 31 occurs (with a fixed period of 16 only 16 would)
  assert.is(new Set(gaps).size, 31);
  // a sampled call falls at every phase of a turn of 16 calls (the rule-cost bench's turns): with a fixed period, at one
  const phases = new Set(sampled.map((c) => c % 16));
  assert.is(phases.size, 16);
  // the extremes of the source: gaps of 1 and of 31; the first sampled call too is at a gap (0.5: the 16th call)
  assert.equal((await sampledCalls(5, () => 0)).length, 5);
  assert.equal(await sampledCalls(100, () => 0.999999), [30, 61, 92]);
  assert.equal(await sampledCalls(50, () => 0.5), [15, 31, 47]);
});

test('rule tally: a median of recent samples is that of the last `size` values (kept in order by insertion, the oldest out)', () => {
  const r = new Recent(3);
  assert.is(r.median, undefined);
  const medians: Array<number | undefined> = [];
  // a seeded series with repeats: every median against one computed from scratch
  let state = 7;
  const xs: number[] = [];
  for (let i = 0; i < 200; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const x = state % 5;
    xs.push(x);
    r.add(x);
    const last = xs.slice(-3).sort((a, b) => a - b);
    assert.is(r.median, last.length === 2 ? (last[0]! + last[1]!) / 2 : last[last.length >> 1], `after ${xs.slice(-3).join(', ')}`);
    medians.push(r.median);
  }
  assert.ok(new Set(medians).size > 2, 'the series moves the median');
  assert.is(r.count, 3);
  r.add(Number.NaN);
  r.add(1);
  r.add(1);
  r.add(1);
  assert.is(r.median, 1, 'a NaN leaves with its turn');
  r.clear();
  r.add(4);
  assert.is(r.median, 4);
});

test.run();
