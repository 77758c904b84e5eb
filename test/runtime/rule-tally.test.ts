// The compiled tier's cost calibration (host/runtime/rule-tally.ts) against a preempted call: one
// sampled evaluate call that reads far too long (the machine took the core away mid-call) must
// not inflate every rule's cost. The tally is driven as the evaluator drives it, over a real
// module and real timings, with one call's time reported 10 s too long.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MEM } from '../../host/abi/module.js';
import { loadRules, RuleStats } from '../../host/engine/index.js';
import { RuleCompiler } from '../../host/runtime/compiler.js';
import { BatchEncoder } from '../../host/runtime/encode.js';
import { ModuleTally } from '../../host/runtime/rule-tally.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { FIGURE_EVENTS, FIGURE_RULES } from './rule-figures-fixture.js';

type EvaluateFn = (src: number, rec: number, n: number, first: number, out: number, cap: number) => number;

test('rule tally: a preempted sampled call does not inflate the costs (calibration by median)', async () => {
  const compiler = new RuleCompiler({ counters: true });
  let compiled: Awaited<ReturnType<RuleCompiler['compile']>>;
  try {
    compiled = await compiler.compile(loadRules([{ name: 'figures.yaml', text: FIGURE_RULES }]).ruleset.rules);
  } finally {
    await compiler.close();
  }
  assert.ok(compiled.ok);
  const g = compiled.compiled.generated;
  const instance = new WebAssembly.Instance(compiled.compiled.module, {});
  const memory = instance.exports.memory as WebAssembly.Memory;
  const evaluate = instance.exports.evaluate as EvaluateFn;
  const events = readReplayInput(FIGURE_EVENTS, 'fields').events.filter((e) => e.source === 'syscall');
  const enc = new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys).encode(memory, events, 0, events.length);
  const stats = new RuleStats();
  const tally = new ModuleTally(memory, instance.exports, g, stats, 1);
  let wall = 0;
  for (let call = 0; call < 200; call++) {
    assert.ok(tally.beforeCall(true), 'every call is sampled (sampleEvery 1)');
    const t0 = performance.now();
    evaluate(0, MEM.batchBase, enc.count, 1, MEM.outBase, MEM.outSize / 8);
    const seconds = (performance.now() - t0) / 1000;
    wall += seconds;
    // call 100: the machine preempted it, it reads 10 s too long
    tally.afterSampledCall(0, MEM.batchBase, enc.count, call === 100 ? seconds + 10 : seconds);
  }
  const cost = stats.figures().reduce((s, f) => s + f.costSeconds, 0);
  assert.ok(cost > 0, 'some cost');
  // the rules' cost is part of the calls' real time; a scale summed over the calls would put the 10 s on the rules
  assert.ok(cost < wall + 5, `rules' cost ${cost} s for ${wall} s of evaluate calls`);
});

test.run();
