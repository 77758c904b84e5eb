// Per-rule figures (issue 28, item 1) on both engines: on a replay of known content, every rule's
// evaluations (events that reached it after the event-type index, and, under rule matching
// `first`, not stopped by an earlier rule's match) and matches are exact; costs are measured
// (never negative, some above 0); a rule removed by a reload keeps its figures.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RuleFigure } from '../../host/engine/index.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { EXPECTED_FIGURES, FIGURE_EVENTS, FIGURE_RULES } from './rule-figures-fixture.js';

const byRule = (figures: readonly RuleFigure[]) => Object.fromEntries(figures.map((f) => [f.rule, [f.evaluations, f.matches]]));

for (const engineKind of ['wasm', 'interpreter'] as const) {
  for (const ruleMatching of ['first', 'all'] as const) {
    test(`rule figures (${engineKind}, ${ruleMatching}): exact evaluations and matches over two batches; a cost measured`, async () => {
      const engine = new DetectionEngine({ ruleMatching, minPriority: 'Debug', hostname: 'h', engine: engineKind, onAlert: () => undefined });
      try {
        const loaded = await engine.load([{ name: 'figures.yaml', text: FIGURE_RULES }]);
        assert.ok(loaded.swapped, JSON.stringify(loaded.errors ?? loaded.result.diagnostics));
        const events = readReplayInput(FIGURE_EVENTS, 'fields').events;
        assert.is(events.length, 19);
        // two batches: the figures add up
        engine.evaluate(events.slice(0, 9));
        engine.evaluate(events.slice(9));
        assert.equal(byRule(engine.ruleFigures), EXPECTED_FIGURES[ruleMatching]);
        // the compiled tier samples calls at random gaps of at most 31 calls (rule-tally.ts), each
        // sampled call profiling at least one group: 300 more replays (600 calls) hold a dozen
        for (let k = 0; k < 300; k++) engine.evaluate(events);
        // a cost is measured: finite, never negative (a rule cheaper than the timer's noise may read 0), some in all
        for (const f of engine.ruleFigures) assert.ok(f.costSeconds >= 0 && f.costSeconds < 1, `${f.rule}: cost ${f.costSeconds} s`);
        assert.ok(engine.ruleFigures.reduce((s, f) => s + f.costSeconds, 0) > 0, 'some cost');
      } finally {
        await engine.close();
      }
    });
  }
}

test('rule figures: a rule removed by a reload keeps its figures; the rules still loaded count on', async () => {
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', onAlert: () => undefined });
  try {
    assert.ok((await engine.load([{ name: 'figures.yaml', text: FIGURE_RULES }])).swapped);
    const events = readReplayInput(FIGURE_EVENTS, 'fields').events;
    engine.evaluate(events);
    const without = FIGURE_RULES.replace(/- rule: Shell exec[\s\S]*?priority: NOTICE\n/, '');
    assert.ok((await engine.load([{ name: 'figures.yaml', text: without }])).swapped);
    engine.evaluate(events);
    const f = byRule(engine.ruleFigures);
    assert.equal(f['Shell exec'], [5, 4]);
    assert.equal(f['Cat opens'], [12, 10]);
  } finally {
    await engine.close();
  }
});

test('rule figures: ruleCounters false counts nothing', async () => {
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', ruleCounters: false, onAlert: () => undefined });
  try {
    assert.ok((await engine.load([{ name: 'figures.yaml', text: FIGURE_RULES }])).swapped);
    assert.is(engine.evaluate(readReplayInput(FIGURE_EVENTS, 'fields').events), 16);
    assert.equal(engine.ruleFigures, []);
  } finally {
    await engine.close();
  }
});

test.run();
