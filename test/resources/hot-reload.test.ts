// Acceptance: EngineAuditRules dropped into the watched directory take effect while a replay load
// runs through the real DetectionEngine (compiled evaluator, built-in rule sets): the new rule
// fires and no event is lost (events fed = events evaluated); an invalid manifest is rejected
// with a located error while the previous rules keep firing; deleting the manifest removes its
// rules. A changed ruleset goes live on the reference interpreter at once and moves to WASM when
// compiled; the new rule fires on both tiers. The times from writing a manifest to its first
// alert and to the compiled tier are printed (not asserted).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { builtinRulesFiles, DEFAULT_BUILTIN } from '../../host/engine/builtin.js';
import type { Alert } from '../../host/output/alert.js';
import { startResources, RESOURCE_REJECTED_RULE, type ModuleState } from '../../host/resources/index.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { tempDir } from '../helpers/temp-dir.js';

const H = 'apiVersion: deckhouse.io/v1alpha1\n';
const CANARY = `${H}kind: EngineAuditRules
metadata:
  name: canary
spec:
  rules:
    - list:
        name: canary_dirs
        items: [/srv/canary/]
    - rule:
        name: Canary file opened
        desc: A file below a canary directory was opened.
        condition: open_read and fd.name pmatch (canary_dirs)
        output: Canary file opened (file=%fd.name process=%proc.name)
        priority: Critical
        tags: [canary]
`;
const BAD = `${H}kind: EngineAuditRules
metadata:
  name: bad
spec:
  rules:
    - rule:
        name: Broken
        desc: d
        condition: evt.type = openat and fd.nmae = /x
        output: o
        priority: Warning
`;

/** The replay load: events of three kinds, cycled. */
const EVENTS = readReplayInput(
  [
    { 'evt.type': 'openat', 'evt.is_open_read': true, 'fd.typechar': 'f', 'fd.num': 3, 'fd.name': '/srv/canary/secret.txt', 'proc.name': 'app', 'container.id': 'host' },
    { 'evt.type': 'openat', 'evt.is_open_read': true, 'fd.typechar': 'f', 'fd.num': 3, 'fd.name': '/etc/shadow', 'proc.name': 'cat', 'proc.pname': 'node', 'user.name': 'root', 'container.id': 'host' },
    { 'evt.type': 'openat', 'evt.is_open_read': true, 'fd.typechar': 'f', 'fd.num': 3, 'fd.name': '/tmp/harmless', 'proc.name': 'app', 'container.id': 'host' },
  ]
    .map((fields) => JSON.stringify({ source: 'syscall', fields }))
    .join('\n'),
  'fields',
).events;

test('hot reload: add, reject, keep, delete an EngineAuditRules under a running replay load', async () => {
  const dir = tempDir('rae-hot-');
  writeFileSync(join(dir, 'module.yaml'), `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: true\n  version: 1\n`);
  const byRule = new Map<string, number>();
  const count = (rule: string) => byRule.get(rule) ?? 0;
  const internal: Alert[] = [];
  const logs: string[] = [];
  const states: ModuleState[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', onAlert: (a) => byRule.set(a.rule, count(a.rule) + 1) });
  const resources = await startResources({
    dir,
    apiGroup: 'deckhouse.io',
    engine,
    baseFiles: (sel) => builtinRulesFiles(sel).files,
    defaultBuiltIn: DEFAULT_BUILTIN,
    onModuleState: (s) => {
      states.push(s);
    },
    reporter: { log: (m) => logs.push(m), alert: (a) => internal.push(a), hostname: 'h' },
  });
  assert.equal(states, [{ enabled: true, debugLogging: false, builtIn: ['syscall', 'orchestrator-audit'] }]);

  // The replay load: one batch per turn of the event loop until stopped.
  let fed = 0;
  let running = true;
  let batches = 0;
  const feeder = new Promise<void>((resolve) => {
    const turn = () => {
      if (!running) return resolve();
      const batch = Array.from({ length: 30 }, (_, i) => EVENTS[(fed + i) % EVENTS.length]!);
      engine.evaluate(batch);
      fed += batch.length;
      batches++;
      setImmediate(turn);
    };
    setImmediate(turn);
  });
  const until = async (pred: () => boolean, what: string) => {
    const deadline = Date.now() + 120_000;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs.join('\n')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const moreBatches = async (n: number) => {
    const target = batches + n;
    await until(() => batches >= target, `${n} more batches`);
  };

  try {
    await moreBatches(5);
    assert.is(count('Canary file opened'), 0);
    assert.ok(count('Read sensitive file untrusted') > 0);

    // 1. A new manifest: its rule fires without a restart.
    assert.is(engine.stats.tier, 'wasm', 'the first ruleset is compiled before it serves');
    const tierUps = engine.stats.tierUps;
    const written = performance.now();
    writeFileSync(join(dir, 'canary.yaml'), CANARY);
    await until(() => count('Canary file opened') > 0, 'the canary rule to fire');
    const firstAlert = performance.now() - written;
    const tierAtAlert = engine.stats.tier;
    const live = engine.stats.lastChangeToLiveMs;
    // The same ruleset moves to its compiled module; the canary keeps firing there.
    await until(() => engine.stats.tierUps > tierUps, 'the compiled tier');
    const compiled = performance.now() - written;
    assert.is(engine.stats.tier, 'wasm');
    const onWasm = count('Canary file opened');
    await moreBatches(5);
    assert.ok(count('Canary file opened') > onWasm, 'the canary fires on the compiled tier');
    const st = engine.stats;
    process.stderr.write(
      `hot-reload: manifest written -> first alert of its rule: ${Math.round(firstAlert)} ms on the ${tierAtAlert} tier ` +
        `(load() to live ${Math.round(live)} ms); -> compiled tier: ${Math.round(compiled)} ms ` +
        `(load() to WASM ${Math.round(st.lastChangeToCompiledMs)} ms: compile ${Math.round(st.lastCompileMs)} ms, warm ${Math.round(st.lastWarmMs)} ms; built-in sets + 1 manifest)\n`,
    );
    assert.equal(resources.controller.activeRules, ['canary']);

    // 2. A new invalid manifest: rejected with a located error; the running rules keep firing.
    const generation = engine.rulesetGeneration;
    writeFileSync(join(dir, 'bad.yaml'), BAD);
    await until(() => internal.length > 0, 'the rejection');
    const log = logs.join('\n');
    assert.match(log, `${join(dir, 'bad.yaml')}:10:42: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): filter_check called with nonexistent field fd.nmae`);
    assert.match(log, `resources: rejected EngineAuditRules/bad at ${join(dir, 'bad.yaml')}:1:1`);
    assert.equal([internal[0]!.rule, internal[0]!.source], [RESOURCE_REJECTED_RULE, 'internal']);
    assert.is(engine.rulesetGeneration, generation);
    let before = count('Canary file opened');
    await moreBatches(5);
    assert.ok(count('Canary file opened') > before, 'the canary keeps firing after the rejection');

    // 3. The canary manifest itself made invalid: rejected; its previous version stays.
    writeFileSync(join(dir, 'canary.yaml'), CANARY.replace('priority: Critical', 'priority: CRITICAL'));
    await until(() => internal.length > 1, 'the second rejection');
    assert.match(logs.join('\n'), '\'spec.rules[1].rule.priority\' must be one of Emergency, Alert, Critical, Error, Warning, Notice, Informational, Debug, not "CRITICAL" (did you mean Critical?)');
    before = count('Canary file opened');
    await moreBatches(5);
    assert.ok(count('Canary file opened') > before, 'the previous canary version keeps firing');
    assert.is(engine.rulesetGeneration, generation);

    // 4. Deleted: its rule goes away; the built-in rules stay.
    rmSync(join(dir, 'canary.yaml'));
    await until(() => engine.rulesetGeneration > generation, 'the reload without the canary');
    await moreBatches(2);
    before = count('Canary file opened');
    const shadow = count('Read sensitive file untrusted');
    await moreBatches(10);
    assert.is(count('Canary file opened'), before);
    assert.ok(count('Read sensitive file untrusted') > shadow);
    assert.equal(resources.controller.activeRules, []);
  } finally {
    running = false;
    await feeder;
    resources.close();
    await engine.close();
  }
  // No event lost across three reload attempts.
  assert.ok(fed > 0);
  assert.is(engine.eventsEvaluated, fed);
});

const BAD_MANIFESTS: Array<[string, string, RegExp]> = [
  ['wrong kind', `${H}kind: FalcoAuditRules\nmetadata:\n  name: bad\nspec:\n  rules: []\n`, /bad\.yaml:2:7: error LOAD_ERR_YAML_VALIDATE .*kind "FalcoAuditRules" is not a resource of this module/],
  ['wrong name', `${H}kind: ModuleConfig\nmetadata:\n  name: falco\nspec:\n  enabled: false\n`, /bad\.yaml:4:9: error LOAD_ERR_YAML_VALIDATE .*must be named "runtime-audit-engine"/],
  ['unknown field', CANARY.replace('name: canary', 'name: bad').replace('        tags: [canary]', '        tag: [canary]'), /bad\.yaml:16:9: error LOAD_ERR_YAML_VALIDATE .*unknown field 'spec\.rules\[1\]\.rule\.tag'/],
  ['bad priority', CANARY.replace('name: canary', 'name: bad').replace('priority: Critical', 'priority: critical'), /bad\.yaml:15:19: error LOAD_ERR_YAML_VALIDATE .*not "critical" \(did you mean Critical\?\)/],
  [
    'macro and rule in one item',
    CANARY.replace('name: canary', 'name: bad').replace('    - rule:\n', '    - macro: {name: m, condition: evt.type = open}\n      rule:\n'),
    /bad\.yaml:10:7: error LOAD_ERR_YAML_VALIDATE .*must have exactly one of macro, list, rule; it has macro and rule/,
  ],
  ['YAML error', `${H}kind: EngineAuditRules\nmetadata: {name: bad\nspec: {}\n`, /bad\.yaml:\d+:\d+: error LOAD_ERR_YAML_PARSE/],
];

test('hot reload: each bad manifest gets a located error while the engine keeps running its rules', async () => {
  const dir = tempDir('rae-bad-');
  writeFileSync(join(dir, 'canary.yaml'), CANARY);
  let canary = 0;
  const internal: Alert[] = [];
  const logs: string[] = [];
  // Schema errors never reach the engine; the reference interpreter keeps this test quick.
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', onAlert: (a) => (canary += a.rule === 'Canary file opened' ? 1 : 0), engine: 'interpreter' });
  const resources = await startResources({
    dir,
    apiGroup: 'deckhouse.io',
    engine,
    baseFiles: (sel) => builtinRulesFiles(sel).files,
    defaultBuiltIn: ['syscall'],
    onModuleState: () => {},
    reporter: { log: (m) => logs.push(m), alert: (a) => internal.push(a), hostname: 'h' },
  });
  try {
    for (const [name, text, expected] of BAD_MANIFESTS) {
      const rejections = internal.length;
      writeFileSync(join(dir, 'bad.yaml'), text);
      const deadline = Date.now() + 300_000;
      while (internal.length === rejections) {
        if (Date.now() > deadline) throw new Error(`${name}: no rejection\n${logs.join('\n')}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.match(logs.join('\n'), expected, name);
      const before = canary;
      engine.evaluate(EVENTS);
      assert.is(canary, before + 1, `${name}: the canary rule still fires`);
      assert.equal(resources.controller.activeRules, ['canary'], name);
    }
  } finally {
    resources.close();
    await engine.close();
  }
});

test.run();
