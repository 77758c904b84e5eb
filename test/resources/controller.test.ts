// The module state machine, driven snapshot by snapshot against the real DetectionEngine: the
// module is disabled until a ModuleConfig enables it; EngineAuditRules are added, rejected with
// located errors (stderr, an internal alert through the same submit path, the ruleset-failure
// metric) while the previous rules stay, and removed when their manifest goes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RulesFile } from '../../host/engine/index.js';
import { createMetrics } from '../../host/metrics/index.js';
import { alertJson, type Alert } from '../../host/output/alert.js';
import { ResourceController, type ModuleState } from '../../host/resources/controller.js';
import { RESOURCE_REJECTED_RULE } from '../../host/resources/report.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';
import type { ManifestFile } from '../../host/resources/watch.js';

const H = 'apiVersion: deckhouse.io/v1alpha1\n';
const moduleConfig = (spec: string): string => `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n${spec}`;
const auditRules = (name: string, items: string): string => `${H}kind: EngineAuditRules\nmetadata:\n  name: ${name}\nspec:\n  rules:\n${items}`;
const rule = (name: string, condition: string, extra = ''): string => `    - rule:\n        name: ${name}\n        desc: d\n        condition: ${condition}\n        output: ${name} %fd.name\n        priority: Warning\n${extra}`;

/** Two tiny "built-in sets" (the controller only sees files). */
const SETS: Record<string, RulesFile> = {
  syscall: { name: 'rules/syscall/base.yaml', text: '- macro: opened\n  condition: evt.type in (open, openat)\n- rule: Base rule\n  desc: d\n  condition: opened and fd.name = /etc/base\n  output: base\n  priority: INFO\n' },
  'orchestrator-audit': { name: 'rules/orchestrator-audit/audit.yaml', text: '- rule: Audit rule\n  desc: d\n  condition: ka.verb = get\n  output: audit\n  priority: INFO\n  source: k8s_audit\n' },
};

function setup() {
  const alerts: Alert[] = [];
  const internal: Alert[] = [];
  const logs: string[] = [];
  const states: ModuleState[] = [];
  const metrics = createMetrics({ processMetrics: false });
  // The reference interpreter keeps these state-machine tests fast; hot-reload.test.ts drives the compiled engine.
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', onAlert: (a) => alerts.push(a), engine: 'interpreter' });
  const selections: string[][] = [];
  const controller = new ResourceController({
    apiGroup: 'deckhouse.io',
    engine,
    baseFiles: (sel) => {
      selections.push([...sel]);
      return sel.map((s) => SETS[s]!);
    },
    defaultBuiltIn: ['syscall', 'orchestrator-audit'],
    onModuleState: (s) => {
      states.push(s);
    },
    reporter: { log: (m) => logs.push(m), alert: (a) => internal.push(a), metrics, hostname: 'h' },
  });
  const ruleNames = () => engine.ruleset?.ruleset.rules.map((r) => r.name) ?? [];
  const fire = (fdName: string): string[] => {
    alerts.length = 0;
    engine.evaluate(readReplayInput(JSON.stringify({ fields: { 'evt.type': 'openat', 'fd.name': fdName, 'proc.name': 'p' } }), 'fields').events);
    return alerts.map((a) => a.rule);
  };
  const failures = async () => Number(/enginesecurity_engine_ruleset_failures_total\{reason="invalid"\} (\d+)/.exec((await metrics.exposition()).body)?.[1] ?? 0);
  return { engine, controller, alerts, internal, logs, states, selections, ruleNames, fire, failures };
}

const f = (path: string, text: string): ManifestFile => ({ path, text });
const ENABLED = f('res/module.yaml', moduleConfig('  enabled: true\n  version: 1\n'));

test('controller: no ModuleConfig -> disabled, default built-in sets loaded', async () => {
  const s = setup();
  const r = await s.controller.apply([]);
  assert.ok(r.swapped);
  assert.equal(r.state, { enabled: false, debugLogging: false, builtIn: ['syscall', 'orchestrator-audit'] });
  assert.equal(s.states, [r.state]);
  assert.equal(s.ruleNames(), ['Base rule', 'Audit rule']);
  assert.ok(s.controller.loaded);
});

test('controller: a ModuleConfig enables the module and picks the built-in sets; removing it disables', async () => {
  const s = setup();
  await s.controller.apply([]);
  await s.controller.apply([f('res/module.yaml', moduleConfig('  enabled: true\n  settings:\n    debugLogging: true\n    builtInRulesList: [orchestrator-audit]\n'))]);
  assert.equal(s.states.at(-1), { enabled: true, debugLogging: true, builtIn: ['orchestrator-audit'] });
  assert.equal(s.ruleNames(), ['Audit rule']);
  await s.controller.apply([f('res/module.yaml', moduleConfig('  enabled: false\n'))]);
  assert.equal(s.states.at(-1), { enabled: false, debugLogging: false, builtIn: ['syscall', 'orchestrator-audit'] });
  await s.controller.apply([ENABLED]);
  assert.is(s.states.at(-1)!.enabled, true);
  await s.controller.apply([]);
  assert.is(s.states.at(-1)!.enabled, false);
  assert.is(s.states.length, 5);
});

test('controller: an EngineAuditRules adds its rules (which may use built-in macros); deleting it removes them', async () => {
  const s = setup();
  await s.controller.apply([ENABLED]);
  assert.equal(s.fire('/srv/canary'), []);
  const ear = f('res/canary.yaml', auditRules('canary', rule('Canary', 'opened and fd.name startswith /srv/')));
  const r = await s.controller.apply([ENABLED, ear]);
  assert.ok(r.swapped);
  assert.equal(s.controller.activeRules, ['canary']);
  assert.equal(s.fire('/srv/canary'), ['Canary']);
  assert.equal(s.fire('/etc/base'), ['Base rule']);
  await s.controller.apply([ENABLED]);
  assert.equal(s.controller.activeRules, []);
  assert.equal(s.fire('/srv/canary'), []);
  assert.equal(s.fire('/etc/base'), ['Base rule']);
});

test('controller: an invalid manifest is rejected on every channel and the previous version keeps running', async () => {
  const s = setup();
  const good = f('res/canary.yaml', auditRules('canary', rule('Canary', 'opened and fd.name startswith /srv/')));
  await s.controller.apply([ENABLED, good]);
  const generation = s.engine.rulesetGeneration;
  // Engine-level error: a misspelt field, located in the manifest.
  const bad = f('res/canary.yaml', auditRules('canary', rule('Canary', 'opened and fd.nmae startswith /srv/')));
  const r = await s.controller.apply([ENABLED, bad]);
  assert.not.ok(r.swapped);
  assert.is(s.engine.rulesetGeneration, generation);
  assert.equal(s.fire('/srv/canary'), ['Canary']);
  assert.equal(s.controller.activeRules, ['canary']);
  const text = s.logs.join('\n');
  assert.match(text, 'res/canary.yaml:10:31: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): filter_check called with nonexistent field fd.nmae');
  assert.match(text, "    In rules content 'EngineAuditRules/canary': (res/canary.yaml:1:1)");
  assert.match(text, '  10 |         condition: opened and fd.nmae startswith /srv/');
  assert.match(text, 'resources: rejected EngineAuditRules/canary at res/canary.yaml:1:1: 1 error(s); the running rules stay');
  assert.is(s.internal.length, 1);
  const alert = JSON.parse(alertJson(s.internal[0]!)) as { rule: string; source: string; priority: string; output_fields: Record<string, unknown> };
  assert.equal([alert.rule, alert.source, alert.priority], [RESOURCE_REJECTED_RULE, 'internal', 'Error']);
  assert.equal(alert.output_fields['resource.name'], 'canary');
  assert.equal(alert.output_fields['resource.error'], 'res/canary.yaml:10:31: filter_check called with nonexistent field fd.nmae');
  assert.is(await s.failures(), 1);
  // The same snapshot again (another file changed): reported once, not again.
  await s.controller.apply([ENABLED, bad, f('res/other.yaml', auditRules('other', '    - macro: {name: unused_m, condition: evt.type = open}\n'))]);
  assert.is(s.internal.length, 1);
  assert.is(await s.failures(), 1);
  // Fixed: the new version replaces the old one.
  await s.controller.apply([ENABLED, f('res/canary.yaml', auditRules('canary', rule('Canary2', 'opened and fd.name startswith /srv/')))]);
  assert.equal(s.fire('/srv/canary'), ['Canary2']);
});

test('controller: a new invalid manifest is rejected while the other rules load', async () => {
  const s = setup();
  const a = f('res/a.yaml', auditRules('a', rule('A', 'opened and fd.name = /a')));
  const b = f('res/b.yaml', auditRules('b', rule('B', 'opened and fd.name = /b', '        priority: Critical\n')));
  const r = await s.controller.apply([ENABLED, a, b]);
  assert.ok(r.swapped);
  assert.equal(s.controller.activeRules, ['a']);
  assert.equal(s.fire('/a'), ['A']);
  assert.match(s.logs.join('\n'), 'res/b.yaml:13:9: error LOAD_ERR_YAML_PARSE (YAML parse error): Map keys must be unique');
  assert.is(s.internal.length, 1);
});

test('controller: a manifest made unreadable YAML keeps the rules its file held', async () => {
  const s = setup();
  const good = f('res/canary.yaml', auditRules('canary', rule('Canary', 'opened and fd.name = /c')));
  await s.controller.apply([ENABLED, good]);
  await s.controller.apply([ENABLED, f('res/canary.yaml', `${good.text}  - [\n`)]);
  assert.equal(s.controller.activeRules, ['canary']);
  assert.equal(s.fire('/c'), ['Canary']);
  assert.match(s.logs.join('\n'), 'LOAD_ERR_YAML_PARSE');
  await s.controller.apply([ENABLED, { path: 'res/canary.yaml', error: 'not read: too large' }]);
  assert.equal(s.controller.activeRules, ['canary']);
  await s.controller.apply([ENABLED]);
  assert.equal(s.controller.activeRules, []);
});

test('controller: the same resource twice: the first (by file name) wins, the second is rejected', async () => {
  const s = setup();
  await s.controller.apply([ENABLED, f('res/1.yaml', auditRules('dup', rule('One', 'opened and fd.name = /1'))), f('res/2.yaml', auditRules('dup', rule('Two', 'opened and fd.name = /2')))]);
  assert.equal(s.fire('/1'), ['One']);
  assert.equal(s.fire('/2'), []);
  assert.match(s.logs.join('\n'), 'res/2.yaml:1:1: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): EngineAuditRules/dup is already defined at res/1.yaml:1:1; this definition is ignored');
});

test('controller: an invalid ModuleConfig keeps the previous module state', async () => {
  const s = setup();
  await s.controller.apply([ENABLED]);
  await s.controller.apply([f('res/module.yaml', moduleConfig('  enabled: true\n  settings:\n    builtInRulesList: [Fstec]\n'))]);
  assert.equal(s.states.at(-1), { enabled: true, debugLogging: false, builtIn: ['syscall', 'orchestrator-audit'] });
  assert.match(s.logs.join('\n'), '\'spec.settings.builtInRulesList[0]\' must be one of syscall, syscall-incubating, syscall-sandbox, orchestrator-audit, not "Fstec"');
  assert.is(s.internal.length, 1);
});

test('controller: dropping a built-in set that a manifest needs rejects the manifest and keeps the running rules', async () => {
  const s = setup();
  const ear = f('res/canary.yaml', auditRules('canary', rule('Canary', 'opened and fd.name = /c')));
  await s.controller.apply([ENABLED, ear]);
  const generation = s.engine.rulesetGeneration;
  const r = await s.controller.apply([f('res/module.yaml', moduleConfig('  enabled: true\n  settings:\n    builtInRulesList: [orchestrator-audit]\n')), ear]);
  assert.not.ok(r.swapped);
  assert.is(s.engine.rulesetGeneration, generation);
  assert.equal(s.fire('/c'), ['Canary']);
  assert.equal(r.state.builtIn, ['syscall', 'orchestrator-audit']);
  assert.match(s.logs.join('\n'), "res/canary.yaml:10:20: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Undefined macro 'opened' used in filter.");
});

test('controller: invalid built-in or configured files: nothing loads, no module state, the report says so', async () => {
  const logs: string[] = [];
  const states: ModuleState[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', onAlert: () => {}, engine: 'interpreter' });
  const controller = new ResourceController({
    apiGroup: 'deckhouse.io',
    engine,
    baseFiles: () => [{ name: 'conf/bad.yaml', text: '- rule: r\n  desc: d\n  condition: evt.type = open and fd.nmae = x\n  output: o\n  priority: INFO\n' }],
    defaultBuiltIn: [],
    onModuleState: (s) => {
      states.push(s);
    },
    reporter: { log: (m) => logs.push(m), alert: () => {}, hostname: 'h' },
  });
  const r = await controller.apply([ENABLED]);
  assert.not.ok(r.swapped);
  assert.not.ok(controller.loaded);
  assert.equal(states, []);
  assert.match(logs.join('\n'), 'conf/bad.yaml:3:34: error LOAD_ERR_COMPILE_CONDITION');
  assert.match(logs.join('\n'), 'resources: rejected ruleset at conf/bad.yaml:1:1: 1 error(s); no ruleset is running');
});

test.run();
