// The status of the module's objects through the API: two engines ("nodes", each startResources
// with its own engine and status writer, as two DaemonSet pods) against the test server
// (support/kube-api-test-server.ts, serving the kinds of deploy/base/crds). Each publishes its node
// report in a Lease; one of them holds the writer Lease and writes the status subresource:
// Ready=True with the node count when both run the object's generation, Ready=False with the
// located diagnostic when they reject it (and the running rules stay), and when the writer stops,
// the other takes the Lease over (one transition) and the stopped node drops out of the count.
// A NamespacedEngineAuditRules object and the ModuleConfig get the same status. The CRDs' printer
// columns read that status.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RulesFile } from '../../host/engine/index.js';
import { loadKubeConfig, moduleKinds, statusApi } from '../../host/resources/kube-api.js';
import { startResources } from '../../host/resources/module.js';
import type { RulesStatus } from '../../host/resources/status.js';
import { WRITER_LEASE, type Lease } from '../../host/resources/status-writer.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { moduleTestKinds } from '../../support/kube-api-module-kinds.js';
import { type KubeApiTestServer, startKubeApiTestServer, type StoredObject } from '../../support/kube-api-test-server.js';
import { waitFor } from '../../support/real-servers.js';

const GROUP = 'deckhouse.io';
const VERSION = 'v1alpha1';
const NS = 'd8-runtime-audit-engine';
/** The kinds as deployed: their status subresources and printer columns are what the server serves. */
const KINDS = moduleTestKinds();
const run = promisify(execFile);
const DEADLINE = 120_000;
const BASE: RulesFile = { name: 'rules/syscall/base.yaml', text: '- macro: opened\n  condition: evt.type in (open, openat)\n' };

const rules = (path: string, priority = 'Warning') => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'EngineAuditRules',
  metadata: { name: 'a' },
  spec: { rules: [{ rule: { name: 'A', desc: 'd', condition: `opened and fd.name = ${path}`, output: 'A %fd.name', priority } }] },
});

/** One engine with its status writer (short periods: the test waits for what they write). */
async function startNode(api: KubeApiTestServer, root: string, node: string) {
  const kc = loadKubeConfig(api.writeKubeconfig(join(root, `${node}.kubeconfig`)));
  const dir = join(root, node);
  mkdirSync(dir);
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: node, onAlert: (a) => alerts.push(a.rule), engine: 'interpreter' });
  const resources = await startResources({
    dir,
    apiGroup: GROUP,
    engine,
    baseFiles: () => [BASE],
    defaultBuiltIn: ['syscall'],
    onModuleState: () => undefined,
    reporter: { log: () => undefined, alert: () => undefined, hostname: node },
    cluster: {
      kinds: moduleKinds(kc, GROUP, VERSION),
      syncTimeoutMs: DEADLINE,
      retryMs: 50,
      status: { api: statusApi(kc, GROUP, VERSION), namespace: NS, node, periodMs: 100, leaseDurationSeconds: 2 },
    },
  });
  /** The rules an open of `path` fires (by a process of a pod of namespace `ns`, when given). */
  const fire = (path: string, ns?: string): string[] => {
    alerts.length = 0;
    engine.evaluate(readReplayInput(JSON.stringify({ fields: { 'evt.type': 'openat', 'fd.name': path, 'proc.name': 'p', ...(ns ? { 'k8s.ns.name': ns } : {}) } }), 'fields').events);
    return [...alerts];
  };
  return {
    node,
    fire,
    state: () => resources.state,
    async stop() {
      resources.close();
      await resources.idle();
    },
  };
}

test('status: Ready with the node count, Ready=False with the located diagnostic, one writer through a Lease, taken over when it stops', async () => {
  const api = await startKubeApiTestServer({ kinds: KINDS, bookmarkMs: 100 });
  const root = mkdtempSync(join(tmpdir(), 'rae-api-status-'));
  const nodes: Array<Awaited<ReturnType<typeof startNode>>> = [];
  try {
    api.apply({ apiVersion: `${GROUP}/${VERSION}`, kind: 'ModuleConfig', metadata: { name: 'runtime-audit-engine' }, spec: { enabled: true, version: 1 } });
    api.apply(rules('/srv/a1'));
    nodes.push(await startNode(api, root, 'n1'), await startNode(api, root, 'n2'));
    const object = () => api.get('EngineAuditRules', 'a') as StoredObject & { status?: RulesStatus };
    const ready = () => object().status?.conditions.find((c) => c.type === 'Ready');
    const writerLease = () => api.get('Lease', WRITER_LEASE, NS) as Lease | undefined;

    // Both nodes run generation 1.
    await waitFor(() => ready()?.status === 'True' && object().status?.readyNodes === 2, 'Ready=True on 2 nodes', DEADLINE);
    assert.equal(object().status, {
      observedGeneration: 1,
      nodes: 2,
      readyNodes: 2,
      diagnostics: [],
      conditions: [{ type: 'Ready', status: 'True', reason: 'Loaded', message: 'loaded on 2 of 2 nodes', observedGeneration: 1, lastTransitionTime: ready()!.lastTransitionTime }],
    });
    const holder = writerLease()!.spec!.holderIdentity!;
    assert.ok(['n1', 'n2'].includes(holder), holder);
    assert.equal(api.get('Lease', 'runtime-audit-engine-node-n1', NS)?.metadata.labels, { 'runtime-audit-engine.deckhouse.io/report': 'node' });

    // kubectl shows it with the CRD's printer columns (the server's Table, the client's rendering).
    const kubectl = async (...args: string[]) => (await run('kubectl', ['--kubeconfig', join(root, 'n1.kubeconfig'), '--cache-dir', join(root, 'kube-cache'), ...args], { encoding: 'utf8' })).stdout;
    const [header, row, ...more] = (await kubectl('get', 'ear', '-o', 'wide'))
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    assert.equal(header, ['NAME', 'READY', 'REASON', 'NODES', 'OF', 'AGE', 'MESSAGE']);
    assert.equal([...row!.slice(0, 5), ...row!.slice(6)], ['a', 'True', 'Loaded', '2', '2', 'loaded', 'on', '2', 'of', '2', 'nodes']);
    assert.match(row![5]!, /^\d+s$/);
    assert.equal(more, []);

    // Generation 2 is invalid: rejected on both, the status says where; the running rules stay.
    api.apply(rules('/srv/a2', 'Urgent'));
    await waitFor(() => ready()?.status === 'False' && object().status?.observedGeneration === 2 && ready()!.message.startsWith('rejected on 2 of 2 nodes'), 'Ready=False for generation 2 on both nodes', DEADLINE);
    const st = object().status!;
    assert.is(ready()!.reason, 'Invalid');
    assert.match(st.diagnostics[0]!, /^cluster\/engineauditrules\/a\.yaml:\d+:\d+: 'spec\.rules\[0\]\.rule\.priority' must be one of .*, not "Urgent"$/);
    assert.is(ready()!.message, `rejected on 2 of 2 nodes, whose running rules stay: ${st.diagnostics[0]}`);
    assert.is(st.readyNodes, 0);
    for (const n of nodes) assert.equal(n.fire('/srv/a1'), ['A'], n.node);

    // Generation 3 fixes it.
    api.apply(rules('/srv/a3'));
    await waitFor(() => ready()?.status === 'True' && object().status?.observedGeneration === 3 && object().status?.readyNodes === 2, 'Ready=True for generation 3', DEADLINE);
    assert.is(writerLease()!.spec!.leaseTransitions, 0, 'one writer all along');

    // The writer stops: the other takes the Lease over once it expires, and counts one node.
    const writer = nodes.find((n) => n.node === holder)!;
    await writer.stop();
    nodes.splice(nodes.indexOf(writer), 1);
    await waitFor(() => writerLease()?.spec?.holderIdentity !== holder && object().status?.nodes === 1, 'the other node writing, one node counted', DEADLINE);
    assert.is(writerLease()!.spec!.leaseTransitions, 1);
    assert.equal({ status: ready()!.status, ready: object().status!.readyNodes }, { status: 'True', ready: 1 });
  } finally {
    for (const n of nodes) await n.stop();
    await api.close();
    rmSync(root, { recursive: true, force: true });
  }
});

const moduleConfig = (settings: object) => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'ModuleConfig', metadata: { name: 'runtime-audit-engine' }, spec: { enabled: true, version: 1, settings } });
const namespaced = (path: string, priority = 'Warning') => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'NamespacedEngineAuditRules',
  metadata: { name: 'canary', namespace: 'team-a' },
  spec: { rules: [{ rule: { name: 'Canary', desc: 'd', condition: `opened and fd.name = ${path}`, output: 'canary %fd.name', priority } }] },
});

test('status of a NamespacedEngineAuditRules and of the ModuleConfig: Ready with observedGeneration, Ready=False with the located diagnostic while what runs stays', async () => {
  const api = await startKubeApiTestServer({ kinds: KINDS, bookmarkMs: 100 });
  const root = mkdtempSync(join(tmpdir(), 'rae-api-status-'));
  let node: Awaited<ReturnType<typeof startNode>> | undefined;
  try {
    api.apply(moduleConfig({ debugLogging: false }));
    api.apply(namespaced('/srv/n1'));
    node = await startNode(api, root, 'n1');
    const status = (kind: string, name: string, ns?: string) => (api.get(kind, name, ns) as (StoredObject & { status?: RulesStatus }) | undefined)?.status;
    const near = () => status('NamespacedEngineAuditRules', 'canary', 'team-a');
    const mc = () => status('ModuleConfig', 'runtime-audit-engine');
    const ready = (s: RulesStatus | undefined) => s?.conditions.find((c) => c.type === 'Ready');
    const loaded = (s: RulesStatus | undefined) => ({
      observedGeneration: 1,
      nodes: 1,
      readyNodes: 1,
      diagnostics: [],
      conditions: [{ type: 'Ready', status: 'True', reason: 'Loaded', message: 'loaded on 1 of 1 node', observedGeneration: 1, lastTransitionTime: ready(s)?.lastTransitionTime }],
    });
    await waitFor(() => ready(near())?.status === 'True' && ready(mc())?.status === 'True', 'Ready=True on both objects', DEADLINE);
    assert.equal(near(), loaded(near()));
    assert.equal(mc(), loaded(mc()));
    assert.equal(node.fire('/srv/n1', 'team-a'), ['team-a/Canary']);

    // kubectl shows the namespaced object's status with its CRD's printer columns.
    const kubeconfig = join(root, 'n1.kubeconfig');
    const out = (await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(root, 'kube-cache'), 'get', 'near', '-n', 'team-a'], { encoding: 'utf8' })).stdout;
    const [header, row] = out
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    assert.equal(header, ['NAME', 'READY', 'REASON', 'NODES', 'OF', 'AGE']);
    assert.equal(row!.slice(0, 5), ['canary', 'True', 'Loaded', '1', '1']);

    // Generation 2 of each is invalid: both Ready=False with the first diagnostic, located in the
    // object as rendered; the namespaced rule and the module settings in force stay.
    api.apply(namespaced('/srv/n2', 'Urgent'));
    api.apply(moduleConfig({ builtInRulesList: ['Fstec'] }));
    await waitFor(() => ready(near())?.status === 'False' && near()?.observedGeneration === 2 && ready(mc())?.status === 'False' && mc()?.observedGeneration === 2, 'Ready=False for generation 2 of both', DEADLINE);
    assert.is(ready(near())!.reason, 'Invalid');
    assert.match(near()!.diagnostics[0]!, /^cluster\/namespacedengineauditrules\/team-a\/canary\.yaml:\d+:\d+: 'spec\.rules\[0\]\.rule\.priority' must be one of .*, not "Urgent"$/);
    assert.is(ready(near())!.message, `rejected on 1 of 1 node, whose running rules stay: ${near()!.diagnostics[0]}`);
    assert.is(ready(mc())!.reason, 'Invalid');
    assert.match(mc()!.diagnostics[0]!, /^cluster\/moduleconfigs\/runtime-audit-engine\.yaml:\d+:\d+: 'spec\.settings\.builtInRulesList\[0\]' must be one of .*, not "Fstec"$/);
    assert.is(ready(mc())!.message, `rejected on 1 of 1 node, whose module settings stay: ${mc()!.diagnostics[0]}`);
    assert.equal({ near: near()!.readyNodes, mc: mc()!.readyNodes }, { near: 0, mc: 0 });
    assert.equal(node.fire('/srv/n1', 'team-a'), ['team-a/Canary']);
    assert.equal(node.state(), { enabled: true, debugLogging: false, builtIn: ['syscall'] });
  } finally {
    await node?.stop();
    await api.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
