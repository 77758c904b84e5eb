// rules.maxOutputFieldBytes: each field value an alert carries, in output_fields and in the
// message, is at most that many UTF-8 bytes; a longer one is cut on a character boundary and
// marked `…(truncated N bytes)`. Shorter values are untouched. The bound reaches alerts through
// the configuration (replay, as `rae run` through the detection engine).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../host/config/config.js';
import { replayAlerts } from '../../host/cli/replay.js';
import { loadRules } from '../../host/engine/index.js';
import { auditSourceEvent } from '../../host/sources/audit/document.js';

const RULES = `
- rule: Configmap created
  desc: any configmap
  condition: ka.target.resource = configmaps and ka.verb = create
  output: created (name=%ka.target.name data=%ka.req.configmap.obj)
  priority: WARNING
  source: k8s_audit
`;

function configmapEvent(name: string, value: string): Record<string, unknown> {
  return {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'RequestResponse',
    auditID: '00000000-0000-0000-0000-000000000001',
    stage: 'ResponseComplete',
    requestURI: '/api/v1/namespaces/default/configmaps',
    verb: 'create',
    user: { username: 'alice' },
    objectRef: { resource: 'configmaps', namespace: 'default', name, apiVersion: 'v1' },
    requestObject: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: value } },
    responseStatus: { code: 201 },
    requestReceivedTimestamp: '2024-05-01T10:00:00.000000Z',
    stageTimestamp: '2024-05-01T10:00:00.000100Z',
  };
}

function alertsWith(overrides: string[], value: string): Array<{ output: string; output_fields: Record<string, unknown> }> {
  const { config, problems } = loadConfig(undefined, undefined, overrides, { RAE_STATE_DIR: '/tmp/rae-state' });
  assert.equal(problems, []);
  const loaded = loadRules([{ name: 'r.yaml', text: RULES }]);
  assert.ok(loaded.ok);
  const { lines } = replayAlerts(loaded.ruleset, [auditSourceEvent(configmapEvent('cm-1', value), 1n)], { ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', maxOutputFieldBytes: config.rules.maxOutputFieldBytes });
  return lines.map((l) => JSON.parse(l));
}

test('output field bytes: a value past rules.maxOutputFieldBytes is cut on a character boundary and marked, in output_fields and the message', () => {
  const value = 'é'.repeat(300); // 600 bytes, 2 per character
  const [alert] = alertsWith(['rules.maxOutputFieldBytes=101'], value);
  const data = alert!.output_fields['ka.req.configmap.obj'] as string;
  const full = JSON.stringify({ k: value });
  const kept = data.slice(0, data.indexOf('…'));
  assert.ok(full.startsWith(kept), data);
  assert.ok(Buffer.byteLength(kept) <= 101 && Buffer.byteLength(kept) >= 100, `${Buffer.byteLength(kept)} bytes kept`);
  assert.ok(data.endsWith(`…(truncated ${Buffer.byteLength(full) - Buffer.byteLength(kept)} bytes)`), data);
  const shown = /data=(.*)…\(truncated (\d+) bytes\)\)$/.exec(alert!.output);
  // the message shows a JSON value's quotes escaped (\"), after the cut
  assert.ok(shown && Buffer.byteLength(shown[1]!.replaceAll('\\"', '"')) <= 101 && Number(shown[2]) > 0, alert!.output);
  assert.is(alert!.output_fields['ka.target.name'], 'cm-1', 'a short value is untouched');
});

test('output field bytes: the default (64 KiB) leaves a 60 KB value whole', () => {
  const value = 'x'.repeat(60_000);
  const [alert] = alertsWith([], value);
  assert.is(alert!.output_fields['ka.req.configmap.obj'], JSON.stringify({ k: value }));
});

test('output field bytes: the bounded rules.* keys refuse a value out of range, naming the key', () => {
  const { problems } = loadConfig(undefined, undefined, ['rules.maxOutputFieldBytes=0', 'rules.maxRegexRepeat=100001', 'rules.maxConditionDepth=1.5'], { RAE_STATE_DIR: '/tmp/rae-state' });
  assert.equal(
    problems.map((p) => p.key),
    ['rules.maxConditionDepth', 'rules.maxRegexRepeat', 'rules.maxOutputFieldBytes'],
  );
  assert.match(problems[1]!.message, 'from 1 to 100000');
});

test.run();
