// The on-disk module cache: a second engine with the same cache directory takes the module of an
// unchanged ruleset from disk without starting the compile worker, and judges events the same;
// a cached file that is damaged, or that fails the sandbox checks, is removed and rebuilt.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileKey } from '../../host/runtime/compile.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { ModuleCache } from '../../host/runtime/module-cache.js';
import { toEvents } from '../../support/differential.js';
import { wasmModule } from './wasm-bytes.js';
import { tempDir } from '../helpers/temp-dir.js';

const RULES = [{ name: 'r.yaml', text: `- rule: cat opens\n  desc: d\n  condition: evt.type = openat and proc.name = cat\n  output: cat opened %fd.name\n  priority: WARNING\n` }];
const events = toEvents(
  [
    { 'evt.type': 'openat', 'proc.name': 'cat', 'fd.name': '/etc/x' },
    { 'evt.type': 'openat', 'proc.name': 'dog' },
  ],
  'syscall',
);
const dir = tempDir('rae-module-cache-');

async function loadOnce(cacheDir: string): Promise<{ from: string | undefined; worker: boolean; alerts: string[] }> {
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', moduleCacheDir: cacheDir, onAlert: (a) => alerts.push(`${a.rule}: ${String(a.outputFields['fd.name'])}`) });
  const r = await engine.load(RULES);
  assert.ok(r.swapped, JSON.stringify(r.errors));
  const worker = engine.compileWorkerRunning;
  engine.evaluate(events);
  await engine.close();
  return { from: r.from, worker, alerts };
}

test('ModuleCache: put, get, newest first, at most `keep` files, keys must be sha256 hex', () => {
  const c = new ModuleCache(join(dir, 'unit'), 2);
  const k = (i: number) => String(i).repeat(64);
  for (const i of [1, 2, 3]) {
    assert.ok(c.put(k(i), new Uint8Array([i])));
    // distinct mtimes: the newest three writes, oldest pruned
    writeFileSync(join(c.dir, `${k(i)}.wasm`), new Uint8Array([i]), { flag: 'r+' });
  }
  assert.is(c.keys().length, 2);
  assert.not.ok(c.keys().includes(k(1)), 'the oldest was pruned');
  assert.equal([...c.get(k(3))!], [3]);
  assert.is(c.get(k(1)), undefined);
  assert.not.ok(c.put('../../etc/passwd', new Uint8Array([0])), 'not a key');
  assert.is(c.get('../x'), undefined);
  c.remove(k(3));
  assert.is(c.get(k(3)), undefined);
  writeFileSync(join(dir, 'a-file'), 'x');
  assert.not.ok(new ModuleCache(join(dir, 'a-file', 'sub')).put(k(4), new Uint8Array([4])), 'an unwritable directory: false, no throw');
});

test('compileKey: the same code gives the same key, other code another', () => {
  assert.is(compileKey('export const a = 1;'), compileKey('export const a = 1;'));
  assert.is.not(compileKey('export const a = 1;'), compileKey('export const a = 2;'));
  assert.match(compileKey(''), /^[0-9a-f]{64}$/);
});

test('engine: an unchanged ruleset comes from the cache without the compile worker, with the same verdicts', async () => {
  const cacheDir = join(dir, 'engine');
  const first = await loadOnce(cacheDir);
  assert.is(first.from, 'build');
  assert.ok(first.worker, 'the first load compiled in the worker');
  const cache = new ModuleCache(cacheDir);
  assert.is(cache.keys().length, 1, 'one module written');
  const second = await loadOnce(cacheDir);
  assert.is(second.from, 'disk');
  assert.not.ok(second.worker, 'no compile worker started');
  assert.equal(second.alerts, first.alerts);
  assert.equal(second.alerts, ['cat opens: /etc/x']);
});

test('engine: a damaged cached module, or one failing the sandbox checks, is removed and rebuilt', async () => {
  const cacheDir = join(dir, 'damaged');
  await loadOnce(cacheDir);
  const cache = new ModuleCache(cacheDir);
  const [key] = cache.keys();
  const good = readFileSync(join(cacheDir, `${key}.wasm`));
  for (const bad of [good.subarray(0, good.length >> 1), wasmModule({ importFn: true })]) {
    writeFileSync(join(cacheDir, `${key}.wasm`), bad);
    const r = await loadOnce(cacheDir);
    assert.is(r.from, 'build', 'not taken from the cache');
    assert.equal(r.alerts, ['cat opens: /etc/x']);
    assert.equal(cache.keys(), [key!], 'rewritten under the same key');
    assert.is((await loadOnce(cacheDir)).from, 'disk', 'the rebuilt file serves the next load');
  }
});

test('engine: precompile then load of the same rules builds once (the load waits for the build in flight)', async () => {
  const cacheDir = join(dir, 'ahead');
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', moduleCacheDir: cacheDir, onAlert: (a) => alerts.push(a.rule) });
  const ahead = engine.precompile(RULES);
  const r = await engine.load(RULES);
  await ahead;
  assert.ok(r.swapped, JSON.stringify(r.errors));
  assert.is(engine.moduleBuilds, 1, 'one build for both');
  assert.is(engine.rulesetGeneration, 1, 'precompile installs nothing');
  engine.evaluate(events);
  assert.equal(alerts, ['cat opens']);
  await engine.close();
  // a restart: the precompile takes the module from the cache, the load from the compiler's memory, and says the cache
  const again = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', moduleCacheDir: cacheDir, onAlert: () => undefined });
  await again.precompile(RULES);
  assert.is((await again.load(RULES)).from, 'disk');
  assert.is(again.moduleBuilds, 0);
  await again.precompile([{ name: 'bad.yaml', text: '- rule: x\n  condition: nope(\n' }]);
  assert.is(again.moduleBuilds, 0, 'invalid rules: nothing built, nothing thrown');
  await again.close();
});

test.run();
