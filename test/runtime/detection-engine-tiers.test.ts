// The detection engine's tiers: an interpreter-first load puts a valid ruleset live at once on the
// reference interpreter and moves it to its compiled module when ready. Checked under a running
// load: each batch judged by exactly one ruleset, events fed = events evaluated across both kinds
// of swap, superseded compiles thrown away (only the newest ruleset reaches WASM), an invalid
// ruleset never replaces the running one on either tier; a compile failure of a checked ruleset
// keeps the interpreter tier (reported, counted, in the tier gauge); close() ends a pending
// compile; the interpreter tier runs under the watchdog; the kernel byte path keeps the last
// compiled module until the tier-up.
import { setImmediate as tick } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateModule } from '../../host/engine/codegen/index.js';
import { loadRules } from '../../host/engine/index.js';
import { createMetrics } from '../../host/metrics/index.js';
import { DetectionEngine, type TierUp } from '../../host/runtime/detection-engine.js';
import { encodeProcRecord } from '../../host/sources/syscall/procfs.js';
import { toEvents } from './differential-helpers.js';
import { openat, procInfo } from './kernel-records.js';

const rule = (name: string, condition = 'evt.type = openat and proc.name = cat') => [
  { name: `${name}.yaml`, text: `- rule: ${name}\n  desc: d\n  condition: ${condition}\n  output: ${name} %proc.name\n  priority: WARNING\n` },
];
const INVALID = [{ name: 'bad.yaml', text: `- rule: bad\n  desc: d\n  condition: evt.type = openat and proc.nme = cat\n  output: x\n  priority: WARNING\n` }];
// Accepted by the checker, refused by the code generator (repetition counts above 100): a real compile failure.
const UNCOMPILABLE = rule('U', "evt.type = openat and proc.name regex 'ca{0,200}t'");
const BATCH = 256;
const events = toEvents(Array.from({ length: BATCH }, (_, i) => ({ 'evt.type': i % 2 ? 'openat' : 'execve', 'proc.name': 'cat' })), 'syscall');
const options = { ruleMatching: 'first' as const, minPriority: 'Debug' as const, hostname: 'h' };

/** Feeds one batch per macrotask; each batch must be judged by one ruleset, the one running when it ran. */
function feeder(engine: DetectionEngine, runningName: () => string, alerts: { list: string[] }) {
  let fed = 0;
  let batches = 0;
  let stop = false;
  const tiers = new Set<string>();
  const done = (async () => {
    while (!stop) {
      const expected = runningName();
      tiers.add(engine.stats.tier);
      alerts.list = [];
      engine.evaluate(events);
      fed += events.length;
      batches++;
      assert.is(alerts.list.length, BATCH / 2);
      assert.ok(alerts.list.every((r) => r === alerts.list[0]), `a batch mixed rulesets: ${[...new Set(alerts.list)].join(', ')}`);
      assert.is(alerts.list[0], expected, 'the batch was judged by the ruleset running at the time');
      await tick();
    }
  })();
  return {
    tiers,
    get fed() {
      return fed;
    },
    get batches() {
      return batches;
    },
    async stop() {
      stop = true;
      await done;
    },
  };
}

test('tiers: 60 interpreter-first swaps under load; superseded compiles dropped; only the newest reaches WASM', async () => {
  const alerts = { list: [] as string[] };
  const engine = new DetectionEngine({ ...options, onAlert: (a) => alerts.list.push(a.rule) });
  assert.ok((await engine.load(rule('R0'))).swapped);
  assert.is(engine.stats.tier, 'wasm');
  let running = 'R0';
  const feed = feeder(engine, () => running, alerts);
  const ups: Array<Promise<TierUp>> = [];
  for (let i = 1; i <= 60; i++) {
    if (i % 10 === 5) {
      const tier = engine.stats.tier;
      const bad = await engine.load(INVALID, { interpreterFirst: true });
      assert.not.ok(bad.swapped, 'an invalid ruleset is rejected');
      assert.is(bad.compiled, undefined);
      assert.is(engine.stats.tier, tier, 'the running ruleset keeps its tier');
    }
    const r = await engine.load(rule(`R${i}`), { interpreterFirst: true });
    assert.ok(r.swapped);
    assert.is(r.tier, 'interpreter');
    running = `R${i}`;
    ups.push(r.compiled!);
    assert.is(engine.stats.tier, 'interpreter', 'live on the interpreter right after load');
    // Mostly back to back (coalesced compiles), sometimes until the compiled tier is reached.
    if (i % 20 === 0) assert.equal((await r.compiled!).state, 'wasm');
    await tick();
  }
  const last = await ups.at(-1)!;
  assert.is(last.state, 'wasm');
  const outcomes = await Promise.all(ups);
  const states = outcomes.map((u) => u.state);
  assert.ok(states.every((s) => s === 'wasm' || s === 'superseded'), states.join(','));
  assert.is(engine.stats.tierUps, states.filter((s) => s === 'wasm').length);
  assert.ok(engine.stats.tierUps < 60, 'back-to-back loads were coalesced');
  assert.is(engine.stats.tier, 'wasm');
  for (let k = 0; k < 3; k++) await tick(); // a few batches on the compiled tier
  await feed.stop();
  assert.equal([...feed.tiers].sort(), ['interpreter', 'wasm']);
  assert.is(engine.rulesetGeneration, 61, 'a tier-up is not a new ruleset');
  assert.is(engine.stats.swaps, 61);
  assert.is(engine.eventsEvaluated, feed.fed, 'events fed = events evaluated');
  assert.is(engine.stats.failedBatches, 0);
  assert.ok(feed.batches >= 60, `only ${feed.batches} batches ran`);
  await engine.close();
});

test('tiers: a checked ruleset that does not compile stays on the interpreter, reported and counted', async () => {
  const checked = loadRules(UNCOMPILABLE);
  assert.ok(checked.ok, 'the checker accepts the ruleset');
  assert.ok(generateModule(checked.ruleset.rules).errors.length > 0, 'precondition: the code generator refuses it');
  const alerts = { list: [] as string[] };
  const errors: string[] = [];
  const metrics = createMetrics({ processMetrics: false });
  const engine = new DetectionEngine({ ...options, metrics, onAlert: (a) => alerts.list.push(a.rule), onError: (e) => errors.push(`${e.code}: ${e.message}`) });
  assert.ok((await engine.load(rule('A'))).swapped);
  assert.match((await metrics.exposition()).body, 'enginesecurity_engine_evaluator_tier{tier="wasm"} 1');
  const r = await engine.load(UNCOMPILABLE, { interpreterFirst: true });
  assert.ok(r.swapped);
  const up = await r.compiled!;
  assert.is(up.state, 'failed');
  assert.is(up.state === 'failed' ? up.errors[0]!.code : '', 'ECODEGEN');
  assert.is(errors.length, 1);
  assert.match(errors[0]!, /^ECODEGEN: the new ruleset stays on the reference interpreter: it does not compile \(ECODEGEN: rule 'U': regex/);
  assert.is(engine.stats.tier, 'interpreter');
  assert.is(engine.stats.tierFailures, 1);
  const text = (await metrics.exposition()).body;
  assert.match(text, 'enginesecurity_engine_ruleset_failures_total{reason="compile"} 1');
  assert.match(text, 'enginesecurity_engine_evaluator_tier{tier="interpreter"} 1');
  assert.match(text, 'enginesecurity_engine_evaluator_tier{tier="wasm"} 0');
  engine.evaluate(events);
  assert.is(alerts.list.length, BATCH / 2);
  assert.ok(alerts.list.every((a) => a === 'U'), 'the interpreter tier judges with the new rules');
  // An invalid ruleset leaves the interpreter tier running.
  assert.not.ok((await engine.load(INVALID, { interpreterFirst: true })).swapped);
  assert.is(engine.stats.tier, 'interpreter');
  alerts.list = [];
  engine.evaluate(events);
  assert.is(alerts.list[0], 'U');
  // A compilable ruleset gets back to WASM.
  const b = await engine.load(rule('B'), { interpreterFirst: true });
  assert.is((await b.compiled!).state, 'wasm');
  assert.is(engine.stats.tier, 'wasm');
  assert.is(engine.eventsEvaluated, 2 * BATCH);
  await engine.close();
});

test('tiers: close() ends a pending compile; nothing is reported as a failure', async () => {
  const errors: string[] = [];
  const engine = new DetectionEngine({ ...options, onAlert: () => {}, onError: (e) => errors.push(e.code) });
  assert.ok((await engine.load(rule('A'))).swapped);
  const r = await engine.load(rule('B'), { interpreterFirst: true });
  await engine.close();
  assert.equal(await r.compiled!, { state: 'closed' });
  assert.is(engine.stats.tier, 'interpreter');
  assert.is(engine.stats.tierFailures, 0);
  assert.equal(errors, []);
});

test('tiers: the interpreter tier runs under the watchdog (a backtracking regex fails its event, the other is judged); the compiled DFA judges it after the tier-up', async () => {
  const errors: string[] = [];
  const dropped: string[] = [];
  const metrics = { compileTime: () => {}, eventsDropped: (source: string, reason: string, n = 1) => void dropped.push(`${source}/${reason}/${n}`) };
  const engine = new DetectionEngine({ ...options, watchdogMs: 300, metrics, onAlert: () => {}, onError: (e) => errors.push(e.code) });
  assert.ok((await engine.load(rule('A'))).swapped);
  const r = await engine.load(rule('R', "evt.type = openat and proc.name regex '(a+)+'"), { interpreterFirst: true });
  const evil = toEvents([{ 'evt.type': 'openat', 'proc.name': `${'a'.repeat(40)}b` }, { 'evt.type': 'openat', 'proc.name': 'aaa' }], 'syscall');
  assert.is(engine.stats.tier, 'interpreter');
  assert.is(engine.evaluate(evil), 1, 'the runaway event fails alone; the other one is judged');
  assert.equal(errors, ['ETIMEOUT']);
  assert.equal(dropped, ['syscall/watchdog/1']);
  assert.is(engine.stats.timeouts, 1);
  assert.is((await r.compiled!).state, 'wasm');
  assert.is(engine.evaluate(evil), 1, 'the compiled module judges the same batch');
  assert.is(engine.stats.failedBatches, 1);
  assert.is(engine.eventsEvaluated, 4);
  await engine.close();
});

test('tiers: the kernel byte path keeps the last compiled module until the tier-up; its thread table moves along', async () => {
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ...options, onAlert: (a) => alerts.push(a.rule) });
  const cond = 'evt.type = openat and fd.name = /etc/shadow and proc.pname = sshd';
  assert.ok((await engine.load(rule('K1', cond))).swapped);
  const buf = new Uint8Array(4096);
  let off = encodeProcRecord(procInfo(400, 1, 'sshd'), buf, 0, 1n);
  off += encodeProcRecord(procInfo(401, 400, 'cat'), buf, off, 1n);
  off += openat(buf, off, 401, '/etc/shadow');
  assert.is(engine.evaluateKernel(buf, off), 1);
  const r = await engine.load(rule('K2', cond), { interpreterFirst: true });
  assert.is(engine.stats.tier, 'interpreter');
  const one = new Uint8Array(512);
  const len = openat(one, 0, 401, '/etc/shadow');
  assert.is(engine.evaluateKernel(one, len), 1, 'judged by the last compiled module');
  assert.is((await r.compiled!).state, 'wasm');
  assert.is(engine.evaluateKernel(one, len), 1, 'the process is known to the new module');
  assert.equal(alerts, ['K1', 'K1', 'K2']);
  assert.is(engine.eventsEvaluated, 3, 'syscall records evaluated');
  await engine.close();
});

test.run();
