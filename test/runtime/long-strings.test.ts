// Whole values in the compiled evaluator (issue 19, item 1): strings used to be cut at 4096 bytes
// before the module, so a credential padded past 4 KiB in a configmap slipped through the webhook
// (WASM tier) while the interpreter caught it. Here: the padded case through the real webhook and
// both replay engines; a 1 MiB field under every string operator and transformer on both engines;
// an event larger than the whole batch area, and a transformer result larger than the scratch
// area, judged by the reference interpreter and counted (never a silent "no match").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { replayAlerts, replayAlertsWasm } from '../../host/cli/replay.js';
import { loadRules } from '../../host/engine/index.js';
import { createMetrics } from '../../host/metrics/index.js';
import { MEM } from '../../host/abi/module.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { eventList, metricValue, startTestWebhook } from '../../support/audit-webhook.js';
import { compileAll, compiledMatches, oracle, toEvents } from '../../support/differential.js';

// The upstream rule "Create/Modify Configmap With Private Credentials" (k8s_audit_rules.yaml), cut to one credential.
const CONFIGMAP_RULES = `
- rule: Configmap With Private Credentials
  desc: a configmap holding an AWS key
  condition: ka.target.resource = configmaps and ka.verb in (create, update, patch) and ka.req.configmap.obj contains "aws_access_key_id"
  output: K8s configmap with private credential (configmap=%ka.req.configmap.name)
  priority: WARNING
  source: k8s_audit
`;
const PADS = [0, 4000, 5000, 50_000];

/** A configmap create whose data holds `pad` bytes of padding before the credential. */
function configmapEvent(pad: number): Record<string, unknown> {
  const name = `cm-${pad}`;
  return {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'RequestResponse',
    auditID: `00000000-0000-0000-0000-${String(pad).padStart(12, '0')}`,
    stage: 'ResponseComplete',
    requestURI: '/api/v1/namespaces/default/configmaps',
    verb: 'create',
    user: { username: 'mallory', groups: ['system:authenticated'] },
    sourceIPs: ['10.0.0.9'],
    objectRef: { resource: 'configmaps', namespace: 'default', name, apiVersion: 'v1' },
    requestObject: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { 'a.properties': 'x'.repeat(pad), 'access.properties': 'aws_access_key_id = MY-ID\n' } },
    responseStatus: { metadata: {}, code: 201 },
    requestReceivedTimestamp: '2024-05-01T10:00:00.000000Z',
    stageTimestamp: '2024-05-01T10:00:00.000100Z',
  };
}

const options = { ruleMatching: 'first' as const, minPriority: 'Debug' as const, hostname: 'test-node' };
const configmapNames = (lines: string[]) => lines.map((l) => /configmap=(\S+)\)/.exec((JSON.parse(l) as { output: string }).output)?.[1]);

test('padding: a credential behind 0, 4,000, 5,000 and 50,000 bytes of padding alerts 4/4 through the webhook (WASM tier) and on both replay engines', async () => {
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ...options, onAlert: (a) => alerts.push(a.message) });
  const wh = await startTestWebhook((events) => engine.evaluate(events));
  try {
    const loaded = await engine.load([{ name: 'configmap.yaml', text: CONFIGMAP_RULES }]);
    assert.ok(loaded.swapped, JSON.stringify(loaded.errors ?? loaded.result.diagnostics));
    assert.is(engine.stats.tier, 'wasm');
    const items = PADS.map(configmapEvent);
    const res = await wh.post(eventList(items));
    assert.is(res.status, 200, res.text);
    await wh.webhook.idle();
    assert.equal(
      alerts.map((o) => /configmap=(\S+)\)/.exec(o)?.[1]),
      PADS.map((p) => `cm-${p}`),
    );

    const input = readReplayInput(items.map((i) => JSON.stringify(i)).join('\n'), 'audit');
    assert.is(input.events.length, 4);
    const interp = replayAlerts(engine.ruleset!.ruleset, input.events, options);
    const wasm = await replayAlertsWasm(engine.ruleset!.ruleset, input.events, options);
    assert.ok(wasm.ok, wasm.ok ? '' : wasm.message);
    assert.equal(
      configmapNames(interp.lines),
      PADS.map((p) => `cm-${p}`),
    );
    assert.equal(wasm.ok && wasm.lines, interp.lines);
  } finally {
    await wh.close();
    await engine.close();
  }
});

const MiB = 2 ** 20;
// Every string operator on fields of 1 MiB, and every transformer on fields of 128 KiB (their
// results of one event share the 1 MiB scratch area); rule_matching all: every pair compared.
const OPERATOR_RULES: Array<[string, string]> = [
  ['contains', 'proc.cmdline contains "evil-payload"'],
  ['icontains', 'proc.cmdline icontains "EVIL-PAYLOAD"'],
  ['startswith', 'proc.cmdline startswith "evil-payload"'],
  ['endswith', 'proc.cmdline endswith "evil-payload"'],
  ['in', 'proc.cmdline in (evil-payload, bash)'],
  ['glob', 'proc.cmdline glob "*evil-pay?oad"'],
  ['regex', 'proc.cmdline regex ".*evil-payload"'],
  ['pmatch', 'fd.name pmatch (/tmp)'],
  ['field equality', 'proc.cmdline = val(proc.exepath)'],
  ['field contains', 'proc.exepath contains val(proc.name)'],
  ['len', 'len(proc.cmdline) > 1048575'],
  ['basename', 'basename(fd.name) = "evil-payload"'],
];
const TRANSFORMER_RULES: Array<[string, string]> = [
  ['tolower', 'tolower(proc.cmdline) contains "evil-payload"'],
  ['toupper', 'toupper(fd.name) endswith "/EVIL-PAYLOAD"'],
  ['b64', 'b64(proc.name) contains "evil-payload"'],
  ['concat', 'concat(proc.name, "/", basename(fd.name)) endswith "/evil-payload"'],
];

function longRulesYaml(rules: Array<[string, string]>): string {
  return rules.map(([name, c]) => `- rule: ${name}\n  desc: d\n  condition: evt.type = execve and ${c}\n  output: o %proc.name\n  priority: WARNING\n`).join('\n');
}

/** Events with the needle past any cut, before it, cased differently, or missing one byte; values of `size` bytes. */
function longEvents(size: number): Array<Record<string, unknown>> {
  const x = 'x'.repeat(size);
  const b64 = Buffer.from(`${'y'.repeat(size)}evil-payload`).toString('base64');
  return [
    { 'proc.cmdline': `${x}evil-payload`, 'fd.name': `/tmp/${x}/evil-payload`, 'proc.exepath': `${x}evil-payload`, 'proc.name': b64 },
    { 'proc.cmdline': `evil-payload${x}`, 'fd.name': `/var/${x}/EVIL-payload`, 'proc.exepath': `${x}evil-payloaD`, 'proc.name': 'x' },
    { 'proc.cmdline': `${x}evil-paylo`, 'fd.name': `/tmp/${x.slice(1)}`, 'proc.exepath': x, 'proc.name': x.slice(10) },
    { 'proc.cmdline': `${x.slice(0, size / 2)}EVIL-PAYLOAD${x.slice(0, size / 2)}`, 'fd.name': `${x}/evil-payload`, 'proc.exepath': 'evil-payload', 'proc.name': 'evil-payload' },
    { 'proc.cmdline': 'evil-payload', 'fd.name': '/tmp/evil-payload', 'proc.exepath': 'evil-payload', 'proc.name': 'evil' },
  ].map((f) => ({ 'evt.type': 'execve', ...f }));
}

/** Both engines over the rules and events: the matching events per rule (equal on both), and the events the module referred. */
async function bothEngines(ruleList: Array<[string, string]>, objs: Array<Record<string, unknown>>): Promise<{ byRule: (name: string) => number[]; referred: number }> {
  const loaded = loadRules([{ name: 'long.yaml', text: longRulesYaml(ruleList) }]);
  assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
  const rules = loaded.ruleset.rules;
  const module = await compileAll(rules);
  const events = toEvents(objs, 'syscall');
  const want = oracle(rules, events);
  assert.equal(compiledMatches(module, events), want);
  const r = module.evaluate(events, false);
  const byRule = (name: string) => want.filter((m) => m.endsWith(`:${ruleList.findIndex(([n]) => n === name)}`)).map((m) => Number(m.split(':')[0]));
  return { byRule, referred: r.ok ? (r.referred?.length ?? 0) : -1 };
}

test("1 MiB fields: every string operator gives the interpreter's verdict, judged in the module itself", async () => {
  const { byRule, referred } = await bothEngines(OPERATOR_RULES, longEvents(MiB));
  assert.is(referred, 0);
  // not vacuous: the 1 MiB events match where the needle sits past any cut
  assert.equal(byRule('contains'), [0, 1, 4]);
  assert.equal(byRule('icontains'), [0, 1, 3, 4]);
  assert.equal(byRule('endswith'), [0, 4]);
  assert.equal(byRule('glob'), [0, 4]);
  assert.equal(byRule('regex'), [0, 4]);
  assert.equal(byRule('field equality'), [0, 4]);
  assert.equal(byRule('field contains'), [1, 2, 3, 4]);
  assert.equal(byRule('len'), [0, 1, 2, 3]);
  assert.equal(byRule('basename'), [0, 3, 4]);
});

test("128 KiB fields: tolower, toupper, b64 and concat give the interpreter's verdict, judged in the module itself", async () => {
  const { byRule, referred } = await bothEngines(TRANSFORMER_RULES, longEvents(128 * 1024));
  assert.is(referred, 0);
  assert.equal(byRule('tolower'), [0, 1, 3, 4]);
  assert.equal(byRule('toupper'), [0, 1, 3, 4]);
  assert.equal(byRule('b64'), [0]);
  assert.equal(byRule('concat'), [0, 3, 4]);
});

// A syscall event whose cmdline is `bytes` long, with the needle at the end.
const bigEvent = (bytes: number, i: number) => ({ 'evt.type': 'execve', 'proc.cmdline': `${'z'.repeat(bytes - 12)}evil-payload`, 'proc.name': `p${i}` });

test('an event larger than the batch area, and a transformer result larger than the scratch area, are judged by the reference interpreter and counted', async () => {
  const rules = longRulesYaml([
    ['contains', 'proc.cmdline contains "evil-payload"'],
    ['tolower', 'tolower(proc.cmdline) endswith "evil-payload"'],
  ]);
  const metrics = createMetrics({ processMetrics: false });
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', metrics, onAlert: (a) => alerts.push(`${a.rule} ${String(a.outputFields['proc.name'])}`) });
  try {
    const loaded = await engine.load([{ name: 'big.yaml', text: rules }]);
    assert.ok(loaded.swapped);
    const objs = [bigEvent(100, 0), bigEvent(MEM.batchSize + MiB, 1), bigEvent(100, 2), bigEvent(MEM.scratchSize + MiB, 3), bigEvent(100, 4)];
    const events = toEvents(objs, 'syscall');
    // the module alone: the oversize event and the scratch overflow are referred, with their matches in event order
    const r = engine.ruleModule!.evaluate(events, false);
    assert.ok(r.ok);
    assert.equal(r.ok && r.referred?.map((x) => `${x.reason}${x.stopped ? ' stopped' : ''}`), ['too_large', 'scratch']);
    assert.equal(r.ok && r.matches.map((m) => `${m.event}:${m.rule.name}`), ['0:contains', '0:tolower', '1:contains', '1:tolower', '2:contains', '2:tolower', '3:contains', '3:tolower', '4:contains', '4:tolower']);
    assert.equal(compiledMatches(engine.ruleModule!, events), oracle(engine.ruleModule!.rules, events));
    // through the engine: every alert, and the metric says which events the interpreter judged
    assert.is(engine.evaluate(events), 10);
    assert.equal(
      alerts.filter((a) => a.startsWith('contains')),
      ['contains p0', 'contains p1', 'contains p2', 'contains p3', 'contains p4'],
    );
    const judged = (reason: string) => metricValue(metrics, 'enginesecurity_engine_events_reference_judged_total', { source: 'syscall', reason });
    assert.is(await judged('too_large'), 1);
    assert.is(await judged('scratch'), 1);
  } finally {
    await engine.close();
  }
});

test.run();
