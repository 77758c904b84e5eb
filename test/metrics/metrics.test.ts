// The metrics facade: exposition of the events counter as falcosidekick 2.30 shapes it (under our
// names), every metric of the table exported with valid names, and bounded label values.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PRIORITIES } from '../../host/engine/priority.js';
import { createMetrics, FALCO_METRICS, METRICS } from '../../host/metrics/index.js';

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
  m.knownRules([{ name: 'Loaded rule', priority: 'Notice', source: 'syscall', tags: [] }]);
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

test('enginesecurity_engine_memory_bytes: the process memory by area when scraped; a buffer allocated between two scrapes shows in array_buffers', async () => {
  const m = createMetrics({ processMetrics: false });
  const read = async () => Object.fromEntries(samples((await m.exposition()).body, 'enginesecurity_engine_memory_bytes').map((l) => [/area="(\w+)"/.exec(l)![1]!, Number(l.split(' ')[1])]));
  const before = await read();
  assert.equal(Object.keys(before).sort(), ['array_buffers', 'external', 'heap_total', 'heap_used', 'rss']);
  assert.ok(before.rss! > 0 && before.heap_used! > 0 && before.heap_used! <= before.heap_total!, JSON.stringify(before));
  const held = new Uint8Array(64 * 2 ** 20);
  const after = await read();
  assert.ok(after.array_buffers! - before.array_buffers! >= held.length, JSON.stringify({ before, after }));
  assert.ok(after.external! >= after.array_buffers!, JSON.stringify(after));
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

test("Falco's rules_matches_total: the engine's matches of loaded rules, Falco's labels, only matched and loaded rules", async () => {
  const m = createMetrics({ processMetrics: false });
  const name = 'falcosecurity_falco_rules_matches_total';
  m.knownRules([
    { name: 'Read sensitive file', priority: 'Warning', source: 'syscall', tags: ['T1555', 'maturity_stable', 'mitre-credential.access'] },
    { name: 'Exec into pod', priority: 'Notice', source: 'k8s_audit', tags: [] },
    { name: 'Never matched', priority: 'Debug', source: 'syscall', tags: [] },
  ]);
  const hit = (rule: string, source: string, ruleMatch = true) => m.alert({ hostname: 'h', priority: 'Warning', rule, source }, ruleMatch);
  hit('Read sensitive file', 'syscall');
  hit('Read sensitive file', 'syscall');
  hit('Exec into pod', 'k8s_audit');
  hit('Read sensitive file', 'syscall', false); // POST / or /test: the forwarder's, not a rule match
  hit('Exec into pod', 'syscall'); // not the rule's source
  hit('Unknown rule', 'syscall');
  hit('Falco internal: evaluation failed', 'internal');
  let body = (await m.exposition()).body;
  assert.ok(body.includes(`# TYPE ${name} counter\n`));
  assert.equal(samples(body, name).sort(), [
    `${name}{rule_name="Exec into pod",priority="5",source="k8s_audit"} 1`,
    `${name}{rule_name="Read sensitive file",priority="4",source="syscall",tag_T1555="true",tag_maturity_stable="true",tag_mitre_credential_access="true"} 2`,
  ]);
  // every alert, rule match or not, is in the seed's counter: one call counts both
  assert.is(
    samples(body, 'enginesecurity_enginesidekick_engine_events_total').reduce((n, l) => n + Number(l.split(' ').pop()), 0),
    7,
  );
  // a reload keeps the series of rules loaded with the same labels, and drops the others
  m.knownRules([
    { name: 'Exec into pod', priority: 'Critical', source: 'k8s_audit', tags: [] },
    { name: 'Read sensitive file', priority: 'Warning', source: 'syscall', tags: ['T1555', 'maturity_stable', 'mitre-credential.access'] },
  ]);
  body = (await m.exposition()).body;
  assert.equal(samples(body, name), [`${name}{rule_name="Read sensitive file",priority="4",source="syscall",tag_T1555="true",tag_maturity_stable="true",tag_mitre_credential_access="true"} 2`]);
  hit('Exec into pod', 'k8s_audit');
  assert.ok((await m.exposition()).body.includes(`${name}{rule_name="Exec into pod",priority="2",source="k8s_audit"} 1\n`));
});

test("Falco's other names read the seed's state at scrape time", async () => {
  const m = createMetrics({ processMetrics: false });
  m.versionInfo('1.2.3', '0.62.0');
  m.rulesFiles([{ name: 'falco_rules.yaml', sha256: 'ab12' }]);
  m.eventsReceived('syscall', 10);
  m.eventsReceived('k8s_audit', 5);
  m.eventsDropped('syscall', 'kernel_lost', 3);
  m.eventsDropped('syscall', 'queue_full', 4);
  m.outputDropped('stdout');
  m.outputDropped('webhook');
  m.sourceUp('syscall', true);
  m.sourceUp('k8s_audit', true);
  m.sourceUp('syscall', false);
  const body = (await m.exposition()).body;
  for (const line of [
    'falcosecurity_falco_version_info{version="1.2.3"} 1',
    'falcosecurity_falco_sha256_rules_files_info{file_name="falco_rules.yaml",sha256="ab12"} 1',
    'falcosecurity_scap_n_evts_total 15',
    'falcosecurity_scap_n_drops_total 3',
    'falcosecurity_falco_outputs_queue_num_drops_total 2',
    'falcosecurity_scap_engine_name_info{engine_name="source_plugin"} 1',
    'falcosecurity_falco_evt_source_info{evt_source="k8s_audit"} 1',
  ]) {
    assert.ok(body.includes(`${line}\n`), line);
  }
  assert.not.ok(body.includes('engine_name="modern_bpf"'));
  for (const d of Object.values(FALCO_METRICS)) {
    assert.match(d.name, /^falcosecurity_(falco|scap)_[a-z0-9_]+$/);
    assert.ok(body.includes(`# TYPE ${d.name} ${d.type}\n`), d.name);
  }
  const rss = Number(/^falcosecurity_falco_memory_rss_bytes (\S+)$/m.exec(body)?.[1]);
  assert.ok(rss > 1e6, `rss ${rss}`);
  const cpu = Number(/^falcosecurity_falco_cpu_usage_ratio (\S+)$/m.exec(body)?.[1]);
  assert.ok(cpu > 0, `cpu ${cpu}`);
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
