// Fault injection: the compile worker dies in the middle of a compile (terminated from outside,
// as an OOM kill or a crash of the thread would end it). Documented outcome (docs/security.md
// "Faults"): the load fails with EWORKER "the compile worker stopped", the running ruleset stays
// and keeps judging every event given to it meanwhile (0 lost), and the next load starts a new
// worker and compiles. The worker is reached through the engine's private compiler: the fault is
// injected, not simulated by a test-only option.
import type { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { toEvents } from '../../support/differential.js';

const rule = (name: string, condition: string) => [{ name: `${name}.yaml`, text: `- rule: ${name}\n  desc: d\n  condition: ${condition}\n  output: ${name} %proc.name\n  priority: WARNING\n` }];
const big = rule('big', `evt.type = openat and (${Array.from({ length: 3000 }, (_, i) => `proc.name=a${i} or fd.name contains /c${i}/`).join(' or ')})`);
const catOpens = toEvents([{ 'evt.type': 'openat', 'proc.name': 'cat' }], 'syscall');

test('compile worker killed mid-compile: EWORKER, the running ruleset keeps judging every event, the next load compiles', async () => {
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', onAlert: (a) => alerts.push(a.rule), onError: () => undefined });
  try {
    assert.ok((await engine.load(rule('A', 'evt.type = openat and proc.name = cat'))).swapped);
    let sent = 0;
    let feeding = true;
    const feed = (async () => {
      while (feeding) {
        engine.evaluate(catOpens);
        sent++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    const compiler = (engine as unknown as { compiler: { worker?: Worker } }).compiler;
    const loading = engine.load(big);
    const deadline = Date.now() + 300_000;
    while (!compiler.worker && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.ok(compiler.worker, 'the compile started a worker');
    await compiler.worker.terminate();
    const r = await loading;
    feeding = false;
    await feed;
    assert.not.ok(r.swapped);
    assert.is(r.errors?.[0]?.code, 'EWORKER', JSON.stringify(r.errors));
    assert.match(r.errors![0]!.message, 'the compile worker stopped');
    assert.is(engine.ruleset?.ruleset.rules[0]?.name, 'A');
    assert.ok(sent > 0);
    assert.is(alerts.length, sent, 'every event given during the compile was judged by the running ruleset');
    assert.ok(alerts.every((a) => a === 'A'));
    const next = await engine.load(rule('B', 'evt.type = openat and proc.name in (cat, tac)'));
    assert.ok(next.swapped && next.tier === 'wasm', JSON.stringify(next.errors));
    alerts.length = 0;
    engine.evaluate(catOpens);
    assert.equal(alerts, ['B']);
  } finally {
    await engine.close();
  }
});

test.run();
