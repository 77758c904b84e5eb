// Per-rule figures (issue 28, item 1) on both engines: on a replay of known content, every rule's
// evaluations (events that reached it after the event-type index, and, under rule matching
// `first`, not stopped by an earlier rule's match) and matches are exact; a rule that did any
// work has a measured cost; a rule removed by a reload keeps its figures.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RuleFigure } from '../../host/engine/index.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';

export const FIGURE_RULES = `
- rule: Shadow read
  desc: t
  condition: evt.type in (open, openat) and fd.name = /etc/shadow
  output: shadow (proc=%proc.name)
  priority: WARNING
- rule: Cat opens
  desc: t
  condition: evt.type = openat and proc.name = cat
  output: cat (file=%fd.name)
  priority: NOTICE
- rule: Shell exec
  desc: t
  condition: evt.type = execve and proc.name = sh
  output: sh (proc=%proc.name)
  priority: NOTICE
- rule: Audit create
  desc: t
  condition: ka.verb = create
  output: create (verb=%ka.verb)
  priority: NOTICE
  source: k8s_audit
`;

const line = (source: string, fields: Record<string, unknown>) => JSON.stringify({ source, time: '2026-01-02T03:04:05Z', fields });
const times = (n: number, s: string) => Array.from({ length: n }, () => s);

/** The replay: 6 openat (3 of /etc/shadow by cat, 2 other files by cat, 1 by ls), 1 open of /etc/shadow, 5 execve (4 by sh), 2 connect, 5 audit events (3 create). */
export const FIGURE_EVENTS = [
  ...times(3, line('syscall', { 'evt.type': 'openat', 'fd.name': '/etc/shadow', 'proc.name': 'cat' })),
  ...times(2, line('syscall', { 'evt.type': 'openat', 'fd.name': '/tmp/x', 'proc.name': 'cat' })),
  line('syscall', { 'evt.type': 'openat', 'fd.name': '/tmp/y', 'proc.name': 'ls' }),
  line('syscall', { 'evt.type': 'open', 'fd.name': '/etc/shadow', 'proc.name': 'vi' }),
  ...times(4, line('syscall', { 'evt.type': 'execve', 'proc.name': 'sh' })),
  line('syscall', { 'evt.type': 'execve', 'proc.name': 'bash' }),
  ...times(2, line('syscall', { 'evt.type': 'connect', 'proc.name': 'curl' })),
  ...times(3, line('k8s_audit', { 'ka.verb': 'create' })),
  ...times(2, line('k8s_audit', { 'ka.verb': 'get' })),
].join('\n');

/** Expected [evaluations, matches] by rule, per rule matching. */
export const EXPECTED_FIGURES = {
  first: { 'Shadow read': [7, 4], 'Cat opens': [3, 2], 'Shell exec': [5, 4], 'Audit create': [5, 3] },
  all: { 'Shadow read': [7, 4], 'Cat opens': [6, 5], 'Shell exec': [5, 4], 'Audit create': [5, 3] },
} as const;

const byRule = (figures: readonly RuleFigure[]) => Object.fromEntries(figures.map((f) => [f.rule, [f.evaluations, f.matches]]));

for (const engineKind of ['wasm', 'interpreter'] as const) {
  for (const ruleMatching of ['first', 'all'] as const) {
    test(`rule figures (${engineKind}, ${ruleMatching}): exact evaluations and matches over two batches; cost measured for every rule that was evaluated`, async () => {
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
        for (const f of engine.ruleFigures) assert.ok(f.costSeconds > 0 && f.costSeconds < 1, `${f.rule}: cost ${f.costSeconds} s`);
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

if (!process.env.NO_RUN) test.run();
