// ModuleConfig and EngineAuditRules from the orchestrator's API, through the real client
// (@kubernetes/client-node over HTTPS, a kubeconfig with the CA and a bearer token) against the
// in-repo test server (support/kube-api-test-server.ts). Two levels:
//   - the list-watch (cluster.ts): every change is delivered exactly once, in a snapshot; a watch
//     reset mid-stream resumes from its resourceVersion (no list, nothing lost); a 410 relists
//     (a deletion in the gap is seen); a reconnect or relist that finds nothing new delivers nothing;
//   - the module (startResources with the engine): applying, changing and deleting an object
//     changes the running rules; an invalid object is rejected with its located diagnostic and
//     the running rules stay; the first ruleset already has the objects listed at start.
// Waits are for the state itself, with wide deadlines (the machine may be loaded).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RulesFile } from '../../host/engine/index.js';
import { startClusterResources } from '../../host/resources/cluster.js';
import { loadKubeConfig, moduleKinds } from '../../host/resources/kube-api.js';
import { startResources } from '../../host/resources/module.js';
import type { ManifestFile } from '../../host/resources/watch.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { type KubeApiTestServer, startKubeApiTestServer, type TestKind } from '../../support/kube-api-test-server.js';
import { waitFor } from '../../support/real-servers.js';

const GROUP = 'deckhouse.io';
const VERSION = 'v1alpha1';
const KINDS: TestKind[] = [
  { group: GROUP, version: VERSION, plural: 'moduleconfigs', kind: 'ModuleConfig', namespaced: false },
  { group: GROUP, version: VERSION, plural: 'engineauditrules', kind: 'EngineAuditRules', namespaced: false, status: true },
  { group: GROUP, version: VERSION, plural: 'namespacedengineauditrules', kind: 'NamespacedEngineAuditRules', namespaced: true },
];
/** Every kind is listed and watched on its own. */
const N = KINDS.length;
const DEADLINE = 120_000;

const moduleConfig = (enabled: boolean) => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'ModuleConfig', metadata: { name: 'runtime-audit-engine' }, spec: { enabled, version: 1 } });
/** An EngineAuditRules `name` whose one rule `rule` fires on an open of `path`. */
const rules = (name: string, rule: string, path: string, priority = 'Warning') => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'EngineAuditRules',
  metadata: { name },
  spec: { rules: [{ rule: { name: rule, desc: 'd', condition: `opened and fd.name = ${path}`, output: `${rule} %fd.name`, priority } }] },
});

/** A tiny built-in set (the controller only sees files): the macro `opened`. */
const BASE: RulesFile = { name: 'rules/syscall/base.yaml', text: '- macro: opened\n  condition: evt.type in (open, openat)\n' };

async function server(): Promise<{ api: KubeApiTestServer; root: string; kubeconfig: string }> {
  const api = await startKubeApiTestServer({ kinds: KINDS, bookmarkMs: 100 });
  const root = mkdtempSync(join(tmpdir(), 'rae-api-watch-'));
  return { api, root, kubeconfig: api.writeKubeconfig(join(root, 'kubeconfig')) };
}

/** The list-watch alone: every snapshot it delivers, as `name@spec-path` strings. */
async function clusterSetup() {
  const { api, root, kubeconfig } = await server();
  api.apply(moduleConfig(true));
  api.apply(rules('a', 'A', '/srv/a1'));
  const snapshots: string[][] = [];
  const logs: string[] = [];
  const cluster = startClusterResources({
    kinds: moduleKinds(loadKubeConfig(kubeconfig), GROUP, VERSION),
    retryMs: 50,
    log: (m) => logs.push(m),
    onChange: async (files: ManifestFile[]) => {
      snapshots.push(files.map((f) => `${f.path}${/fd\.name = (\S+)/.exec(f.text ?? '')?.[1] ?? ''}`));
    },
  });
  const last = () => snapshots.at(-1) ?? [];
  const watchRequests = () => api.requests.filter((r) => r.query.watch === 'true');
  const listRequests = () => api.requests.filter((r) => r.method === 'GET' && r.query.watch === undefined);
  /** Every watch open again after `before` watch requests. */
  const reconnected = (before: number) => waitFor(() => watchRequests().length >= before + N && api.openWatches() === N, 'every watch open again', DEADLINE);
  return {
    api,
    cluster,
    snapshots,
    logs,
    last,
    watchRequests,
    listRequests,
    reconnected,
    async dispose() {
      cluster.close();
      await cluster.idle();
      await api.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

const A1 = ['cluster/engineauditrules/a.yaml/srv/a1', 'cluster/moduleconfigs/runtime-audit-engine.yaml'];

test('list-watch: the first list, then each change delivered once; a reset mid-stream resumes from its resourceVersion', async () => {
  const s = await clusterSetup();
  try {
    assert.ok(await s.cluster.whenSynced(DEADLINE), 'listed');
    await waitFor(() => s.snapshots.length === 1 && s.api.openWatches() === N, 'the first snapshot and every watch', DEADLINE);
    assert.equal(s.snapshots, [A1]);
    // Every watch asks for bookmarks and starts at the list's resourceVersion.
    for (const w of s.watchRequests()) {
      assert.is(w.query.allowWatchBookmarks, 'true');
      assert.is(w.query.resourceVersion, '3');
    }

    // Changes while the connections are cut: they come from the history on the next watch.
    const watchesBefore = s.watchRequests().length;
    assert.is(s.api.resetWatches(), N);
    s.api.apply(rules('a', 'A', '/srv/a2'));
    s.api.apply(rules('c', 'C', '/srv/c1'));
    await waitFor(() => s.last().includes('cluster/engineauditrules/c.yaml/srv/c1') && s.last().includes('cluster/engineauditrules/a.yaml/srv/a2'), 'a changed and c added', DEADLINE);
    await s.reconnected(watchesBefore);
    assert.is(s.listRequests().length, N, 'resumed, not listed again');
    // Each resumes from the last resourceVersion it saw (the list's; bookmarks carried the same).
    const resumedFrom = s
      .watchRequests()
      .slice(watchesBefore, watchesBefore + N)
      .map((w) => w.query.resourceVersion);
    assert.equal(resumedFrom, Array(N).fill('3'));
    const afterChanges = s.snapshots.length;
    assert.ok(afterChanges === 2 || afterChanges === 3, `${afterChanges} snapshots`);

    // A cut inside a line, with nothing changed: the half line is dropped, nothing is delivered.
    const before = s.watchRequests().length;
    s.api.resetWatches({ partial: true });
    await s.reconnected(before);
    s.api.apply(rules('d', 'D', '/srv/d1'));
    await waitFor(() => s.last().includes('cluster/engineauditrules/d.yaml/srv/d1'), 'd added', DEADLINE);
    assert.is(s.snapshots.length, afterChanges + 1, 'only the snapshot of d');
    assert.equal(s.last(), ['cluster/engineauditrules/a.yaml/srv/a2', 'cluster/engineauditrules/c.yaml/srv/c1', 'cluster/engineauditrules/d.yaml/srv/d1', 'cluster/moduleconfigs/runtime-audit-engine.yaml']);
    assert.not.ok(
      s.last().some((p) => p.includes('cut-short')),
      'the half line is not an object',
    );
  } finally {
    await s.dispose();
  }
});

test('list-watch: 410 Gone relists once; a deletion in the gap is seen; a relist that finds the same objects delivers nothing', async () => {
  const s = await clusterSetup();
  try {
    await waitFor(() => s.snapshots.length === 1 && s.api.openWatches() === N, 'the first snapshot and every watch', DEADLINE);
    s.api.apply(rules('c', 'C', '/srv/c1'));
    await waitFor(() => s.snapshots.length === 2, 'c added', DEADLINE);

    // The connections cut; c is deleted and e added meanwhile, and the history is compacted.
    s.api.resetWatches();
    s.api.remove('EngineAuditRules', 'c');
    s.api.apply(rules('e', 'E', '/srv/e1'));
    s.api.compact();
    await waitFor(() => s.snapshots.length === 3, 'the relisted snapshot', DEADLINE);
    assert.equal(s.last(), ['cluster/engineauditrules/a.yaml/srv/a1', 'cluster/engineauditrules/e.yaml/srv/e1', 'cluster/moduleconfigs/runtime-audit-engine.yaml']);
    await waitFor(() => s.listRequests().length === 2 * N && s.api.openWatches() === N, 'every kind listed again and watched', DEADLINE);
    assert.ok(
      s.logs.some((l) => /watch of EngineAuditRules at resourceVersion \d+ expired \(410 Gone\): listing again/.test(l)),
      s.logs.join('\n'),
    );

    // Again with nothing watched changed (only an object of another kind, which moves the
    // resourceVersion on): every kind relists, nothing is delivered; the next change is delivered once.
    s.api.resetWatches();
    s.api.apply({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'elsewhere', namespace: 'default' }, spec: {} });
    s.api.compact();
    await waitFor(() => s.listRequests().length === 3 * N && s.api.openWatches() === N, 'every kind listed again', DEADLINE);
    s.api.apply(rules('f', 'F', '/srv/f1'));
    await waitFor(() => s.last().includes('cluster/engineauditrules/f.yaml/srv/f1'), 'f added', DEADLINE);
    assert.is(s.snapshots.length, 4, s.snapshots.map((x) => x.join(' ')).join('\n'));
  } finally {
    await s.dispose();
  }
});

/** The module: startResources with the engine and the cluster's kinds beside an empty directory. */
async function moduleSetup(seed: (api: KubeApiTestServer) => void) {
  const { api, root, kubeconfig } = await server();
  seed(api);
  const dir = join(root, 'resources');
  mkdirSync(dir);
  const alerts: string[] = [];
  const logs: string[] = [];
  const loads: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', onAlert: (a) => alerts.push(a.rule), engine: 'interpreter' });
  const resources = await startResources({
    dir,
    apiGroup: GROUP,
    engine,
    baseFiles: () => [BASE],
    defaultBuiltIn: ['syscall'],
    onModuleState: () => undefined,
    onRulesLoaded: (_r, summary) => loads.push(summary),
    reporter: { log: (m) => logs.push(m), alert: () => undefined, hostname: 'h' },
    cluster: { kinds: moduleKinds(loadKubeConfig(kubeconfig), GROUP, VERSION), syncTimeoutMs: DEADLINE, retryMs: 50 },
  });
  /** The rules that fire on an open of `path`. */
  const fire = (path: string): string[] => {
    alerts.length = 0;
    engine.evaluate(readReplayInput(JSON.stringify({ fields: { 'evt.type': 'openat', 'fd.name': path, 'proc.name': 'p' } }), 'fields').events);
    return [...alerts];
  };
  return {
    api,
    resources,
    logs,
    loads,
    fire,
    async dispose() {
      resources.close();
      await resources.idle();
      await api.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

test('module: objects listed at start are in the first ruleset; apply, change, delete follow; an invalid object keeps the running rules', async () => {
  const s = await moduleSetup((api) => {
    api.apply(moduleConfig(true));
    api.apply(rules('a', 'A', '/srv/a1'));
  });
  try {
    assert.is(s.loads.length, 1, s.loads.join('\n'));
    assert.match(s.loads[0]!, 'EngineAuditRules: a');
    assert.equal(s.resources.state, { enabled: true, debugLogging: false, builtIn: ['syscall'] });
    assert.equal(s.fire('/srv/a1'), ['A']);

    s.api.apply(rules('a', 'A', '/srv/a2'));
    await waitFor(() => s.fire('/srv/a2').includes('A'), 'the changed rule', DEADLINE);
    assert.equal(s.fire('/srv/a1'), []);

    s.api.apply(rules('b', 'B', '/srv/b1'));
    await waitFor(() => s.fire('/srv/b1').includes('B'), 'the new rule', DEADLINE);

    s.api.remove('EngineAuditRules', 'a');
    await waitFor(() => s.fire('/srv/a2').length === 0, 'the deleted rule gone', DEADLINE);
    assert.equal(s.fire('/srv/b1'), ['B']);
    const loads = s.loads.length;
    assert.is(loads, 4, s.loads.join('\n'));

    // Invalid: rejected with the diagnostic located in the rendered object; B keeps firing.
    s.api.apply(rules('b', 'B', '/srv/b2', 'Urgent'));
    await waitFor(() => s.logs.some((l) => l.includes('resources: rejected EngineAuditRules/b')), 'the rejection', DEADLINE);
    const log = s.logs.join('\n');
    assert.match(log, /cluster\/engineauditrules\/b\.yaml:\d+:\d+: error LOAD_ERR_YAML_VALIDATE/);
    assert.match(log, 'resources: rejected EngineAuditRules/b at cluster/engineauditrules/b.yaml:1:1: 1 error(s); the running rules stay');
    assert.equal(s.fire('/srv/b1'), ['B']);
    assert.equal(s.fire('/srv/b2'), []);
    assert.is(s.loads.length, loads);

    // The ModuleConfig from the API: deleting it disables the module.
    s.api.remove('ModuleConfig', 'runtime-audit-engine');
    await waitFor(() => s.resources.state?.enabled === false, 'the module disabled', DEADLINE);
  } finally {
    await s.dispose();
  }
});

test.run();
