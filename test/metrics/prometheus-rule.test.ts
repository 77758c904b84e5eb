// deploy/prometheus-operator/prometheusrule.yaml under promtool: `check rules` accepts its groups
// (and rejects a broken expression); its rules shared with the Deckhouse groups of rules/manifests/
// are the same rules; `test rules` shows the two rules of its own firing for the node at fault
// and only there (a source that cannot run; slow evaluation), and fails when told otherwise.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { findTool, prometheusRuleGroups, readManifest, type RuleGroup, runPromtool, withTempDir } from './prom-tools.js';

const promtool = findTool('promtool');

const ruleFile = (groups: RuleGroup[] = prometheusRuleGroups()) => stringifyYaml({ groups });
const t = promtool ? test : test.skip;

test('the rules shared with the Deckhouse groups are the same rules, in the group of the same name', () => {
  const groups = new Map(prometheusRuleGroups().map((g) => [g.name, g.rules]));
  for (const file of ['cluster-observability-metrics-rules-group.yaml', 'observability-metrics-rules-group.yaml']) {
    const m = readManifest(file);
    const theirs = (m.spec as RuleGroup).rules;
    const ours = groups.get(m.metadata.name);
    assert.ok(ours, `no group ${m.metadata.name} in the PrometheusRule`);
    assert.equal(ours.slice(0, theirs.length), theirs, file);
  }
});

t('promtool check rules accepts the PrometheusRule, and rejects a broken expression', () => {
  withTempDir((dir) => {
    writeFileSync(join(dir, 'rules.yaml'), ruleFile());
    const ok = runPromtool(['check', 'rules', 'rules.yaml'], dir);
    assert.is(ok.code, 0, ok.out);
    assert.ok(ok.out.includes('SUCCESS: 7 rules found'), ok.out);
    writeFileSync(join(dir, 'rules.yaml'), ruleFile().replace('[5m]))) > 0.1', '[5m]) > 0.1'));
    const bad = runPromtool(['check', 'rules', 'rules.yaml'], dir);
    assert.is.not(bad.code, 0, bad.out);
  });
});

const scrape = (name: string, node: string, labels = '') => `${name}{instance="10.0.0.1:2801",job="runtime-audit-engine",node="${node}"${labels}}`;

/** A promtool unit test of the two alerts of this file; `expected` are the nodes expected to alert at 20m. */
function unitTest(expected: { unavailable: string[]; slow: string[] }) {
  const annotationsOf = (alert: string) =>
    prometheusRuleGroups()
      .flatMap((g) => g.rules)
      .find((r) => r.alert === alert)!.annotations!;
  const fill = (text: string, labels: Record<string, string>) => text.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, k: string) => labels[k] ?? '');
  const alertsOf = (alert: string, severity: string, nodes: string[], labels: Record<string, string>) =>
    nodes.map((node) => {
      const all = { node, ...labels };
      const a = annotationsOf(alert);
      return { exp_labels: { ...all, severity_level: severity }, exp_annotations: { summary: a.summary!, description: fill(a.description!, all) } };
    });
  // Slow node: every batch in the 0.5 s bucket (10 batches a minute); fast node: every batch under 50 µs.
  const buckets = (node: string, slow: boolean) =>
    ['5e-05', '0.1', '0.5', '+Inf'].map((le) => ({
      series: scrape('enginesecurity_engine_evaluation_seconds_bucket', node, `,le="${le}",source="syscall"`),
      values: slow && (le === '5e-05' || le === '0.1') ? '0x30' : '0+10x30',
    }));
  return stringifyYaml({
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: [{ series: scrape('enginesecurity_engine_source_unavailable', 'worker-1', ',reason="EPERM",source="syscall"'), values: '1x30' }, ...buckets('worker-1', false), ...buckets('worker-2', true)],
        alert_rule_test: [
          { eval_time: '3m', alertname: 'RuntimeAuditEngineSourceUnavailable', exp_alerts: [] }, // pending for `for: 5m`
          { eval_time: '20m', alertname: 'RuntimeAuditEngineSourceUnavailable', exp_alerts: alertsOf('RuntimeAuditEngineSourceUnavailable', '4', expected.unavailable, { source: 'syscall', reason: 'EPERM' }) },
          { eval_time: '8m', alertname: 'RuntimeAuditEngineSlowEvaluation', exp_alerts: [] }, // pending for `for: 10m`
          { eval_time: '20m', alertname: 'RuntimeAuditEngineSlowEvaluation', exp_alerts: alertsOf('RuntimeAuditEngineSlowEvaluation', '6', expected.slow, { source: 'syscall' }) },
        ],
      },
    ],
  });
}

t('promtool test rules: a source that cannot run and slow evaluation alert for their node only', () => {
  withTempDir((dir) => {
    writeFileSync(join(dir, 'rules.yaml'), ruleFile());
    writeFileSync(join(dir, 'test.yaml'), unitTest({ unavailable: ['worker-1'], slow: ['worker-2'] }));
    const r = runPromtool(['test', 'rules', 'test.yaml'], dir);
    assert.is(r.code, 0, r.out);
    assert.ok(r.out.includes('SUCCESS'), r.out);
  });
});

t('promtool test rules fails when the fast node is expected to alert as slow (the unit test can fail)', () => {
  withTempDir((dir) => {
    writeFileSync(join(dir, 'rules.yaml'), ruleFile());
    writeFileSync(join(dir, 'test.yaml'), unitTest({ unavailable: ['worker-1'], slow: ['worker-1', 'worker-2'] }));
    const r = runPromtool(['test', 'rules', 'test.yaml'], dir);
    assert.is.not(r.code, 0, r.out);
    assert.ok(r.out.includes('FAILED'), r.out);
  });
});

test.run();
