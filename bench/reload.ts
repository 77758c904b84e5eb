// Benchmark `reload`: how soon a changed ruleset is live while a replay load runs. The engine
// holds the built-in sets (syscall + orchestrator-audit, compiled at start); the main thread
// feeds batches of 256 decoded syscall events, one per macrotask, without pause. Measured over
// rounds, each with a new canary rule (its own directory constant, so no compile cache hit):
//   change_to_live_ms       manifest written into the watched directory -> first alert of its
//                           rule (resources controller, interpreter tier)
//   change_to_compiled_ms   manifest written -> the same ruleset running on its compiled module
//   change_to_live_without_tier_ms  load() -> first alert when the ruleset is compiled first (the
//                           behaviour before the interpreter tier), for comparison
// Every figure is a median; max, rounds and events fed / evaluated ride along.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinRulesFiles, DEFAULT_BUILTIN } from '../host/engine/builtin.js';
import { startResources } from '../host/resources/index.js';
import { DetectionEngine } from '../host/runtime/detection-engine.js';
import { readReplayInput } from '../host/sources/replay.js';
import type { SourceEvent } from '../host/engine/source-event.js';
import { figure, median, progress } from './report.js';

const S = 'reload';
const ROUNDS = 5;
const BATCH = 256;
const H = 'apiVersion: deckhouse.io/v1alpha1\n';

/** The canary rule (files below `<dir>/canary-<i>/`) as EngineAuditRules items (`nested`) or as a Falco rules file. */
function canary(i: number, nested: boolean, dir = '/srv'): string {
  const cond = `open_read and fd.name pmatch (canary_dirs_${i})`;
  const items: Array<[string, string, Array<[string, string]>]> = [
    ['list', `canary_dirs_${i}`, [['items', `[${dir}/canary-${i}/]`]]],
    [
      'rule',
      `Canary ${i}`,
      [
        ['desc', 'A file below a canary directory was opened.'],
        ['condition', cond],
        ['output', 'Canary file opened (file=%fd.name)'],
        ['priority', 'Critical'],
      ],
    ],
  ];
  return items
    .map(([kind, name, fields]) => (nested ? `    - ${kind}:\n        name: ${name}\n${fields.map(([k, v]) => `        ${k}: ${v}\n`).join('')}` : `- ${kind}: ${name}\n${fields.map(([k, v]) => `  ${k}: ${v}\n`).join('')}`))
    .join('');
}
/** The canary rule as an EngineAuditRules manifest (files below `<dir>/canary-<i>/`). */
export const manifest = (i: number, dir?: string) => `${H}kind: EngineAuditRules\nmetadata:\n  name: canary\nspec:\n  rules:\n${canary(i, true, dir)}`;

function events(i: number): SourceEvent[] {
  const open = (name: string, proc: string) => ({ 'evt.type': 'openat', 'evt.is_open_read': true, 'fd.typechar': 'f', 'fd.num': 3, 'fd.name': name, 'proc.name': proc, 'container.id': 'host' });
  const rows = [open(`/srv/canary-${i}/secret`, 'app'), open('/etc/shadow', 'cat'), open('/tmp/x', 'app'), { 'evt.type': 'execve', 'proc.name': 'sh', 'proc.pname': 'node' }];
  const one = readReplayInput(rows.map((fields) => JSON.stringify({ source: 'syscall', fields })).join('\n'), 'fields').events;
  return Array.from({ length: BATCH }, (_, k) => one[k % one.length]!);
}

/** Waits for a condition, polling every 2 ms. */
async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`bench reload: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Runs the scenario. */
export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-reload-'));
  writeFileSync(join(dir, 'module.yaml'), `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: true\n  version: 1\n`);
  const firstAlert = new Map<string, number>();
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'bench', onAlert: (a) => void (firstAlert.has(a.rule) || firstAlert.set(a.rule, performance.now())) });
  const resources = await startResources({
    dir,
    apiGroup: 'deckhouse.io',
    engine,
    baseFiles: (sel) => builtinRulesFiles(sel).files,
    defaultBuiltIn: DEFAULT_BUILTIN,
    onModuleState: () => {},
    reporter: { log: () => {}, alert: () => {}, hostname: 'bench' },
  });
  let batch = events(0);
  let fed = 0;
  let running = true;
  const feeder = new Promise<void>((resolve) => {
    const turn = () => {
      if (!running) return resolve();
      engine.evaluate(batch);
      fed += batch.length;
      setImmediate(turn);
    };
    setImmediate(turn);
  });
  const live: number[] = [];
  const compiled: number[] = [];
  const direct: number[] = [];
  try {
    for (let i = 1; i <= ROUNDS; i++) {
      batch = events(i);
      const ups = engine.stats.tierUps;
      const t0 = performance.now();
      writeFileSync(join(dir, 'canary.yaml'), manifest(i));
      await until(() => firstAlert.has(`Canary ${i}`), `Canary ${i}`);
      live.push(firstAlert.get(`Canary ${i}`)! - t0);
      await until(() => engine.stats.tierUps > ups, 'the compiled tier');
      compiled.push(performance.now() - t0);
      progress(`round ${i}: manifest -> first alert ${Math.round(live.at(-1)!)} ms (load() to live ${Math.round(engine.stats.lastChangeToLiveMs)} ms), -> compiled ${Math.round(compiled.at(-1)!)} ms`);
    }
    resources.close();
    for (let i = ROUNDS + 1; i <= 2 * ROUNDS; i++) {
      batch = events(i);
      const t0 = performance.now();
      const r = await engine.load([...builtinRulesFiles(DEFAULT_BUILTIN).files, { name: 'canary.yaml', text: canary(i, false) }]);
      if (!r.swapped) throw new Error(`bench reload: the canary ruleset did not load: ${[...r.result.diagnostics.map((d) => d.message), ...(r.errors ?? []).map((e) => e.message)].join('; ')}`);
      await until(() => firstAlert.has(`Canary ${i}`), `Canary ${i}`);
      direct.push(firstAlert.get(`Canary ${i}`)! - t0);
      progress(`round ${i}: load() compiled first -> first alert ${Math.round(direct.at(-1)!)} ms`);
    }
  } finally {
    running = false;
    await feeder;
    resources.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const extra = (xs: number[]) => ({ max: Math.round(Math.max(...xs)), rounds: xs.length, events_fed: fed, events_evaluated: engine.eventsEvaluated, batch: BATCH });
  figure(S, 'change_to_live_ms', median(live), 'ms', extra(live));
  figure(S, 'change_to_compiled_ms', median(compiled), 'ms', extra(compiled));
  figure(S, 'change_to_live_without_tier_ms', median(direct), 'ms', extra(direct));
}
