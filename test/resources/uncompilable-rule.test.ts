// Issue 19 item 6 through the resources controller and the compiled engine, as `rae run` drives
// them: a rule with `(a+)+b|[ab]*a[ab]{8}` goes live and reaches WASM (it used to keep the
// ruleset, and every later one, on the reference interpreter); a batch with a 29-character
// process name is judged whole on the interpreter tier (it used to stall until the watchdog
// dropped it); a rule the code generator cannot compile is a located load error that rejects its
// own resource only; a syscall rule added afterwards alerts on every kernel open of the byte path.
import { KernelIngest } from '../../host/sources/syscall/ingest.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RulesFile } from '../../host/engine/index.js';
import { createMetrics } from '../../host/metrics/index.js';
import { ResourceController, type RulesEngine } from '../../host/resources/controller.js';
import { DetectionEngine, type TierUp } from '../../host/runtime/detection-engine.js';
import { encodeProcRecord } from '../../host/sources/syscall/procfs.js';
import type { ManifestFile } from '../../host/resources/watch.js';
import { toEvents } from '../../support/differential.js';
import { openat, procInfo } from '../../support/kernel-records.js';

const H = 'apiVersion: deckhouse.io/v1alpha1\n';
const manifest = (path: string, kind: string, name: string, spec: string): ManifestFile => ({ path, text: `${H}kind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec}` });
const rules = (name: string, condition: string) => `  rules:\n    - rule:\n        name: ${name}\n        desc: d\n        condition: '${condition}'\n        output: ${name} %proc.name\n        priority: Warning\n`;
const ENABLED = manifest('res/module.yaml', 'ModuleConfig', 'runtime-audit-engine', '  enabled: true\n  version: 1\n');
const REGEX = manifest('res/regex.yaml', 'EngineAuditRules', 'regex', rules('Pod name', 'evt.type = openat and proc.name regex "(a+)+b|[ab]*a[ab]{8}"'));
const TOO_BIG = manifest('res/too-big.yaml', 'EngineAuditRules', 'too-big', rules('Too big', 'evt.type = openat and proc.name regex "[a-z]{600}"'));
const CANARY = manifest('res/canary.yaml', 'EngineAuditRules', 'canary', rules('Canary', 'evt.type = openat and fd.name startswith /tmp/canary-'));
const BASE: RulesFile = { name: 'rules/base.yaml', text: '- rule: Base\n  desc: d\n  condition: evt.type = openat and proc.name = base-marker\n  output: base\n  priority: INFO\n' };

test('uncompilable: the regex of issue 19 reaches WASM; an uncompilable rule rejects only its resource; a later syscall rule alerts on 5 of 5 kernel opens', async () => {
  const alerts: string[] = [];
  const errors: string[] = [];
  const logs: string[] = [];
  const metrics = createMetrics({ processMetrics: false });
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', kernel: new KernelIngest({ hostname: 'h' }), hostname: 'h', onAlert: (a) => alerts.push(a.rule), onError: (e) => errors.push(`${e.code}: ${e.message}`) });
  const tierUps: Array<Promise<TierUp>> = [];
  const recording: RulesEngine = {
    load: async (files, opts) => {
      const r = await engine.load(files, opts);
      if (r.compiled) tierUps.push(r.compiled);
      return r;
    },
  };
  const controller = new ResourceController({
    apiGroup: 'deckhouse.io',
    engine: recording,
    baseFiles: () => [BASE],
    defaultBuiltIn: [],
    onModuleState: () => {},
    reporter: { log: (m) => logs.push(m), alert: () => {}, metrics, hostname: 'h' },
  });
  assert.ok((await controller.apply([ENABLED])).swapped);
  assert.is(engine.stats.tier, 'wasm');

  // The regex rule and an uncompilable one, in two resources: the second is rejected, located; the first goes live.
  const r = await controller.apply([ENABLED, REGEX, TOO_BIG]);
  assert.ok(r.swapped);
  assert.equal(
    r.rejections.map((x) => `${x.name} ${x.reason} ${x.errors.map((d) => `${d.code}: ${d.message}`).join('; ')}`),
    ["too-big invalid RAE_ERR_UNSUPPORTED: regex '[a-z]{600}' needs 600 positions, more than the 512 the compiled evaluator runs"],
  );
  assert.equal(
    engine.ruleset?.ruleset.rules.map((x) => x.name),
    ['Base', 'Pod name'],
  );
  // On the interpreter tier, the 29-character name and its neighbour are judged in the same batch.
  assert.is(engine.stats.tier, 'interpreter');
  const batch = toEvents(
    [
      { 'evt.type': 'openat', 'proc.name': `${'a'.repeat(28)}c` },
      { 'evt.type': 'openat', 'proc.name': `${'a'.repeat(28)}b` },
    ],
    'syscall',
  );
  assert.is(engine.evaluate(batch), 1);
  assert.is(engine.stats.failedBatches, 0, 'no batch stopped by the watchdog');
  assert.equal((await tierUps.at(-1)!).state, 'wasm', 'the ruleset with the regex compiles');
  assert.is(engine.evaluate(batch), 1, 'the same verdict on WASM');

  // A syscall rule added afterwards: live on WASM, and the kernel byte path judges with it.
  assert.ok((await controller.apply([ENABLED, REGEX, TOO_BIG, CANARY])).swapped);
  assert.equal((await tierUps.at(-1)!).state, 'wasm');
  alerts.length = 0;
  const buf = new Uint8Array(8192);
  const proc = procInfo(700, 1, 'cat');
  let off = encodeProcRecord(proc, buf, 0, 1n);
  for (let i = 0; i < 5; i++) off += openat(buf, off, 700, `/tmp/canary-${i}`);
  assert.is(engine.evaluateKernel(buf, off), 5);
  assert.equal(alerts, ['Canary', 'Canary', 'Canary', 'Canary', 'Canary']);
  assert.equal(errors, []);
  await engine.close();
});

test.run();
