// The shipped alert rules under promtool: `check rules` accepts both rule groups taken from the
// manifests (and rejects a broken expression), and `test rules` shows the critical alert firing
// for the node with a critical detection, not for a node with only debug events, and not once
// the 5-minute window has passed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { findTool, readManifest, ruleFileFromManifest, runPromtool, withTempDir } from './prom-tools.js';

const promtool = findTool('promtool');
const CLUSTER = 'cluster-observability-metrics-rules-group.yaml';
const NAMESPACED = 'observability-metrics-rules-group.yaml';
const ALERT = 'RuntimeAuditEngineCriticalEventsAreFiring';

const t = promtool ? test : test.skip;

t('promtool check rules accepts both shipped rule groups', () => {
  withTempDir((dir) => {
    for (const [file, count] of [
      [CLUSTER, 1],
      [NAMESPACED, 4],
    ] as const) {
      writeFileSync(join(dir, 'rules.yaml'), ruleFileFromManifest(file));
      const r = runPromtool(['check', 'rules', 'rules.yaml'], dir);
      assert.is(r.code, 0, r.out);
      assert.ok(r.out.includes(`SUCCESS: ${count} rules found`), r.out);
    }
  });
});

t('promtool check rules rejects a broken expression (the check can fail)', () => {
  withTempDir((dir) => {
    writeFileSync(join(dir, 'rules.yaml'), ruleFileFromManifest(CLUSTER).replace('[5m]', '[5m'));
    const r = runPromtool(['check', 'rules', 'rules.yaml'], dir);
    assert.is.not(r.code, 0, r.out);
  });
});

const labels = (node: string, priority: string, raw: string, rule: string, source: string) =>
  `enginesecurity_enginesidekick_engine_events_total{container="runtime-audit-engine",hostname="${node}",instance="10.0.0.1:2801",job="runtime-audit-engine",node="${node}",priority="${priority}",priority_raw="${raw}",rule="${rule}",source="${source}",tier="cluster"}`;

function unitTest(expectAt4m: string[]) {
  const annotations = readManifest(CLUSTER).spec.rules as Array<{ annotations: { summary: string; description: string } }>;
  const { summary, description } = annotations[0]!.annotations;
  return stringifyYaml({
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: [
          // worker-1: one critical detection at 2m
          { series: labels('worker-1', '6', 'critical', 'Drop and execute new binary in container', 'syscall'), values: '0 0 1 1 1 1 1 1 1 1 1 1 1 1 1' },
          // worker-2: a steady stream of debug events (POST /test), never critical
          { series: labels('worker-2', '1', 'debug', 'Test rule', 'internal'), values: '0+1x14' },
        ],
        alert_rule_test: [
          { eval_time: '2m', alertname: ALERT, exp_alerts: [] }, // pending for `for: 1m`
          {
            eval_time: '4m',
            alertname: ALERT,
            exp_alerts: expectAt4m.map((node) => ({
              exp_labels: { node, severity_level: '4' },
              exp_annotations: { summary, description: description.replace('{{ $labels.node }}', node) },
            })),
          },
          { eval_time: '12m', alertname: ALERT, exp_alerts: [] }, // the 5-minute window has passed
        ],
      },
    ],
  });
}

t('promtool test rules: the critical alert fires for the node with a critical detection, and only then', () => {
  withTempDir((dir) => {
    writeFileSync(join(dir, 'rules.yaml'), ruleFileFromManifest(CLUSTER));
    writeFileSync(join(dir, 'test.yaml'), unitTest(['worker-1']));
    const r = runPromtool(['test', 'rules', 'test.yaml'], dir);
    assert.is(r.code, 0, r.out);
    assert.ok(r.out.includes('SUCCESS'), r.out);
  });
});

t('promtool test rules fails when a debug-only node is expected to alert (the unit test can fail)', () => {
  withTempDir((dir) => {
    writeFileSync(join(dir, 'rules.yaml'), ruleFileFromManifest(CLUSTER));
    writeFileSync(join(dir, 'test.yaml'), unitTest(['worker-1', 'worker-2']));
    const r = runPromtool(['test', 'rules', 'test.yaml'], dir);
    assert.is.not(r.code, 0, r.out);
    assert.ok(r.out.includes('FAILED'), r.out);
  });
});

test.run();
