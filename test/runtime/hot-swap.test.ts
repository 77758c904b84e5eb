// Hot swap under load: batches keep flowing (one per macrotask) while the engine is reloaded 100
// times with two alternating valid rulesets and, in between, invalid ones. Checked: events fed =
// events evaluated; every batch's alerts come from exactly one ruleset (all alerts of a batch
// name the same rule, and the batch's ruleset is the one running when it was judged); an
// invalid ruleset never replaces the running one. Also the compile worker's idle stop and the
// onCompilerBusy ticks while it builds.
import { setImmediate as tick } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { toEvents } from '../../support/differential.js';

const ruleset = (name: string) => [{ name: `${name}.yaml`, text: `- rule: ${name}\n  desc: d\n  condition: evt.type = openat and proc.name = cat\n  output: ${name} %proc.name\n  priority: WARNING\n` }];
const INVALID = [{ name: 'bad.yaml', text: `- rule: bad\n  desc: d\n  condition: evt.type = openat and proc.nme = cat\n  output: x\n  priority: WARNING\n` }];
const BATCH = 256;
// compileTimeoutMs 0: no build deadline, which would race a busy machine's load (the bound has its own test, compile-bounds).
const events = toEvents(
  Array.from({ length: BATCH }, (_, i) => ({ 'evt.type': i % 2 ? 'openat' : 'execve', 'proc.name': 'cat' })),
  'syscall',
);

test('hot swap: 100 swaps under load, no event lost, each batch judged by one ruleset', async () => {
  let alerts: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', compileTimeoutMs: 0, onAlert: (a) => alerts.push(a.rule) });
  assert.ok((await engine.load(ruleset('A'))).swapped);
  let fed = 0;
  let batches = 0;
  let stop = false;
  const seen = new Set<string>();
  const feeder = (async () => {
    while (!stop) {
      const running = engine.rulesetGeneration % 2 === 1 ? 'A' : 'B';
      alerts = [];
      engine.evaluate(events);
      fed += events.length;
      batches++;
      assert.is(alerts.length, BATCH / 2);
      assert.ok(
        alerts.every((r) => r === alerts[0]),
        `a batch mixed rulesets: ${[...new Set(alerts)].join(', ')}`,
      );
      assert.is(alerts[0], running, 'the batch was judged by the ruleset running at the time');
      seen.add(alerts[0]!);
      await tick();
    }
  })();
  let swaps = 0;
  for (let i = 0; i < 100; i++) {
    if (i % 10 === 5) {
      const bad = await engine.load(INVALID);
      assert.not.ok(bad.swapped, 'an invalid ruleset is rejected');
      assert.match(bad.result.diagnostics.map((d) => d.message).join('\n'), 'proc.nme');
    }
    const r = await engine.load(ruleset(i % 2 === 0 ? 'B' : 'A'));
    assert.ok(r.swapped, JSON.stringify(r.errors));
    swaps++;
    await tick();
  }
  stop = true;
  await feeder;
  assert.is(swaps, 100);
  assert.is(engine.rulesetGeneration, 101);
  assert.is(engine.stats.swaps, 101);
  assert.is(engine.eventsEvaluated, fed, 'events fed = events evaluated');
  assert.is(engine.stats.failedBatches, 0);
  assert.ok(batches >= 100, `only ${batches} batches ran during the swaps`);
  assert.equal([...seen].sort(), ['A', 'B']);
  await engine.close();
});

test('the compile worker stops after compilerIdleMs without a load and starts again for the next one', async () => {
  const alerts: string[] = [];
  let idleStops = 0;
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', compileTimeoutMs: 0, compilerIdleMs: 300, onCompilerIdleStop: () => idleStops++, onAlert: (a) => alerts.push(a.rule) });
  assert.ok((await engine.load(ruleset('C'))).swapped);
  // No assertion that the worker still runs when load() returns: on a loaded machine the 300 ms
  // idle timer may already have fired by then. A build in the worker is what proves it ran.
  assert.is(engine.moduleBuilds, 1, 'C was built by the worker');
  const t0 = Date.now();
  while (engine.compileWorkerRunning && Date.now() - t0 < 300_000) await new Promise((r) => setTimeout(r, 50));
  assert.not.ok(engine.compileWorkerRunning, 'stopped once idle');
  // the hook runs once the worker has exited (rae run hands the memory the build freed back there)
  while (idleStops === 0 && Date.now() - t0 < 300_000) await new Promise((r) => setTimeout(r, 50));
  assert.is(idleStops, 1, 'onCompilerIdleStop ran once');
  engine.evaluate(events);
  assert.is(alerts.length, BATCH / 2, 'the running ruleset is unaffected');
  // A different condition: the same condition under another name generates the same module,
  // which the compiler's cache serves without a worker.
  const r = await engine.load(ruleset('D').map((f) => ({ ...f, text: f.text.replace('proc.name = cat', 'proc.name in (cat, tac)') })));
  assert.ok(r.swapped && r.tier === 'wasm', JSON.stringify(r.errors));
  assert.is(engine.moduleBuilds, 2, 'a new worker built D (the old one had stopped)');
  alerts.length = 0;
  engine.evaluate(events);
  assert.equal([...new Set(alerts)], ['D']);
  await engine.close();
  assert.not.ok(engine.compileWorkerRunning);
});

test('a load right after the idle stop is not failed by the old worker exiting', async () => {
  for (let round = 0; round < 3; round++) {
    const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', compileTimeoutMs: 0, compilerIdleMs: 100, onAlert: () => undefined });
    assert.ok((await engine.load(ruleset(`E${round}`).map((f) => ({ ...f, text: f.text.replace('proc.name = cat', `proc.name = cat${round}`) })))).swapped);
    while (engine.compileWorkerRunning) await new Promise((r) => setTimeout(r, 5));
    // the stopped worker's exit event comes after this load has sent its request to a new worker
    const r = await engine.load(ruleset(`F${round}`).map((f) => ({ ...f, text: f.text.replace('proc.name = cat', `proc.name = dog${round}`) })));
    assert.ok(r.swapped, JSON.stringify(r.errors));
    await engine.close();
  }
});

test('onCompilerBusy runs while a build is in the worker and once when it ends, then not again', async () => {
  let ticks = 0;
  let ticksAtLoad = -1;
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', compileTimeoutMs: 0, onCompilerBusy: () => ticks++, onAlert: () => undefined });
  assert.is(ticks, 0, 'no build yet');
  const r = await engine.load(ruleset('E'));
  ticksAtLoad = ticks;
  assert.ok(r.swapped && r.tier === 'wasm', JSON.stringify(r.errors));
  assert.is(engine.moduleBuilds, 1, 'E was built by the worker');
  // at least the tick when the build ended (rae run releases the build's freed memory there)
  assert.ok(ticksAtLoad >= 1, `onCompilerBusy ran ${ticksAtLoad} times`);
  // the ticks stop with the build: the worker idles (it is not stopped: compilerIdleMs 0)
  await new Promise((res) => setTimeout(res, 1000));
  assert.is(ticks, ticksAtLoad, 'no tick without a build');
  assert.ok(engine.compileWorkerRunning);
  await engine.close();
});

test.run();
