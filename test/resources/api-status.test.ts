// The EngineAuditRules status through the API: two engines ("nodes", each startResources with its
// own engine and status writer, as two DaemonSet pods) against the test server
// (support/kube-api-test-server.ts). Each publishes its node report in a Lease; one of them holds
// the writer Lease and writes the status subresource: Ready=True with the node count when both run
// the object's generation, Ready=False with the located diagnostic when they reject it (and the
// running rules stay), and when the writer stops, the other takes the Lease over (one transition)
// and the stopped node drops out of the count. The CRD's printer columns read that status.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import type { RulesFile } from '../../host/engine/index.js';
import { loadKubeConfig, moduleKinds, statusApi } from '../../host/resources/kube-api.js';
import { startResources } from '../../host/resources/module.js';
import type { RulesStatus } from '../../host/resources/status.js';
import { WRITER_LEASE, type Lease } from '../../host/resources/status-writer.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { type KubeApiTestServer, type PrinterColumn, startKubeApiTestServer, type StoredObject, type TestKind } from '../../support/kube-api-test-server.js';
import { waitFor } from '../../support/real-servers.js';

const GROUP = 'deckhouse.io';
const VERSION = 'v1alpha1';
const NS = 'd8-runtime-audit-engine';
const EAR = { group: GROUP, version: VERSION, plural: 'engineauditrules', kind: 'EngineAuditRules' };
/** The CRD as deployed: its status subresource and printer columns are what the server serves. */
const CRD = parse(readFileSync(resolve(import.meta.dirname, '../../deploy/base/crds/engineauditrules.yaml'), 'utf8')) as {
  spec: { names: { shortNames: string[] }; versions: Array<{ additionalPrinterColumns: PrinterColumn[]; subresources?: { status?: object } }> };
};
const VERSION_SPEC = CRD.spec.versions[0]!;
const KINDS: TestKind[] = [
  { group: GROUP, version: VERSION, plural: 'moduleconfigs', kind: 'ModuleConfig', namespaced: false },
  { ...EAR, namespaced: false, status: VERSION_SPEC.subresources?.status !== undefined, printerColumns: VERSION_SPEC.additionalPrinterColumns, shortNames: CRD.spec.names.shortNames },
  { group: GROUP, version: VERSION, plural: 'namespacedengineauditrules', kind: 'NamespacedEngineAuditRules', namespaced: true },
];
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
      status: { api: statusApi(kc, EAR), namespace: NS, node, periodMs: 100, leaseDurationSeconds: 2 },
    },
  });
  const fire = (path: string): string[] => {
    alerts.length = 0;
    engine.evaluate(readReplayInput(JSON.stringify({ fields: { 'evt.type': 'openat', 'fd.name': path, 'proc.name': 'p' } }), 'fields').events);
    return [...alerts];
  };
  return {
    node,
    fire,
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

test.run();
