// One crafted event must not blind the engine to its neighbours (issue 19, item 5): an EventList
// holding an event nested 5,000 deep and a good event, posted to the real webhook over TLS and
// judged by the DetectionEngine on both engines. With the default depth bound the deep event is
// judged with its deep values cut (counted as truncated); with the bound lifted, reading the
// deep value overflows the stack, and that event alone is dropped (counted as trap, announced
// by an internal alert) while the good one still alerts. Nothing else is lost either way.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Alert } from '../../../host/output/alert.js';
import { DetectionEngine } from '../../../host/runtime/detection-engine.js';
import { EVALUATION_FAILED_RULE } from '../../../host/runtime/failure-report.js';
import { metricValue, startTestWebhook } from '../../../support/audit-webhook.js';

const DROPPED = 'enginesecurity_engine_events_dropped_total';
const TRUNCATED = 'enginesecurity_engine_events_truncated_total';
const EVALUATED = 'enginesecurity_engine_events_evaluated_total';
// The condition reads the deep value (the compiled evaluator encodes it, the interpreter compares
// it) and so does the output: a rule that an attacker's padding must not switch off for others.
const RULES = [
  {
    name: 'deep.yaml',
    text: [
      '- rule: Pod read',
      '  desc: d',
      '  condition: ka.verb = get and jevt.value[/requestObject] != "none"',
      '  output: read by %ka.user.name (%ka.auditid) object=%jevt.value[/requestObject]',
      '  priority: WARNING',
      '  source: k8s_audit',
      '',
    ].join('\n'),
  },
];

const event = (id: string, requestObject: string) =>
  `{"auditID":"${id}","stage":"ResponseComplete","verb":"get","requestURI":"/api/v1/namespaces/default/pods","user":{"username":"${id}-user"},"stageTimestamp":"2024-05-01T10:00:00.123456Z","requestObject":${requestObject}}`;
/** `{"a":{"a":...1...}}`, `depth` objects deep, as text (JSON.stringify of it overflows the stack). */
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const BODY = `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[${event('deep', nested(5000))},${event('good', '{"kind":"Pod"}')}]}`;

type Case = [name: string, engine: 'wasm' | 'interpreter', maxEventDepth: number | undefined, expect: { alerted: string[]; truncated: number; trap: number }];
const cases: Case[] = [
  ['default depth bound: the deep event is judged with its deep values cut', 'wasm', undefined, { alerted: ['deep', 'good'], truncated: 1, trap: 0 }],
  ['default depth bound', 'interpreter', undefined, { alerted: ['deep', 'good'], truncated: 1, trap: 0 }],
  ['bound lifted: the deep event alone fails and is counted', 'wasm', 1_000_000, { alerted: ['good'], truncated: 0, trap: 1 }],
  ['bound lifted: the deep event alone fails and is counted', 'interpreter', 1_000_000, { alerted: ['good'], truncated: 0, trap: 1 }],
];

for (const [name, kind, maxEventDepth, expect] of cases) {
  test(`webhook-deep: ${name} (${kind}); the good event alerts once`, async () => {
    const alerts: Alert[] = [];
    let engine: DetectionEngine | undefined;
    const wh = await startTestWebhook((events) => engine!.evaluate(events), maxEventDepth === undefined ? {} : { maxEventDepth });
    engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', engine: kind, metrics: wh.metrics, onAlert: (a) => alerts.push(a), onError: () => {} });
    try {
      assert.ok((await engine.load(RULES)).swapped);
      const a = await wh.send({ body: BODY });
      assert.is(a.status, 200, a.text);
      await wh.webhook.idle();
      const detections = alerts.filter((x) => x.source === 'k8s_audit');
      assert.equal(
        detections.map((x) => x.outputFields['ka.auditid']),
        expect.alerted,
      );
      const good = detections.find((x) => x.outputFields['ka.auditid'] === 'good')!;
      assert.is(good.outputFields['jevt.value[/requestObject]'], '{"kind":"Pod"}');
      assert.is(await metricValue(wh.metrics, TRUNCATED, { source: 'k8s_audit', reason: 'too_deep' }), expect.truncated);
      assert.is(await metricValue(wh.metrics, DROPPED, { source: 'k8s_audit', reason: 'trap' }), expect.trap);
      assert.is(await metricValue(wh.metrics, EVALUATED, { source: 'k8s_audit' }), 2, 'the batch itself did not fail');
      assert.is(alerts.filter((x) => x.rule === EVALUATION_FAILED_RULE).length, expect.trap);
      if (expect.truncated > 0) assert.equal((JSON.parse(a.text) as { truncated: unknown }).truncated, [{ index: 0, code: 'too_deep', reason: '1 value(s) nested deeper than maxEventDepth=300 cut' }]);
    } finally {
      await wh.close();
      await engine.close();
    }
  });
}

test.run();
