// Failure isolation (issue 19, item 5): a batch that fails is split and judged again until the
// events that fail on their own are found; every other event gets its alerts exactly once (the
// matches of a failed call are thrown away), the failed ones are counted by reason, reported
// once and announced by one internal alert. Checked with a real trap (a compiled rule module
// whose first rule executes `unreachable` on the events it matches), with a real stack overflow
// in the host (an event whose field accessor recurses without end) on both engines, on the
// kernel byte path (records judged again in place), and the bisection itself against a table
// of failing sets and budgets.
import { KernelIngest } from '../../host/sources/syscall/ingest.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateModule } from '../../host/engine/codegen/index.js';
import type { Alert } from '../../host/output/alert.js';
import { compileAssemblyScript } from '../../host/runtime/compile.js';
import { DetectionEngine, selectRules } from '../../host/runtime/detection-engine.js';
import { runtimeError } from '../../host/runtime/errors.js';
import { EVALUATION_FAILED_RULE } from '../../host/runtime/failure-report.js';
import { judgeIsolated, type Judgment } from '../../host/runtime/isolate.js';
import type { SourceEvent } from '../../host/engine/source-event.js';
import { encodeProcRecord } from '../../host/sources/syscall/procfs.js';
import { toEvents } from '../../support/differential.js';
import { openat, procInfo } from '../../support/kernel-records.js';

const RULES = [
  {
    name: 'r.yaml',
    text: '- rule: trap\n  desc: d\n  condition: evt.type = openat and proc.name = trap\n  output: t\n  priority: WARNING\n- rule: opens\n  desc: d\n  condition: evt.type = openat\n  output: opened by %proc.name\n  priority: WARNING\n',
  },
];
const N = 1000;
const TRAPS = [3, 500, 501, 999];
const events = toEvents(
  Array.from({ length: N }, (_, i) => ({ 'evt.type': 'openat', 'proc.name': TRAPS.includes(i) ? 'trap' : `p${i}` })),
  'syscall',
);

/** A test engine whose drops, errors and alerts are recorded. */
function recorder(engineKind: 'wasm' | 'interpreter' = 'wasm') {
  const dropped: string[] = [];
  const errors: string[] = [];
  const alerts: Alert[] = [];
  const metrics = { compileTime: () => {}, eventsDropped: (source: string, reason: string, n = 1) => void dropped.push(`${source}/${reason}/${n}`) };
  const engine = new DetectionEngine({
    ruleMatching: 'all',
    minPriority: 'Debug',
    kernel: new KernelIngest({ hostname: 'h' }),
    hostname: 'h',
    engine: engineKind,
    metrics,
    onAlert: (a) => alerts.push(a),
    onError: (e) => errors.push(e.code),
  });
  return { engine, dropped, errors, alerts };
}

/** How many times each process name was alerted by the rule `opens`. */
function opensBy(alerts: readonly Alert[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const a of alerts) if (a.rule === 'opens') out.set(String(a.outputFields['proc.name']), (out.get(String(a.outputFields['proc.name'])) ?? 0) + 1);
  return out;
}

/** Loads `rules` and swaps in the same ruleset's module with rule 0 made to trap on the events it matches. */
async function loadTrapping(engine: DetectionEngine, rules: typeof RULES): Promise<void> {
  const loaded = await engine.load(rules);
  assert.ok(loaded.swapped);
  const generated = generateModule(selectRules(loaded.result.ruleset.rules, 'Debug')).module!;
  const code = generated.code.replace('function R0(e: usize): bool {', 'function R0(e: usize): bool { if (R0c(e)) unreachable(); return false; }\nfunction R0c(e: usize): bool {');
  assert.is.not(code, generated.code);
  const built = await compileAssemblyScript(code);
  assert.ok(built.ok, built.ok ? '' : built.message);
  if (!built.ok) return;
  const wasm = new Uint8Array(built.wasm);
  assert.ok(engine.swapCompiled({ generated, module: new WebAssembly.Module(wasm), wasm, compileMs: 0, warmMs: 0 }, loaded.result).ok);
}

test('isolation: a module that traps on 4 of 1000 events; the 996 others alert exactly once', async () => {
  const { engine, dropped, errors, alerts } = recorder();
  await loadTrapping(engine, RULES);

  assert.is(engine.evaluate(events), N - TRAPS.length);
  const by = opensBy(alerts);
  assert.is(by.size, N - TRAPS.length);
  assert.ok(
    [...by.values()].every((n) => n === 1),
    'no event alerted twice',
  );
  assert.not.ok(by.has('trap'));
  assert.equal(dropped, [`syscall/trap/${TRAPS.length}`]);
  assert.equal(errors, ['ETRAP']);
  const internal = alerts.filter((a) => a.rule === EVALUATION_FAILED_RULE);
  assert.is(internal.length, 1);
  assert.equal(internal[0]!.outputFields, { n_failed: 4, n_batch: N, reason: 'trap', error: 'ETRAP' });
  assert.is(engine.stats.failedBatches, 1);
  assert.is(engine.stats.failedEvents, TRAPS.length);
  assert.is(engine.eventsEvaluated, N);
  // The next batch without a trapping event is judged in one call.
  const calls = engine.stats.failedCalls;
  assert.is(engine.evaluate(events.filter((_, i) => !TRAPS.includes(i))), N - TRAPS.length);
  assert.is(engine.stats.failedCalls, calls);
  await engine.close();
});

test('isolation: the kernel byte path judges ranges of its records again; 297 of 300 opens alert exactly once', async () => {
  const { engine, dropped, errors, alerts } = recorder();
  const kernelRules = [{ name: 'k.yaml', text: RULES[0]!.text.replace('proc.name = trap', 'fd.name = /trap').replace('opened by %proc.name', 'opened %fd.name') }];
  await loadTrapping(engine, kernelRules);
  const buf = new Uint8Array(1 << 20);
  let off = encodeProcRecord(procInfo(401, 1, 'cat'), buf, 0, 1n);
  const traps = [0, 150, 299];
  for (let i = 0; i < 300; i++) off += openat(buf, off, 401, traps.includes(i) ? '/trap' : `/f${i}`);
  assert.is(engine.evaluateKernel(buf, off), 297);
  const opened = alerts.filter((a) => a.rule === 'opens').map((a) => String(a.outputFields['fd.name']));
  assert.is(opened.length, 297);
  assert.is(new Set(opened).size, 297, 'no record alerted twice');
  assert.not.ok(opened.includes('/trap'));
  assert.equal(dropped, ['syscall/trap/3']);
  assert.equal(errors, ['ETRAP']);
  assert.is(alerts.filter((a) => a.rule === EVALUATION_FAILED_RULE).length, 1);
  assert.is(engine.eventsEvaluated, 300);
  await engine.close();
});

/** An event whose field reads exhaust the stack (a real RangeError, as a value nested too deep gives). */
function exhausting(ev: SourceEvent): SourceEvent {
  const recurse = (n: number): number => recurse(n + 1) + 1;
  return { ...ev, fields: { field: () => String(recurse(0)) } };
}

for (const kind of ['wasm', 'interpreter'] as const) {
  test(`isolation: an event that overflows the stack in the host is dropped alone (${kind})`, async () => {
    const { engine, dropped, errors, alerts } = recorder(kind);
    assert.ok((await engine.load(RULES)).swapped);
    const batch = events.map((ev, i) => (i === 10 ? exhausting(ev) : ev)).filter((_, i) => !TRAPS.includes(i));
    assert.is(engine.evaluate(batch), batch.length - 1);
    const by = opensBy(alerts);
    assert.is(by.size, batch.length - 1);
    assert.ok(
      [...by.values()].every((n) => n === 1),
      'no event alerted twice',
    );
    assert.not.ok(by.has('p10'));
    assert.equal(dropped, ['syscall/trap/1']);
    assert.equal(errors, ['ETRAP']);
    assert.is(alerts.filter((a) => a.rule === EVALUATION_FAILED_RULE).length, 1);
    await engine.close();
  });
}

/** A judge over n events that fails every range holding one of `bad`; records what each event was judged ok by. */
function tableJudge(bad: ReadonlySet<number>, timeout = false) {
  const okCalls: number[] = [];
  const judge = (start: number, count: number): Judgment<number> => {
    for (let i = start; i < start + count; i++) if (bad.has(i)) return { ok: false, error: runtimeError(timeout ? 'ETIMEOUT' : 'ETRAP', 'bad') };
    const out = Array.from({ length: count }, (_, k) => start + k);
    okCalls.push(...out);
    return { ok: true, out };
  };
  return { judge, okCalls };
}

type Row = [name: string, n: number, bad: number[], budget: { maxFailedCalls: number; maxTimeouts: number }, timeout: boolean, failed: Array<[number, number]>];
const rows: Row[] = [
  ['nothing fails', 8, [], { maxFailedCalls: 64, maxTimeouts: 8 }, false, []],
  ['one bad event among 1024', 1024, [700], { maxFailedCalls: 64, maxTimeouts: 8 }, false, [[700, 1]]],
  [
    'every event bad',
    8,
    [0, 1, 2, 3, 4, 5, 6, 7],
    { maxFailedCalls: 64, maxTimeouts: 8 },
    false,
    [
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
      [5, 1],
      [6, 1],
      [7, 1],
    ],
  ],
  [
    'the trap budget runs out: waiting ranges are judged once, unsplit',
    16,
    [0, 15],
    { maxFailedCalls: 3, maxTimeouts: 8 },
    false,
    [
      [0, 4],
      [8, 8],
    ],
  ],
  ['timeouts: 8 stops isolate one slow event among 128', 128, [77], { maxFailedCalls: 64, maxTimeouts: 8 }, true, [[77, 1]]],
  ["timeouts: past the budget the slow event's range fails whole, the rest is judged", 1024, [77], { maxFailedCalls: 64, maxTimeouts: 8 }, true, [[72, 8]]],
  [
    'timeouts: one more stop after the budget fails what still waits',
    1024,
    [77, 100],
    { maxFailedCalls: 64, maxTimeouts: 8 },
    true,
    [
      [72, 8],
      [96, 32],
      [128, 128],
      [256, 256],
      [512, 512],
    ],
  ],
];

for (const [name, n, bad, budget, timeout, failed] of rows) {
  test(`isolation table: ${name}`, () => {
    const { judge, okCalls } = tableJudge(new Set(bad), timeout);
    const r = judgeIsolated(n, judge, budget);
    assert.equal(
      r.failed.map((f) => [f.start, f.count]),
      failed,
    );
    const lost = new Set(r.failed.flatMap((f) => Array.from({ length: f.count }, (_, k) => f.start + k)));
    const expected = Array.from({ length: n }, (_, i) => i).filter((i) => !lost.has(i));
    assert.equal(r.out, expected, 'outputs in event order, each once');
    assert.equal(
      [...okCalls].sort((a, b) => a - b),
      expected,
      'each event judged fine by exactly one call',
    );
    assert.ok(r.failedCalls <= budget.maxFailedCalls + Math.ceil(Math.log2(n)) && r.timeouts <= budget.maxTimeouts + 1, `${r.failedCalls} failed calls, ${r.timeouts} timeouts`);
  });
}

test.run();
