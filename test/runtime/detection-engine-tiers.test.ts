// The detection engine's tiers: an interpreter-first load puts a valid ruleset live at once on the
// reference interpreter and moves it to its compiled module when ready. Checked under a running
// load: each batch judged by exactly one ruleset, events fed = events evaluated across both kinds
// of swap, superseded compiles thrown away (only the newest ruleset reaches WASM), an invalid
// ruleset never replaces the running one on either tier; a rule the code generator cannot
// compile is a load error (the running WASM ruleset stays); close() ends a pending compile; the
// interpreter tier's regexes never backtrack; until the tier-up the kernel byte path judges the
// new ruleset with the last compiled module (rules in common) and the interpreter (the others).
import { KernelIngest } from '../../host/sources/syscall/ingest.js';
import { setImmediate as tick } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMetrics } from '../../host/metrics/index.js';
import { DetectionEngine, type TierUp } from '../../host/runtime/detection-engine.js';
import { encodeProcRecord } from '../../host/sources/syscall/procfs.js';
import { toEvents } from '../../support/differential.js';
import { openat, procInfo } from '../../support/kernel-records.js';

const rule = (name: string, condition = 'evt.type = openat and proc.name = cat') => [{ name: `${name}.yaml`, text: `- rule: ${name}\n  desc: d\n  condition: ${condition}\n  output: ${name} %proc.name\n  priority: WARNING\n` }];
const INVALID = [{ name: 'bad.yaml', text: `- rule: bad\n  desc: d\n  condition: evt.type = openat and proc.nme = cat\n  output: x\n  priority: WARNING\n` }];
// A regex RE2 and the checker accept, over the compiled evaluator's budget of positions: refused at load.
const UNCOMPILABLE = rule('U', "evt.type = openat and proc.name regex 'ca{0,600}t'");
const BATCH = 256;
const events = toEvents(
  Array.from({ length: BATCH }, (_, i) => ({ 'evt.type': i % 2 ? 'openat' : 'execve', 'proc.name': 'cat' })),
  'syscall',
);
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
      assert.ok(
        alerts.list.every((r) => r === alerts.list[0]),
        `a batch mixed rulesets: ${[...new Set(alerts.list)].join(', ')}`,
      );
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
  const engine = new DetectionEngine({ ...options, kernel: new KernelIngest({ hostname: 'h' }), onAlert: (a) => alerts.list.push(a.rule) });
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
  assert.ok(
    states.every((s) => s === 'wasm' || s === 'superseded'),
    states.join(','),
  );
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

test('tiers: a rule the code generator cannot compile is a load error: the set is refused and the running one stays on WASM', async () => {
  const alerts = { list: [] as string[] };
  const errors: string[] = [];
  const metrics = createMetrics({ processMetrics: false });
  const engine = new DetectionEngine({ ...options, kernel: new KernelIngest({ hostname: 'h' }), metrics, onAlert: (a) => alerts.list.push(a.rule), onError: (e) => errors.push(`${e.code}: ${e.message}`) });
  assert.ok((await engine.load(rule('A'))).swapped);
  const r = await engine.load(UNCOMPILABLE, { interpreterFirst: true });
  assert.not.ok(r.swapped);
  assert.equal(
    r.result.diagnostics.map((d) => `${d.code}: ${d.message}`),
    ["RAE_ERR_UNSUPPORTED: regex 'ca{0,600}t' needs 602 positions, more than the 512 the compiled evaluator runs"],
  );
  assert.is(r.compiled, undefined);
  assert.is(engine.stats.tier, 'wasm');
  assert.is(engine.stats.tierFailures, 0);
  assert.match((await metrics.exposition()).body, 'enginesecurity_engine_evaluator_tier{tier="wasm"} 1');
  engine.evaluate(events);
  assert.is(alerts.list.length, BATCH / 2);
  assert.ok(
    alerts.list.every((a) => a === 'A'),
    'the running ruleset judges',
  );
  assert.equal(errors, []);
  await engine.close();
});

test('tiers: close() ends a pending compile; nothing is reported as a failure', async () => {
  const errors: string[] = [];
  const engine = new DetectionEngine({ ...options, kernel: new KernelIngest({ hostname: 'h' }), onAlert: () => {}, onError: (e) => errors.push(e.code) });
  assert.ok((await engine.load(rule('A'))).swapped);
  const r = await engine.load(rule('B'), { interpreterFirst: true });
  await engine.close();
  assert.equal(await r.compiled!, { state: 'closed' });
  assert.is(engine.stats.tier, 'interpreter');
  assert.is(engine.stats.tierFailures, 0);
  assert.equal(errors, []);
});

test('tiers: the interpreter tier runs a backtracking-prone regex in linear time (nothing for the watchdog to stop); the compiled module agrees after the tier-up', async () => {
  const errors: string[] = [];
  const engine = new DetectionEngine({ ...options, kernel: new KernelIngest({ hostname: 'h' }), watchdogMs: 300, onAlert: () => {}, onError: (e) => errors.push(e.code) });
  assert.ok((await engine.load(rule('A'))).swapped);
  const r = await engine.load(rule('R', "evt.type = openat and proc.name regex '(a+)+'"), { interpreterFirst: true });
  const evil = toEvents(
    [
      { 'evt.type': 'openat', 'proc.name': `${'a'.repeat(40)}b` },
      { 'evt.type': 'openat', 'proc.name': 'aaa' },
    ],
    'syscall',
  );
  assert.is(engine.stats.tier, 'interpreter');
  assert.is(engine.evaluate(evil), 1, 'the interpreter judges the whole batch');
  assert.is((await r.compiled!).state, 'wasm');
  assert.is(engine.evaluate(evil), 1, 'the compiled module judges the same batch alike');
  assert.is(engine.stats.timeouts, 0);
  assert.is(engine.stats.failedBatches, 0);
  assert.equal(errors, []);
  assert.is(engine.eventsEvaluated, 4);
  await engine.close();
});

test('tiers: the kernel byte path serves the interpreter-tier ruleset over the last compiled module; its thread table moves along at the tier-up', async () => {
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ...options, kernel: new KernelIngest({ hostname: 'h' }), onAlert: (a) => alerts.push(a.rule) });
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
  assert.is(engine.evaluateKernel(one, len), 1, 'judged for the new ruleset, the process known from the last compiled module');
  assert.is((await r.compiled!).state, 'wasm');
  assert.is(engine.evaluateKernel(one, len), 1, 'the process is known to the new module');
  assert.equal(alerts, ['K1', 'K2', 'K2']);
  assert.is(engine.eventsEvaluated, 3, 'syscall records evaluated');
  await engine.close();
});

// The running (compiled) ruleset, then its successor: one rule gone, one kept, one changed, two added
// (one before the others, one after the kept rule on the same files).
const OLD_SET = [{ name: 'old.yaml', text: ['Gone:/etc/shadow', 'Kept:/etc/passwd', 'Changed:/etc/hosts'].map((x) => ruleText(x)).join('') }];
const NEW_SET = [{ name: 'new.yaml', text: ['Added:/etc/shadow:sshd', 'Kept:/etc/passwd', 'Changed:/etc/group', 'AlsoPasswd:/etc/passwd'].map((x) => ruleText(x)).join('') }];
/** `name:file[:pname]` as a rule on openat of that file (by a child of pname). */
function ruleText(spec: string): string {
  const [name, file, pname] = spec.split(':');
  return `- rule: ${name}\n  desc: d\n  condition: evt.type = openat and fd.name = ${file}${pname ? ` and proc.pname = ${pname}` : ''}\n  output: ${name} %fd.name\n  priority: WARNING\n`;
}

for (const ruleMatching of ['first', 'all'] as const) {
  test(`tiers (${ruleMatching}): a new syscall rule alerts on the kernel byte path for an event right after its load is acknowledged, before its compile`, async () => {
    const alerts: string[] = [];
    const engine = new DetectionEngine({ ...options, ruleMatching, kernel: new KernelIngest({ hostname: 'h' }), onAlert: (a) => alerts.push(a.rule) });
    assert.ok((await engine.load(OLD_SET)).swapped);
    const procs = new Uint8Array(1024);
    let at = encodeProcRecord(procInfo(500, 1, 'sshd'), procs, 0, 1n);
    at += encodeProcRecord(procInfo(501, 500, 'cat'), procs, at, 1n);
    assert.is(engine.evaluateKernel(procs, at), 0);
    const opens = new Uint8Array(2048);
    let len = 0;
    for (const file of ['/etc/shadow', '/etc/passwd', '/etc/hosts', '/etc/group']) len += openat(opens, len, 501, file);
    const judge = () => {
      alerts.length = 0;
      engine.evaluateKernel(opens, len);
      return [...alerts];
    };
    assert.equal(judge(), ['Gone', 'Kept', 'Changed'], 'the running ruleset');
    const r = await engine.load(NEW_SET, { interpreterFirst: true });
    assert.ok(r.swapped, 'the change is acknowledged');
    assert.is(engine.stats.tier, 'interpreter', 'the new ruleset is not compiled yet');
    const expected = ruleMatching === 'first' ? ['Added', 'Kept', 'Changed'] : ['Added', 'Kept', 'AlsoPasswd', 'Changed'];
    assert.equal(judge(), expected, 'the byte path judges the new ruleset from the swap on');
    assert.is((await r.compiled!).state, 'wasm');
    assert.equal(judge(), expected, 'the compiled module agrees');
    assert.is(engine.eventsEvaluated, 12);
    assert.is(engine.stats.failedBatches, 0);
    await engine.close();
  });
}

test.run();
