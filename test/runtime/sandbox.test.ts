// The sandbox contract: modules with an import, a missing export or memory above the cap are
// refused with clear errors; a trapping module fails one batch and the host carries on; the
// watchdog stops a runaway batch, which is announced by an internal alert, and the engine goes
// back to the last good module.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateModule } from '../../host/engine/codegen/index.js';
import { RuleModule, type CompiledRuleset } from '../../host/runtime/evaluator.js';
import { checkModule } from '../../host/runtime/validate.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { EVALUATION_FAILED_RULE } from '../../host/runtime/failure-report.js';
import { createMetrics } from '../../host/metrics/index.js';
import { toEvents } from '../../support/differential.js';
import { wasmModule, type WasmSpec } from './wasm-bytes.js';

const generated = generateModule([]).module!;
function compiled(spec: WasmSpec): CompiledRuleset {
  const wasm = wasmModule(spec);
  return { generated, module: new WebAssembly.Module(wasm), wasm, compileMs: 0, warmMs: 0 };
}
const events = toEvents([{ 'evt.type': 'openat', 'proc.name': 'cat' }], 'syscall');

test('sandbox: a well-formed module passes the checks', () => {
  assert.is(checkModule(new WebAssembly.Module(wasmModule()), wasmModule()), undefined);
  assert.ok(RuleModule.create(compiled({})).ok);
});

test('sandbox: a module with an import is refused', () => {
  const r = RuleModule.create(compiled({ importFn: true }));
  assert.equal(r.ok ? undefined : r.error, { code: 'EIMPORT', message: 'module refused: it imports env.log (function); a rule module must have no imports' });
});

test('sandbox: a module missing an export is refused', () => {
  const r = RuleModule.create(compiled({ omitExport: 'resumeAt' }));
  assert.equal(r.ok ? undefined : r.error, { code: 'EEXPORT', message: 'module refused: missing export(s) resumeAt:function' });
});

test('sandbox: memory above the cap, or without a maximum, is refused', () => {
  const above = RuleModule.create(compiled({ memory: { min: 512, max: 1024 } }));
  assert.equal(above.ok ? undefined : above.error, { code: 'EMEMORY', message: 'module refused: its memory maximum is 1024 pages, above the cap of 512 pages' });
  const open = RuleModule.create(compiled({ memory: { min: 512 } }));
  assert.equal(open.ok ? undefined : open.error, { code: 'EMEMORY', message: 'module refused: its memory has no maximum (cap is 512 pages)' });
});

test('sandbox: a trapping module fails that batch with ETRAP; the host carries on', () => {
  const m = RuleModule.create(compiled({ evaluate: 'trap' }));
  assert.ok(m.ok);
  if (!m.ok) return;
  const r1 = m.module.evaluate(events, true);
  assert.equal(r1.ok ? undefined : r1.error.code, 'ETRAP');
  assert.match(r1.ok ? '' : r1.error.message, 'unreachable');
  const good = RuleModule.create(compiled({}));
  assert.ok(good.ok && good.module.evaluate(events, true).ok, 'the next batch on a good module runs');
});

test('sandbox: the watchdog stops a runaway batch (ETIMEOUT)', () => {
  const m = RuleModule.create(compiled({ evaluate: 'loop' }), 50);
  assert.ok(m.ok);
  if (!m.ok) return;
  const r = m.module.evaluate(events, true);
  assert.equal(r.ok ? undefined : r.error, { code: 'ETIMEOUT', message: 'evaluation stopped by the watchdog after 50 ms' });
});

test('sandbox: after a runaway batch the engine restores the last good module', async () => {
  const alerts: string[] = [];
  const errors: string[] = [];
  const metrics = createMetrics({ processMetrics: false });
  // A generous bound: the good module's batches must never hit it on a loaded machine; only the
  // runaway module does (after 1 s).
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', watchdogMs: 1000, metrics, onAlert: (a) => alerts.push(a.rule), onError: (e) => errors.push(e.code) });
  const rules = `- rule: cat opens\n  desc: d\n  condition: evt.type = openat and proc.name = cat\n  output: cat opened\n  priority: WARNING\n`;
  const loaded = await engine.load([{ name: 'r.yaml', text: rules }]);
  assert.ok(loaded.swapped, JSON.stringify(loaded.errors));
  assert.is(engine.evaluate(events), 1);
  const gen = engine.rulesetGeneration;
  assert.ok(engine.swapCompiled(compiled({ evaluate: 'loop' }), loaded.result).ok);
  assert.is(engine.evaluate(events), 0, 'the runaway batch fails');
  assert.equal(errors, ['ETIMEOUT']);
  assert.is(engine.stats.restores, 1);
  assert.is(engine.rulesetGeneration, gen + 2);
  assert.is(engine.evaluate(events), 1, 'the last good module judges the next batch');
  assert.equal(alerts, ['cat opens', EVALUATION_FAILED_RULE, 'cat opens']);
  const text = (await metrics.exposition()).body;
  assert.match(text, 'enginesecurity_engine_events_dropped_total{source="syscall",reason="watchdog"} 1');
  assert.match(text, 'enginesecurity_engine_ruleset_compile_seconds_count 1');
  await engine.close();
});

test('sandbox: the last good module is kept without its instance: the swapped-out memory is freed', async () => {
  // a full collection on demand (the flag reaches new contexts: gc() is global there)
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', onAlert: () => undefined });
  const rule = (proc: string) => [{ name: 'r.yaml', text: `- rule: opens\n  desc: d\n  condition: evt.type = openat and proc.name = ${proc}\n  output: o\n  priority: WARNING\n` }];
  assert.ok((await engine.load(rule('cat'))).swapped);
  const first = new WeakRef(engine.ruleModule!.memory);
  assert.ok((await engine.load(rule('dog'))).swapped);
  // WeakRefs hold their target to the end of the job that made or read them: collect after it
  await new Promise((r) => setImmediate(r));
  gc();
  assert.is(first.deref(), undefined, 'the memory of the module swapped out is still reachable');
  await engine.close();
});

test.run();
