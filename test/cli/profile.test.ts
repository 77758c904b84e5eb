// `rae profile` and the rule figures on /metrics (issue 28, item 1): on a replay of known content,
// the command prints every rule's exact evaluations and matches on both engines, ranked by a
// measured cost; a running engine's forwarder exports the same figures on /metrics, and `rae
// profile --url` reads them from there.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startServer } from '../../host/forwarder/server.js';
import { createMetrics } from '../../host/metrics/index.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { EXPECTED_FIGURES, FIGURE_EVENTS, FIGURE_RULES } from '../runtime/rule-figures-fixture.js';

const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'rae-profile-'));
const rulesFile = join(tmp, 'figures.yaml');
const eventsFile = join(tmp, 'events.jsonl');
writeFileSync(rulesFile, FIGURE_RULES);
writeFileSync(eventsFile, FIGURE_EVENTS);

interface Row {
  rule: string;
  source: string;
  evaluations: number;
  matches: number;
  cost_seconds: number;
  cost_share: number;
}

const rae = async (...args: string[]) => run(process.execPath, ['bin/rae.js', ...args], { encoding: 'utf8', timeout: 600_000 });
const counts = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.rule, [r.evaluations, r.matches]]));

/**
 * Rows are ranked by cost; costs are never negative (a rule cheaper than the timer's noise may
 * read 0); shares add up to 1, or are all 0 when every cost read 0. A replay this small is one
 * evaluate call, and each rule's cost is a timing less the loop's own: on a loaded machine the
 * loop's timing can exceed every rule's, so all of them read 0 (rule-tally.ts).
 */
function assertRanked(rows: Row[]): void {
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1]!.cost_seconds >= rows[i]!.cost_seconds, 'ranked by cost');
  for (const r of rows) assert.ok(Number.isFinite(r.cost_seconds) && r.cost_seconds >= 0, `${r.rule}: cost ${r.cost_seconds}`);
  const shares = rows.reduce((s, r) => s + r.cost_share, 0);
  if (rows.some((r) => r.cost_seconds > 0)) assert.ok(Math.abs(shares - 1) < 1e-9, `shares add up to ${shares}`);
  else assert.equal(shares, 0, 'no cost measured: every share 0');
}

for (const engine of ['wasm', 'interpreter'] as const) {
  for (const matching of ['first', 'all'] as const) {
    test(`rae profile (${engine}, ${matching}): exact evaluations and matches of a known replay, ranked by cost`, async () => {
      const { stdout } = await rae('profile', '-r', rulesFile, '--input', eventsFile, '--engine', engine, '--rule-matching', matching, '--json');
      const rows = JSON.parse(stdout) as Row[];
      assert.equal(counts(rows), EXPECTED_FIGURES[matching]);
      assertRanked(rows);
    });
  }
}

test('rae profile: the table names every rule with its evaluations and matches', async () => {
  const { stdout } = await rae('profile', '-r', rulesFile, '--input', eventsFile, '--engine', 'interpreter');
  const lines = stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^share\s+cost\s+evaluations\s+matches\s+per eval\s+source\s+rule$/);
  for (const [rule, [evals, matches]] of Object.entries(EXPECTED_FIGURES.first)) {
    assert.ok(
      lines.some((l) => new RegExp(`\\s${evals}\\s+${matches}\\s.*\\s${rule}$`).test(l)),
      `${rule} ${evals} ${matches} in\n${stdout}`,
    );
  }
});

test('/metrics of a running engine: enginesecurity_engine_rule_* per rule and source; rae profile --url reads them', async () => {
  const metrics = createMetrics({ processMetrics: false });
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', metrics, onAlert: () => undefined });
  const srv = await startServer({ metrics, accept: () => {}, hostname: 'h', log: () => {} }, '127.0.0.1', 0);
  try {
    assert.ok((await engine.load([{ name: 'figures.yaml', text: FIGURE_RULES }])).swapped);
    engine.evaluate(readReplayInput(FIGURE_EVENTS, 'fields').events);
    const body = await (await fetch(`${srv.url}/metrics`)).text();
    assert.ok(body.includes('enginesecurity_engine_rule_evaluations_total{rule="Cat opens",source="syscall"} 3\n'), body);
    assert.ok(body.includes('enginesecurity_engine_rule_matches_total{rule="Audit create",source="k8s_audit"} 3\n'), body);
    assert.match(body, /enginesecurity_engine_rule_cost_seconds_total\{rule="Shadow read",source="syscall"\} \d/);
    // 300 more replays: the counters grow by what they added; the compiled tier samples calls at
    // random gaps of at most 31 calls (rule-tally.ts), so their 600 calls hold a dozen sampled ones, which cost the rules
    for (let k = 0; k < 300; k++) engine.evaluate(readReplayInput(FIGURE_EVENTS, 'fields').events);
    const { stdout } = await rae('profile', '--url', srv.url, '--json');
    const times301 = Object.fromEntries(Object.entries(EXPECTED_FIGURES.first).map(([r, [e, m]]) => [r, [301 * e, 301 * m]]));
    const rows = JSON.parse(stdout) as Row[];
    assert.equal(counts(rows), times301);
    assertRanked(rows);
  } finally {
    await srv.close();
    await engine.close();
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
