// The kernel byte path without a compiled module (issue 26, item 4): evaluateKernel judges
// nothing and says why (a state the caller checks and counts as dropped: no_ruleset), instead of
// throwing on the hot path. Real wire records (a process and an open), a real engine before its
// first load and a real reference-interpreter engine.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { encodeProcRecord } from '../../host/sources/syscall/procfs.js';
import { openat, procInfo } from '../../support/kernel-records.js';

const RULES = [{ name: 'r.yaml', text: '- rule: opens\n  desc: d\n  condition: evt.type = openat\n  output: opened %fd.name\n  priority: WARNING\n' }];

/** A process record and one open of it. */
function records(): { buf: Uint8Array; bytes: number } {
  const buf = new Uint8Array(1 << 16);
  let bytes = encodeProcRecord(procInfo(401, 1, 'cat'), buf, 0, 1n);
  bytes += openat(buf, bytes, 401, '/etc/shadow');
  return { buf, bytes };
}

test('kernel path: before the first compiled load, evaluateKernel returns no-module and counts nothing as judged', async () => {
  const alerts: unknown[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', onAlert: (a) => alerts.push(a) });
  assert.is(engine.kernelUnready, 'no-module');
  const { buf, bytes } = records();
  assert.is(engine.evaluateKernel(buf, bytes), 'no-module');
  assert.is(engine.eventsEvaluated, 0);
  assert.is(engine.stats.batches, 0);
  assert.equal(alerts, []);
  await engine.close();
});

test('kernel path: the reference-interpreter engine has no byte path: interpreter-engine, with a ruleset loaded', async () => {
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', onAlert: () => undefined, engine: 'interpreter' });
  const loaded = await engine.load(RULES);
  assert.ok(loaded.swapped, 'the interpreter engine runs the ruleset');
  const { buf, bytes } = records();
  assert.is(engine.kernelUnready, 'interpreter-engine');
  assert.is(engine.evaluateKernel(buf, bytes), 'interpreter-engine');
  assert.is(engine.eventsEvaluated, 0);
  await engine.close();
});

test.run();
