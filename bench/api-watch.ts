// Benchmark `api-watch`: how soon an EngineAuditRules object applied, changed or deleted through
// the orchestrator's API is live in the engine's rules (issue #32: "within a second on a quiet
// machine"; a figure to read, never a test's assertion). The Kubernetes API test server
// (support/kube-api-test-server.ts: HTTPS, bearer token, the kinds of deploy/base/crds) is watched
// through the real client (kube-api.ts) by startResources beside an empty directory, with the
// built-in sets compiled at start, while the main thread feeds batches of 256 decoded syscall
// events without pause (as `reload`). Each round, on one object `canary`:
//   apply_to_live_ms    created -> the first alert of its rule
//   change_to_live_ms   its rule renamed and pointed at another directory -> the first alert of the new rule
//   delete_to_live_ms   deleted -> the first batch, begun after the delete, in which its rule no longer fires
// Before each step the previous ruleset has reached its compiled tier, so every step starts from a
// settled engine. Each figure is the median over the rounds, with max, rounds and events fed /
// evaluated. Run it alone on a quiet machine: `npm run bench -- api-watch`.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinRulesFiles, DEFAULT_BUILTIN } from '../host/engine/builtin.js';
import type { SourceEvent } from '../host/engine/source-event.js';
import { loadKubeConfig, moduleKinds } from '../host/resources/kube-api.js';
import { startResources } from '../host/resources/module.js';
import { DetectionEngine } from '../host/runtime/detection-engine.js';
import { readReplayInput } from '../host/sources/replay.js';
import { moduleTestKinds } from '../support/kube-api-module-kinds.js';
import { startKubeApiTestServer } from '../support/kube-api-test-server.js';
import { figure, median, progress } from './report.js';

const S = 'api-watch';
const ROUNDS = 10;
const BATCH = 256;
const GROUP = 'deckhouse.io';
const VERSION = 'v1alpha1';

/** The object `canary` whose one rule `rule` fires on a read below /srv/<dir>/. */
const canary = (rule: string, dir: string) => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'EngineAuditRules',
  metadata: { name: 'canary' },
  spec: { rules: [{ rule: { name: rule, desc: 'A file below a canary directory was opened.', condition: `open_read and fd.name startswith /srv/${dir}/`, output: 'Canary file opened (file=%fd.name)', priority: 'Critical' } }] },
});

/** A batch of reads below each of `dirs` among other events. */
function events(dirs: string[]): SourceEvent[] {
  const open = (name: string, proc: string) => ({ 'evt.type': 'openat', 'evt.is_open_read': true, 'fd.typechar': 'f', 'fd.num': 3, 'fd.name': name, 'proc.name': proc, 'container.id': 'host' });
  const rows = [...dirs.map((d) => open(`/srv/${d}/secret`, 'app')), open('/etc/shadow', 'cat'), open('/tmp/x', 'app'), { 'evt.type': 'execve', 'proc.name': 'sh', 'proc.pname': 'node' }];
  const one = readReplayInput(rows.map((fields) => JSON.stringify({ source: 'syscall', fields })).join('\n'), 'fields').events;
  return Array.from({ length: BATCH }, (_, k) => one[k % one.length]!);
}

/** Waits for a condition, polling every 2 ms. */
async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`bench ${S}: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Runs the scenario. */
export async function run(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rae-bench-api-watch-'));
  const api = await startKubeApiTestServer({ kinds: moduleTestKinds() });
  api.apply({ apiVersion: `${GROUP}/${VERSION}`, kind: 'ModuleConfig', metadata: { name: 'runtime-audit-engine' }, spec: { enabled: true, version: 1 } });
  const dir = join(root, 'resources');
  mkdirSync(dir);
  /** Alerts so far, by rule; the first alert's time, by rule. */
  const count = new Map<string, number>();
  const firstAlert = new Map<string, number>();
  const engine = new DetectionEngine({
    ruleMatching: 'first',
    minPriority: 'Debug',
    hostname: 'bench',
    onAlert: (a) => {
      count.set(a.rule, (count.get(a.rule) ?? 0) + 1);
      if (!firstAlert.has(a.rule)) firstAlert.set(a.rule, performance.now());
    },
  });
  const resources = await startResources({
    dir,
    apiGroup: GROUP,
    engine,
    baseFiles: (sel) => builtinRulesFiles(sel).files,
    defaultBuiltIn: DEFAULT_BUILTIN,
    onModuleState: () => {},
    reporter: { log: () => {}, alert: () => {}, hostname: 'bench' },
    cluster: { kinds: moduleKinds(loadKubeConfig(api.writeKubeconfig(join(root, 'kubeconfig'))), GROUP, VERSION), syncTimeoutMs: 60_000 },
  });
  let batch = events([]);
  let fed = 0;
  let running = true;
  /** A deletion being timed: resolved with the start of the first batch after `since` in which `rule` did not fire. */
  let gone: { rule: string; since: number; resolve(at: number): void } | undefined;
  const feeder = new Promise<void>((resolve) => {
    const turn = () => {
      if (!running) return resolve();
      const w = gone;
      const started = performance.now();
      const before = w ? (count.get(w.rule) ?? 0) : 0;
      engine.evaluate(batch);
      fed += batch.length;
      if (w && started > w.since && (count.get(w.rule) ?? 0) === before) {
        gone = undefined;
        w.resolve(started);
      }
      setImmediate(turn);
    };
    setImmediate(turn);
  });
  const settled = (ups: number) => until(() => engine.stats.tierUps > ups, 'the compiled tier');
  const applied: number[] = [];
  const changed: number[] = [];
  const deleted: number[] = [];
  try {
    for (let i = 1; i <= ROUNDS; i++) {
      const [first, second] = [`Canary ${i}`, `Canary ${i} changed`];
      batch = events([`canary-${i}`, `canary-${i}-changed`]);
      let ups = engine.stats.tierUps;
      let t0 = performance.now();
      api.apply(canary(first, `canary-${i}`));
      await until(() => firstAlert.has(first), first);
      applied.push(firstAlert.get(first)! - t0);
      await settled(ups);

      ups = engine.stats.tierUps;
      t0 = performance.now();
      api.apply(canary(second, `canary-${i}-changed`));
      await until(() => firstAlert.has(second), second);
      changed.push(firstAlert.get(second)! - t0);
      await settled(ups);

      ups = engine.stats.tierUps;
      t0 = performance.now();
      const at = new Promise<number>((resolve) => {
        gone = { rule: second, since: t0, resolve };
      });
      api.remove('EngineAuditRules', 'canary');
      deleted.push((await at) - t0);
      await settled(ups);
      progress(`round ${i}: apply -> live ${Math.round(applied.at(-1)!)} ms, change -> live ${Math.round(changed.at(-1)!)} ms, delete -> live ${Math.round(deleted.at(-1)!)} ms`);
    }
  } finally {
    running = false;
    await feeder;
    resources.close();
    await resources.idle();
    await engine.close();
    await api.close();
    rmSync(root, { recursive: true, force: true });
  }
  const extra = (xs: number[]) => ({ max: Math.round(Math.max(...xs)), rounds: xs.length, events_fed: fed, events_evaluated: engine.eventsEvaluated, batch: BATCH });
  figure(S, 'apply_to_live_ms', median(applied), 'ms', extra(applied));
  figure(S, 'change_to_live_ms', median(changed), 'ms', extra(changed));
  figure(S, 'delete_to_live_ms', median(deleted), 'ms', extra(deleted));
}
