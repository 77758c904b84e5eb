// Compile bounds (issue 19, item 6): a rule with 10,000 `or` terms mixing fields and operators
// compiles through the worker and judges like the reference interpreter; a compile past its
// deadline stops the worker, fails the load and keeps the running ruleset; a newer load stops the
// compile of an older one instead of waiting for it; a worker that runs out of heap fails the
// load, not the process; an oversized condition is a located load error.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../host/engine/index.js';
import { RuleMatcher } from '../../host/engine/matcher.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { toEvents } from '../../support/differential.js';

/** The i-th term: five fields, string equality (merged into sets), prefixes, substrings and numbers. */
const TERMS = [(i: number) => `proc.name=a${i}`, (i: number) => `fd.name=/x${i}`, (i: number) => `proc.cmdline startswith s${i}-`, (i: number) => `fd.name contains /c${i}/`, (i: number) => `proc.pid=${100000 + i}`];
const bigRule = (name: string, n: number) => ({
  name: `${name}.yaml`,
  text: `- rule: ${name}\n  desc: d\n  condition: evt.type = openat and (${Array.from({ length: n }, (_, i) => TERMS[i % TERMS.length]!(i)).join(' or ')})\n  output: ${name} %proc.name\n  priority: WARNING\n`,
});
const small = (name: string, proc = 'cat') => [{ name: `${name}.yaml`, text: `- rule: ${name}\n  desc: d\n  condition: evt.type = openat and proc.name = ${proc}\n  output: ${name} %proc.name\n  priority: WARNING\n` }];
const engineWith = (alerts: string[], extra: Partial<ConstructorParameters<typeof DetectionEngine>[0]> = {}) =>
  new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', onAlert: (a) => alerts.push(a.rule), onError: () => undefined, ...extra });
const catOpens = toEvents([{ 'evt.type': 'openat', 'proc.name': 'cat' }], 'syscall');

test('a 10,000-term or of five fields and four operators compiles and judges like the interpreter', async () => {
  const files = [bigRule('big', 10_000)];
  const alerts: string[] = [];
  const engine = engineWith(alerts);
  const r = await engine.load(files);
  assert.ok(r.swapped, JSON.stringify(r.errors));
  assert.is(r.tier, 'wasm');
  const base = { 'evt.type': 'openat', 'proc.name': 'zz', 'fd.name': '/none', 'proc.cmdline': 'none', 'proc.pid': 1 };
  const cases = [
    { ...base, 'proc.name': 'a9995' },
    { ...base, 'fd.name': '/x1' },
    { ...base, 'proc.cmdline': 's9997-run' },
    { ...base, 'fd.name': '/p/c9998/q' },
    { ...base, 'proc.pid': 109999 },
    { ...base, 'proc.name': 'a9996' }, // a9996 is not a term (9996 is fd.name's)
    { ...base, 'fd.name': '/c9998' },
    base,
    { ...base, 'evt.type': 'execve', 'proc.name': 'a0' },
  ];
  const events = toEvents(cases, 'syscall');
  const matcher = new RuleMatcher(loadRules(files).ruleset, { ruleMatching: 'first', minPriority: 'Debug' });
  const expected = events.map((ev) => matcher.match(ev.source, ev.evtType, ev.fields).length > 0);
  assert.equal(expected, [true, true, true, true, true, false, false, false, false]);
  const got = events.map((ev) => {
    alerts.length = 0;
    engine.evaluate([ev]);
    return alerts.length > 0;
  });
  assert.equal(got, expected);
  await engine.close();
});

test('a compile past its deadline stops the worker and fails the load; the running ruleset stays and the next load compiles', async () => {
  const alerts: string[] = [];
  const engine = engineWith(alerts);
  assert.ok((await engine.load(small('A'))).swapped);
  engine.compileTimeoutMs = 1;
  const slow = await engine.load([bigRule('big', 1000)]);
  assert.not.ok(slow.swapped);
  assert.is(slow.errors?.[0]?.code, 'ECOMPILETIMEOUT');
  assert.match(slow.errors![0]!.message, 'deadline of 1 ms');
  assert.not.ok(engine.compileWorkerRunning, 'the worker was stopped');
  assert.is(engine.ruleset?.ruleset.rules[0]?.name, 'A');
  engine.evaluate(catOpens);
  assert.equal(alerts, ['A'], 'the running ruleset still judges');
  engine.compileTimeoutMs = 0;
  const next = await engine.load(small('B', 'tac').map((f) => ({ ...f, text: f.text.replace('proc.name = tac', 'proc.name in (cat, tac)') })));
  assert.ok(next.swapped && next.tier === 'wasm' && next.from === 'build', JSON.stringify(next.errors));
  alerts.length = 0;
  engine.evaluate(catOpens);
  assert.equal(alerts, ['B']);
  await engine.close();
});

test('a newer load stops the compile of an older one instead of waiting for it', async () => {
  const alerts: string[] = [];
  const engine = engineWith(alerts);
  assert.ok((await engine.load(small('A'))).swapped);
  const order: string[] = [];
  const big = engine.load([bigRule('big', 3000)]).then((r) => (order.push('big'), r));
  const next = engine.load(small('B', 'tac').map((f) => ({ ...f, text: f.text.replace('proc.name = tac', 'proc.name in (cat, tac)') }))).then((r) => (order.push('B'), r));
  const [b, n] = await Promise.all([big, next]);
  assert.not.ok(b.swapped, 'the older ruleset never went live');
  assert.is(b.errors?.[0]?.code, 'ECANCELED');
  assert.ok(n.swapped && n.tier === 'wasm', JSON.stringify(n.errors));
  assert.equal(order, ['big', 'B']);
  engine.evaluate(catOpens);
  assert.equal(alerts, ['B']);
  await engine.close();
});

test('interpreter-first: a newer load stops the older tier-up compile, which never produces a module', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-compile-bounds-'));
  try {
    const engine = engineWith([], { moduleCacheDir: dir });
    assert.ok((await engine.load(small('A'))).swapped);
    assert.is(readdirSync(dir).length, 1, 'A is in the module cache');
    const big = await engine.load([bigRule('big', 3000)], { interpreterFirst: true });
    const next = await engine.load(small('B', 'tac'), { interpreterFirst: true });
    assert.equal(await big.compiled, { state: 'superseded' });
    assert.is((await next.compiled)?.state, 'wasm');
    // every finished build lands in the cache: the big ruleset's never finished
    assert.is(readdirSync(dir).filter((f) => f.endsWith('.wasm')).length, 2, 'only A and B were built');
    assert.is(engine.stats.tierUps, 1);
    await engine.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a compile worker out of heap fails the load, not the process; the running ruleset stays', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-compile-bounds-'));
  try {
    // A built by a normal worker into the module cache, so the capped engine starts without compiling
    const first = engineWith([], { moduleCacheDir: dir });
    assert.ok((await first.load(small('A'))).swapped);
    await first.close();
    const alerts: string[] = [];
    const engine = engineWith(alerts, { moduleCacheDir: dir, compileWorkerHeapMb: 64 });
    const a = await engine.load(small('A'));
    assert.ok(a.swapped && a.from === 'disk');
    for (let i = 0; i < 2; i++) {
      const r = await engine.load([bigRule(`big${i}`, 10_000)]);
      assert.not.ok(r.swapped);
      assert.is(r.errors?.[0]?.code, 'EWORKER', JSON.stringify(r.errors));
      assert.match(r.errors![0]!.message, 'out of memory');
      assert.not.ok(engine.compileWorkerRunning);
    }
    engine.evaluate(catOpens);
    assert.equal(alerts, ['A']);
    await engine.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the 10,000-term rule is within the default expansion budget; one over a lower budget is a located load error', () => {
  assert.ok(loadRules([bigRule('big', 10_000)]).ok, 'the default budget admits it');
  const r = loadRules([bigRule('big', 50)], { limits: { maxNodes: 40 } });
  assert.not.ok(r.ok);
  const d = r.diagnostics.find((x) => x.severity === 'error')!;
  assert.is(d.code, 'RAE_ERR_EXPANSION_LIMIT');
  const at = d.locations.at(-1)!.position;
  assert.equal([at.name, at.line], ['big.yaml', 3]);
  assert.ok(loadRules([bigRule('big', 50)], { limits: { maxNodes: 200 } }).ok);
});

test.run();
