// Upstream's habits and the pieces of the run table: Go durations for --sleep, the alert counts
// read from the forwarder's /metrics (a real forwarder on port 0, its counter fed by POST /test),
// the table itself; and the incubating and sandbox syscall actions leave the machine as they
// found it (their writes below system directories land in the run's temporary directory).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultConfig } from '../../host/config/config.js';
import { startForwarderWithFanout } from '../../support/forwarder.js';
import { PassThrough } from 'node:stream';
import { alertCountsOf, fetchAlertCounts, firedSince, parseDurationMs, renderTable, ruleOrigin, RunTally, runActions, selectActions } from '../../host/generator/index.js';
import { builtinList } from '../../host/generator/rule-sets.js';
import { createMetrics } from '../../host/metrics/index.js';
import { tempDir } from '../helpers/temp-dir.js';

test('habits: --sleep takes Go durations and whole milliseconds', () => {
  const cases: Array<[string, number | undefined]> = [
    ['100', 100],
    ['0', 0],
    ['100ms', 100],
    ['1s', 1000],
    ['1.5s', 1500],
    ['1m30s', 90_000],
    ['2h', 7_200_000],
    ['250us', 0.25],
    ['500000ns', 0.5],
    ['', undefined],
    ['soon', undefined],
    ['-1s', undefined],
    ['1x', undefined],
    ['1s2', undefined],
    ['1.5', undefined],
  ];
  for (const [text, ms] of cases) assert.is(parseDurationMs(text), ms, text);
});

test('habits: alert counts per rule from the Prometheus text, labels unescaped', () => {
  const text = [
    '# HELP enginesecurity_enginesidekick_engine_events_total Alerts',
    '# TYPE enginesecurity_enginesidekick_engine_events_total counter',
    'enginesecurity_enginesidekick_engine_events_total{hostname="h",priority="4",priority_raw="warning",rule="Write below etc",source="syscall"} 3',
    'enginesecurity_enginesidekick_engine_events_total{hostname="h",priority="5",priority_raw="notice",rule="Write below etc",source="syscall"} 2',
    'enginesecurity_enginesidekick_engine_events_total{hostname="h",priority="4",priority_raw="warning",rule="A \\"quoted\\", \\\\ rule",source="syscall"} 1',
    'enginesecurity_enginesidekick_inputs_total{source="test",status="accepted"} 9',
  ].join('\n');
  const counts = alertCountsOf(text);
  assert.equal(
    [...counts],
    [
      ['Write below etc', 5],
      ['A "quoted", \\ rule', 1],
    ],
  );
  assert.equal([...firedSince(new Map([['Write below etc', 5]]), counts, ['Write below etc', 'A "quoted", \\ rule', 'Other'])], ['A "quoted", \\ rule']);
});

test("habits: the alert counts of a real forwarder's /metrics grow with an alert", async () => {
  const config = defaultConfig({});
  config.forwarder.port = 0;
  const forwarder = await startForwarderWithFanout({ config: config.forwarder, metrics: createMetrics({ processMetrics: false }), log: () => {}, hostname: 'h', stdout: new PassThrough(), env: {} });
  try {
    const url = `${forwarder.url}/metrics`;
    const before = await fetchAlertCounts(url);
    const res = await fetch(`${forwarder.url}/test`, { method: 'POST' });
    assert.is(res.status, 200);
    const after = await fetchAlertCounts(url);
    const grown = [...after].filter(([rule, n]) => n > (before.get(rule) ?? 0)).map(([rule]) => rule);
    assert.is(grown.length, 1, JSON.stringify([...after]));
  } finally {
    await forwarder.close();
  }
  await fetchAlertCounts('http://127.0.0.1:1/metrics').then(
    () => assert.unreachable('read a closed port'),
    (err: Error) => assert.match(err.message, 'cannot read http://127.0.0.1:1/metrics'),
  );
});

test('habits: the run table, rounds, detection and reasons', () => {
  const tally = new RunTally();
  for (let round = 0; round < 2; round++) {
    tally.add({ action: 'syscall.A', source: 'syscall', rule: 'Rule A', maturity: 'stable', status: 'performed' });
    tally.add({ action: 'syscall.B', source: 'syscall', rule: 'Rule B', maturity: 'sandbox', status: 'performed' });
    tally.add({ action: 'syscall.C', source: 'syscall', rule: 'Rule C', maturity: 'incubating', status: 'unavailable', reason: 'needs a container' });
    tally.rounds++;
  }
  tally.add({ action: 'syscall.D', source: 'syscall', rule: 'Rule D', maturity: 'sandbox', status: 'failed', reason: 'boom' });
  assert.is(
    renderTable(tally, { fired: new Set(['Rule A']) }),
    [
      'ACTION     SET         STATUS        DETECTED  RULE / REASON',
      'syscall.A  stable      performed x2  yes       Rule A',
      'syscall.B  sandbox     performed x2  NO        Rule B',
      'syscall.C  incubating  unavailable   -         needs a container',
      'syscall.D  sandbox     FAILED x1     -         boom',
      '4 action(s) in 2 round(s): 2 performed, 1 detected, 1 unavailable, 1 failed',
      '',
    ].join('\n'),
  );
  assert.match(renderTable(tally, { unobservable: 'no forwarder' }), /^syscall\.A +stable +performed x2 +\? +Rule A$/m);
  assert.match(renderTable(tally, { unobservable: 'no forwarder' }), '2 performed, detection unknown (no forwarder), 1 unavailable, 1 failed');
});

test("habits: each rule's set and maturity, read from rules/", () => {
  assert.equal(ruleOrigin('Read sensitive file untrusted'), { maturity: 'stable', set: 'syscall', enabled: true });
  assert.equal(ruleOrigin('Non sudo setuid'), { maturity: 'incubating', set: 'syscall-incubating', enabled: true });
  assert.equal(ruleOrigin('Read Shell Configuration File'), { maturity: 'sandbox', set: 'syscall-sandbox', enabled: false });
  assert.equal(ruleOrigin('Create Privileged Pod'), { maturity: 'stable', set: 'orchestrator-audit', enabled: true });
  assert.is(ruleOrigin('No such rule'), undefined);
  assert.ok(builtinList('miner_domains').includes('ca.minexmr.com'));
  assert.equal(builtinList('no_such_list'), []);
});

/** Paths the actions would write if their overlays leaked onto the machine. */
const WRITTEN = [
  '/etc/created-by-rae-event-generator',
  '/etc/apt/sources.list.d/rae-event-generator.list',
  '/usr/bin/created-by-rae-event-generator',
  '/usr/bin/rae-event-generator',
  '/usr/bin/true.rae-event-generator',
  '/root/created-by-rae-event-generator',
  '/dev/created-by-rae-event-generator',
  '/var/lib/rpm/created-by-rae-event-generator',
  '/boot/created-by-rae-event-generator',
  '/usr/local/bin/created-by-rae-event-generator',
  '/usr/lib/created-by-rae-event-generator',
];
const WATCHED = ['/root/.ssh', '/var/lib/rpm', '/usr/bin/true', '/root/.ssh/authorized_keys', '/root/.ssh/known_hosts'];

test('habits: the incubating and sandbox syscall actions run for real and leave the machine as it was', async () => {
  const root = tempDir('rae-generator-more-');
  const watched = () => WATCHED.map((p) => [p, existsSync(p) ? statSync(p).mtimeMs : null]);
  const before = watched();
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = root;
  let outcomes: Awaited<ReturnType<typeof runActions>>;
  try {
    outcomes = await runActions(
      selectActions(/^syscall\./, { all: true }).filter((a) => !/^syscall\.(ReadSensitiveFileTrustedAfterStartup|DisallowedSsh)/.test(a.name)),
      { sleepMs: 0 },
    );
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  assert.equal(
    outcomes.filter((o) => o.status === 'failed'),
    [],
  );
  assert.ok(outcomes.filter((o) => o.status === 'performed' && o.maturity !== 'stable').length >= 25);
  assert.equal(readdirSync(root), []);
  assert.equal(
    WRITTEN.filter((p) => existsSync(p)),
    [],
  );
  assert.equal(watched(), before);
});

test.run();
