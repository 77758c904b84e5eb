// Output aggregation through the real fan-out (stdout destination on a stream, real metrics),
// its windows' end driven by a hand-advanced clock: the first alert of a key passes, repeats are
// held and counted, one summary leaves at the window's end (or at close), keys are not merged,
// off by default, per-rule entries by name and glob, the cap on keys, and config checks.
import { PassThrough } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultConfig, configFromYaml } from '../../host/config/config.js';
import { createMetrics } from '../../host/metrics/index.js';
import type { AggregationClock } from '../../host/output/aggregate.js';
import type { Alert } from '../../host/output/alert.js';
import { resolveAggregation, type AggregationConfig } from '../../host/output/config.js';
import { startFanout } from '../../host/output/fanout.js';
import { metricLines } from '../forwarder/helpers.js';

const T0 = 1_704_196_800_000_000_000n;

function alert(i: number, fields: Alert['outputFields'] = {}, rule = 'Noisy rule'): Alert {
  return {
    timeNs: T0 + BigInt(i) * 1_000_000n,
    rule,
    priority: 'Warning',
    source: 'syscall',
    tags: ['t1'],
    hostname: 'h1',
    message: `noisy ${JSON.stringify(fields)}`,
    outputFields: { 'container.id': 'c1', 'proc.cmdline': 'sh -c x', ...fields },
  };
}

/** A clock that moves only when told; due timers run in deadline order inside advance(). */
function handClock(): AggregationClock & { advance(ms: number): void } {
  let t = 0;
  const timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  return {
    now: () => t,
    schedule(fn, ms) {
      const e = { at: t + ms, fn, live: true };
      timers.push(e);
      return () => {
        e.live = false;
      };
    },
    advance(ms) {
      t += ms;
      for (;;) {
        const due = timers.filter((e) => e.live && e.at <= t).sort((a, b) => a.at - b.at)[0];
        if (!due) return;
        due.live = false;
        due.fn();
      }
    },
  };
}

async function fanoutWith(aggregation: Partial<AggregationConfig>) {
  const config = defaultConfig({}).forwarder;
  config.aggregation = { ...config.aggregation, ...aggregation };
  const metrics = createMetrics({ processMetrics: false });
  const clock = handClock();
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const fanout = await startFanout({ config, metrics, log: () => {}, hostname: 'h1', stdout: out, env: {}, aggregationClock: clock });
  const metric = async (name: string) => metricLines((await metrics.exposition()).body, name);
  /** Closes the fan-out (which drains stdout) and returns every line written. */
  const closeAndRead = async () => {
    await fanout.close();
    return text
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l));
  };
  return { fanout, clock, metric, closeAndRead };
}

test('1,000 identical alerts in one window: one alert, then one summary with count 999; the detection counter reads 1,000', async () => {
  const f = await fanoutWith({ enabled: true, windowSeconds: 60, key: ['container.id', 'proc.cmdline'] });
  for (let i = 0; i < 1000; i++) f.fanout.submit(alert(i));
  assert.equal(await f.metric('enginesecurity_enginesidekick_engine_events_total'), ['enginesecurity_enginesidekick_engine_events_total{hostname="h1",priority="4",priority_raw="warning",rule="Noisy rule",source="syscall"} 1000']);
  assert.equal(await f.metric('enginesecurity_enginesidekick_aggregation_held_total'), ['enginesecurity_enginesidekick_aggregation_held_total{rule="Noisy rule"} 999']);
  assert.equal(await f.metric('enginesecurity_enginesidekick_aggregation_summaries_total'), [], 'no summary before the window ends');
  f.clock.advance(59_999);
  assert.equal(await f.metric('enginesecurity_enginesidekick_aggregation_summaries_total'), [], 'no summary 1 ms before the window ends');
  f.clock.advance(1);
  assert.equal(await f.metric('enginesecurity_enginesidekick_aggregation_summaries_total'), ['enginesecurity_enginesidekick_aggregation_summaries_total{rule="Noisy rule"} 1']);
  const lines = await f.closeAndRead();
  assert.is(lines.length, 2);
  assert.is(lines[0].output_fields['evt.time'], Number(T0));
  const s = lines[1];
  assert.equal(
    { rule: s.rule, priority: s.priority, source: s.source, tags: s.tags, hostname: s.hostname, time: s.time },
    { rule: 'Noisy rule', priority: 'Warning', source: 'syscall', tags: ['t1'], hostname: 'h1', time: '2024-01-02T12:00:00.999000000Z' },
  );
  assert.equal(s.output_fields, {
    'container.id': 'c1',
    'proc.cmdline': 'sh -c x',
    'aggregation.count': 999,
    'aggregation.first_time': '2024-01-02T12:00:00.001000000Z',
    'aggregation.last_time': '2024-01-02T12:00:00.999000000Z',
    'aggregation.window_seconds': 60,
    'evt.time': Number(T0 + 999_000_000n),
  });
  assert.match(s.output, /Warning 999 more alert\(s\) of this rule held by aggregation from 2024-01-02T12:00:00.001000000Z to 2024-01-02T12:00:00.999000000Z \(window 60s, key container.id=c1 proc.cmdline=sh -c x\); the first was: noisy/);
});

test('different keys are not merged; fields outside the key do not split it; a window that ended lets the key pass again', async () => {
  const f = await fanoutWith({ enabled: true, windowSeconds: 10, key: ['container.id'] });
  for (let i = 0; i < 30; i++) f.fanout.submit(alert(i, { 'container.id': `c${i % 3}`, 'proc.pid': i }));
  f.clock.advance(10_000);
  f.fanout.submit(alert(100, { 'container.id': 'c0' })); // a new window of c0
  f.fanout.submit(alert(101, { 'container.id': 'c0' }));
  const lines = await f.closeAndRead();
  const firsts = lines.filter((l) => l.output_fields['aggregation.count'] === undefined);
  const summaries = lines.filter((l) => l.output_fields['aggregation.count'] !== undefined);
  assert.equal(
    firsts.map((l) => [l.output_fields['container.id'], l.output_fields['proc.pid'] ?? null]),
    [
      ['c0', 0],
      ['c1', 1],
      ['c2', 2],
      ['c0', null],
    ],
  );
  assert.equal(
    summaries.map((l) => [l.output_fields['container.id'], l.output_fields['aggregation.count'], 'proc.pid' in l.output_fields]),
    [
      ['c0', 9, false],
      ['c1', 9, false],
      ['c2', 9, false],
      ['c0', 1, false], // released by close()
    ],
  );
});

test("off by default: every alert passes; the engine's own alerts are not aggregated by the defaults", async () => {
  const off = await fanoutWith({});
  for (let i = 0; i < 10; i++) off.fanout.submit(alert(i));
  assert.is((await off.closeAndRead()).length, 10);
  const on = await fanoutWith({ enabled: true });
  for (let i = 0; i < 5; i++) on.fanout.submit({ ...alert(i), source: 'internal', rule: 'Engine drop' });
  assert.is((await on.closeAndRead()).length, 5);
});

test('per rule: an exact name or a glob turns it on while the default is off, with its own window and key; enabled: false excludes', async () => {
  const f = await fanoutWith({
    rules: {
      'Shell *': { windowSeconds: 5, key: ['proc.cmdline'] },
      'Shell in db': { enabled: false },
      'Read secret': {},
    },
  });
  const sub = (rule: string, n: number) => {
    for (let i = 0; i < n; i++) f.fanout.submit(alert(i, { 'container.id': `c${i}` }, rule));
  };
  sub('Shell in web', 4); // aggregated by proc.cmdline: container ids differ, one key
  sub('Shell in db', 3); // excluded by its exact entry
  sub('Read secret', 3); // default key: every output field, so three keys
  sub('Other', 2); // not named: off
  f.clock.advance(5_000);
  const lines = await f.closeAndRead();
  const by = (rule: string) => lines.filter((l) => l.rule === rule).map((l) => l.output_fields['aggregation.count'] ?? 'alert');
  assert.equal(by('Shell in web'), ['alert', 3]);
  assert.equal(by('Shell in db'), ['alert', 'alert', 'alert']);
  assert.equal(by('Read secret'), ['alert', 'alert', 'alert']);
  assert.equal(by('Other'), ['alert', 'alert']);
});

test('bounded: past maxKeys an alert of a new key passes unaggregated and is counted', async () => {
  const f = await fanoutWith({ enabled: true, key: ['container.id'], maxKeys: 2 });
  for (let i = 0; i < 8; i++) f.fanout.submit(alert(i, { 'container.id': `c${i % 4}` }));
  assert.equal(await f.metric('enginesecurity_enginesidekick_aggregation_key_overflow_total'), ['enginesecurity_enginesidekick_aggregation_key_overflow_total 4']);
  const lines = await f.closeAndRead();
  const ids = (pred: (l: { output_fields: Record<string, unknown> }) => boolean) => lines.filter(pred).map((l) => l.output_fields['container.id']);
  assert.equal(
    ids((l) => l.output_fields['aggregation.count'] === undefined),
    ['c0', 'c1', 'c2', 'c3', 'c2', 'c3'],
  );
  assert.equal(
    ids((l) => l.output_fields['aggregation.count'] === 1),
    ['c0', 'c1'],
  );
});

test('configuration: each wrong aggregation key is reported by name', () => {
  const { config, problems } = configFromYaml('forwarder:\n  aggregation:\n    windowSeconds: 0\n    key: [1]\n    maxKeys: 0\n    rules:\n      "A*": {window: 3}\n      B: [x]\n', {});
  assert.equal(problems, []);
  assert.equal(resolveAggregation(config.forwarder.aggregation).problems, [
    { key: 'forwarder.aggregation.windowSeconds', message: 'expected a number of seconds above 0 and at most 86400, got 0' },
    { key: 'forwarder.aggregation.key', message: 'expected a list of output field names, e.g. [container.id, proc.cmdline]' },
    { key: 'forwarder.aggregation.maxKeys', message: 'expected a whole number above 0, got 0' },
    { key: 'forwarder.aggregation.rules.A*.window', message: 'unknown key (enabled, windowSeconds, key)' },
    { key: 'forwarder.aggregation.rules.B', message: 'expected a mapping of enabled, windowSeconds, key' },
  ]);
});

test.run();
