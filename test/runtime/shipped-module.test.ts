// The build's shipped module cache (module-cache.ts SHIPPED_MODULE_DIR, written by
// host/cli/run/ship-module.ts): an engine takes the module of rules the build compiled from it
// without the compile worker, after the same checks; a shipped module of other rules is never
// found (the key covers the rules' code, the compiler and the runtime), a damaged one under the
// right key is refused and the rules compile as usual; the shipped directory is never written.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { shipModule } from '../../host/cli/run/ship-module.js';
import { defaultConfig } from '../../host/config/config.js';
import { builtinRulesFiles, type RulesFile } from '../../host/engine/index.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { toEvents } from '../../support/differential.js';
import { tempDir } from '../helpers/temp-dir.js';

const rule = (proc: string): RulesFile[] => [{ name: 'r.yaml', text: `- rule: ${proc} opens\n  desc: d\n  condition: evt.type = openat and proc.name = ${proc}\n  output: ${proc} opened %fd.name\n  priority: WARNING\n` }];
const events = toEvents([{ 'evt.type': 'openat', 'proc.name': 'cat', 'fd.name': '/etc/x' }], 'syscall');
const dir = tempDir('rae-shipped-module-');

/** One engine's first load of `files` with `shipped` as its shipped cache and a fresh state cache. */
async function loadOnce(shipped: string, files: readonly RulesFile[], name: string) {
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', moduleCacheDir: join(dir, `state-${name}`), shippedModuleDir: shipped, onAlert: (a) => alerts.push(a.rule) });
  try {
    const r = await engine.load(files);
    assert.ok(r.swapped, JSON.stringify(r.errors));
    engine.evaluate(events);
    return { from: r.from, builds: engine.moduleBuilds, worker: engine.compileWorkerRunning, alerts };
  } finally {
    await engine.close();
  }
}

/** A shipped cache holding the module of `files` (as the build writes it: an engine's module cache). */
async function ship(files: readonly RulesFile[], name: string): Promise<string> {
  const shipped = join(dir, `shipped-${name}`);
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', moduleCacheDir: shipped, onAlert: () => undefined });
  await engine.load(files);
  await engine.close();
  return shipped;
}

const snapshot = (d: string) => readdirSync(d).map((n) => `${n} ${readFileSync(join(d, n)).length}`);

test('shipped: the module of the same rules is taken from the shipped cache, no compile, same verdicts', async () => {
  const shipped = await ship(rule('cat'), 'same');
  const before = snapshot(shipped);
  const r = await loadOnce(shipped, rule('cat'), 'same');
  assert.is(r.from, 'shipped');
  assert.is(r.builds, 0, 'nothing compiled');
  assert.not.ok(r.worker, 'no compile worker started');
  assert.equal(r.alerts, ['cat opens']);
  assert.equal(snapshot(shipped), before, 'the shipped directory is not written');
});

test('shipped: a module of other rules is stale and never used: the rules compile', async () => {
  const shipped = await ship(rule('dog'), 'stale');
  const r = await loadOnce(shipped, rule('cat'), 'stale');
  assert.is(r.from, 'build');
  assert.is(r.builds, 1);
  assert.equal(r.alerts, ['cat opens']);
});

test('shipped: a damaged module under the right key is refused, kept, and the rules compile', async () => {
  const shipped = await ship(rule('cat'), 'damaged');
  const [file] = readdirSync(shipped);
  const good = readFileSync(join(shipped, file!));
  writeFileSync(join(shipped, file!), good.subarray(0, good.length >> 1));
  const r = await loadOnce(shipped, rule('cat'), 'damaged');
  assert.is(r.from, 'build');
  assert.is(r.builds, 1);
  assert.equal(r.alerts, ['cat opens']);
  assert.is(readFileSync(join(shipped, file!)).length, good.length >> 1, 'the shipped file is left as it is (read only)');
});

// rae run's start: precompile() takes the module as the engine starts, the load of the same rules
// finds it in the compiler's memory: it still reports where the module came from (the start log's note)
test('shipped: a precompile then a load of the same rules report the shipped module', async () => {
  const shipped = await ship(rule('cat'), 'ahead');
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', moduleCacheDir: join(dir, 'state-ahead'), shippedModuleDir: shipped, onAlert: () => undefined });
  try {
    await engine.precompile(rule('cat'));
    const r = await engine.load(rule('cat'));
    assert.ok(r.swapped, JSON.stringify(r.errors));
    assert.is(r.from, 'shipped');
    assert.is(engine.moduleBuilds, 0);
  } finally {
    await engine.close();
  }
});

// ship-module.ts against a default start's engine (start-engine.ts): the build's module must be the one it asks for
test('shipModule: a default start takes the module the build step wrote', async () => {
  const shipped = join(dir, 'shipped-default');
  await shipModule(shipped);
  assert.is(readdirSync(shipped).length, 1, 'one module');
  const config = defaultConfig({});
  const engine = new DetectionEngine({
    ruleMatching: config.rules.ruleMatching,
    minPriority: 'Debug',
    hostname: 'h',
    ruleCounters: config.rules.ruleCounters,
    moduleCacheDir: join(dir, 'state-default'),
    shippedModuleDir: shipped,
    onAlert: () => undefined,
  });
  try {
    const r = await engine.load(builtinRulesFiles(config.rules.builtIn).files);
    assert.ok(r.swapped, JSON.stringify(r.errors));
    assert.is(r.from, 'shipped');
    assert.is(engine.moduleBuilds, 0);
  } finally {
    await engine.close();
  }
});

test.run();
