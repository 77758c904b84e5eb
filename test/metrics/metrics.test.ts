// The metrics facade: exposition of the events counter as falcosidekick 2.30 shapes it (under our
// names), every metric of the table exported with valid names, and bounded label values.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PRIORITIES } from '../../host/engine/priority.js';
import { createMetrics, METRICS } from '../../host/metrics/index.js';

function samples(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

test('the /test alert is one series with the five labels, numeric priority and priority_raw', async () => {
  const m = createMetrics({ processMetrics: false });
  m.alert({ hostname: 'node-1', priority: 'Debug', rule: 'Test rule', source: 'internal' });
  const { body, contentType } = await m.exposition();
  assert.match(contentType, /^text\/plain; version=0\.0\.4/);
  assert.equal(samples(body, 'enginesecurity_enginesidekick_engine_events_total'), ['enginesecurity_enginesidekick_engine_events_total{hostname="node-1",priority="1",priority_raw="debug",rule="Test rule",source="internal"} 1']);
});

test('priority label: Debug = 1 ... Emergency = 8; an empty hostname counts as "unknown"', async () => {
  const m = createMetrics({ processMetrics: false });
  for (const p of PRIORITIES) m.alert({ hostname: '', priority: p, rule: 'Test rule', source: 'syscall' });
  const got = samples((await m.exposition()).body, 'enginesecurity_enginesidekick_engine_events_total').map((l) => {
    const [, num, raw] = /priority="(\d)",priority_raw="(\w+)"/.exec(l) ?? [];
    return `${raw}=${num}`;
  });
  assert.equal(got.sort(), ['alert=7', 'critical=6', 'debug=1', 'emergency=8', 'error=5', 'informational=2', 'notice=3', 'warning=4']);
  assert.ok(samples((await m.exposition()).body, 'enginesecurity_enginesidekick_engine_events_total').every((l) => l.includes('hostname="unknown"')));
});

test('rule, hostname and source labels are bounded; loaded rule names always pass; overflow is counted', async () => {
  const m = createMetrics({ processMetrics: false, maxExtraRules: 2, maxHostnames: 1, maxExtraSources: 0 });
  m.knownRules(['Loaded rule']);
  const send = (rule: string, hostname = 'h1', source = 'syscall') => m.alert({ hostname, priority: 'Notice', rule, source });
  for (const r of ['x', 'y', 'z', 'w', 'Loaded rule', 'Test rule']) send(r);
  send('x', 'h2');
  send('x', 'h1', 'aws_cloudtrail');
  const body = (await m.exposition()).body;
  const rules = samples(body, 'enginesecurity_enginesidekick_engine_events_total').map((l) => /rule="([^"]*)"/.exec(l)?.[1]);
  assert.equal([...new Set(rules)].sort(), ['(other)', 'Loaded rule', 'Test rule', 'x', 'y']);
  assert.ok(body.includes('hostname="(other)"'));
  assert.ok(body.includes('source="(other)"'));
  assert.equal(samples(body, 'enginesecurity_enginesidekick_label_overflow_total').sort(), [
    'enginesecurity_enginesidekick_label_overflow_total{label="hostname"} 1',
    'enginesecurity_enginesidekick_label_overflow_total{label="rule"} 2',
    'enginesecurity_enginesidekick_label_overflow_total{label="source"} 1',
  ]);
});

test('every metric of the table is exported with HELP and TYPE, under a valid name', async () => {
  const m = createMetrics({ processMetrics: false });
  const body = (await m.exposition()).body;
  for (const d of Object.values(METRICS)) {
    assert.match(d.name, /^enginesecurity_(engine|enginesidekick)_[a-z_]+$/);
    if (d.type === 'counter') assert.ok(d.name.endsWith('_total'), d.name);
    assert.ok(body.includes(`# HELP ${d.name} ${d.help}`), d.name);
    assert.ok(body.includes(`# TYPE ${d.name} ${d.type}`), d.name);
  }
});

test('engine helpers: received, evaluated, dropped by reason, evaluation and compile histograms, rules, swaps', async () => {
  const m = createMetrics({ processMetrics: false });
  m.eventsReceived('syscall', 10);
  m.eventsEvaluated('syscall', 9);
  m.eventsDropped('syscall', 'queue_full');
  m.evaluationTime('syscall', 0.0002);
  m.rulesLoaded('k8s_audit', 27);
  m.rulesetSwapped();
  m.rulesetFailed('compile');
  m.compileTime(1.5);
  m.output('webhook', false);
  m.outputRetry('webhook');
  m.outputDropped('stdout');
  m.input(true);
  const body = (await m.exposition()).body;
  for (const line of [
    'enginesecurity_engine_events_received_total{source="syscall"} 10',
    'enginesecurity_engine_events_evaluated_total{source="syscall"} 9',
    'enginesecurity_engine_events_dropped_total{source="syscall",reason="queue_full"} 1',
    'enginesecurity_engine_evaluation_seconds_bucket{le="0.0005",source="syscall"} 1',
    'enginesecurity_engine_evaluation_seconds_bucket{le="0.0001",source="syscall"} 0',
    'enginesecurity_engine_rules_loaded{source="k8s_audit"} 27',
    'enginesecurity_engine_ruleset_swaps_total 1',
    'enginesecurity_engine_ruleset_failures_total{reason="compile"} 1',
    'enginesecurity_engine_ruleset_compile_seconds_sum 1.5',
    'enginesecurity_enginesidekick_outputs_total{destination="webhook",status="error"} 1',
    'enginesecurity_enginesidekick_output_retries_total{destination="webhook"} 1',
    'enginesecurity_enginesidekick_output_dropped_total{destination="stdout"} 1',
    'enginesecurity_enginesidekick_inputs_total{source="requests",status="accepted"} 1',
  ]) {
    assert.ok(body.includes(`${line}\n`), line);
  }
});

test('two metric sets are independent (own registries), process metrics optional', async () => {
  const a = createMetrics();
  const b = createMetrics({ processMetrics: false });
  a.rulesetSwapped();
  assert.ok((await a.exposition()).body.includes('enginesecurity_engine_ruleset_swaps_total 1'));
  assert.ok((await b.exposition()).body.includes('enginesecurity_engine_ruleset_swaps_total 0'));
  assert.ok((await a.exposition()).body.includes('process_cpu_user_seconds_total'));
  assert.not.ok((await b.exposition()).body.includes('process_cpu_user_seconds_total'));
});

test.run();
