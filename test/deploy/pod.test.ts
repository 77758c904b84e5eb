// deploy/ run for real: the engine image, built offline, in a private containerd, started from
// the rendered DaemonSet's pod template through CRI as a kubelet would (hostPID, the template's
// capabilities and no privileged, read-only root, hostPath/ConfigMap/Secret mounts, env, args;
// support/kubelet.ts says what this machine adapts). Then: the least-privileged pod loads the
// probe; `cat /etc/shadow` on the host and in another pod is detected (with that pod's name and
// namespace); the webhook serves the client certificate configure.sh issued into the Secret (the
// kubeconfig `rae webhook-config` prints from configure.sh's webhook-config.yaml carries it): an
// audit event posted with it is detected, a client without it is refused at the handshake; POST /test on the forwarder alerts; an
// EngineAuditRules written into the mounted resources volume goes live; one applied through the
// cluster's API (the Kubernetes API test server, reached with the service account the kubelet
// mounts: KUBERNETES_SERVICE_HOST/PORT, /var/run/secrets/kubernetes.io/serviceaccount) goes live
// and the engine writes its status back; deploy/'s event generator
// Pod (`event-generator run`) in the same cluster has each action it performed detected by the
// engine pod (syscall actions with the generator's container id, audit actions through the
// webhook); and a pod without CAP_BPF says so in its log and in /readyz, and is not ready. A test
// removes its pods through release(): a removal that fails (after removePod's retries and force) is
// reported and judged by the last test, "cleanup", never by the assertions of the test that had passed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { BUSYBOX_IMAGE, containerdPresent } from '../../support/containers/index.js';
import { startCluster, type Cluster, type EnginePod } from '../../support/engine-pod.js';
import { imageToolsMissing } from '../../support/image.js';
import { moduleTestKinds } from '../../support/kube-api-module-kinds.js';
import { startKubeApiTestServer, type KubeApiTestServer } from '../../support/kube-api-test-server.js';
import { podOf } from '../../support/k8s-objects.js';
import { K8SAUDIT_SAMPLES } from '../../support/corpus.js';
import { tempDir } from '../helpers/temp-dir.js';

const missing =
  imageToolsMissing() ??
  (containerdPresent() ? undefined : 'containerd and ctr are missing (scripts/setup.sh --for test)') ??
  (spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0 ? undefined : 'kubectl is missing');
if (missing) process.stderr.write(`\n*** SKIPPED: the in-pod tests: ${missing} ***\n`);
const t = missing ? test.skip : test;

type Alert = { rule: string; source: string; output: string; output_fields: Record<string, unknown> };
let cluster: Cluster | undefined;
let engine: EnginePod | undefined;
/** The cluster's API for the engine pod's service account. */
let api: KubeApiTestServer | undefined;

// uvu swallows an error thrown by a before hook (its runner returns from a finally block): the
// file then reports 0 of N passed with no reason, so the error is written out here first.
test.before(async () => {
  if (missing) return;
  try {
    cluster = await startCluster();
    api = await startKubeApiTestServer({ kinds: moduleTestKinds() });
    const { port } = new URL(api.url);
    engine = await cluster.startEngine({ name: 'runtime-audit-engine', apiServer: { host: '127.0.0.1', port: Number(port), token: api.token, caPem: api.caPem } });
    const s = await cluster.waitReady(engine);
    process.stderr.write(
      `image ${cluster.image.loaded ? "loaded from the run's shared archive" : 'built'} in ${cluster.image.buildSeconds.toFixed(1)} s; engine pod ready ${s.toFixed(1)} s after its start; capabilities not granted here: ${engine.notGranted.join(', ') || 'none'}\n`,
    );
  } catch (err) {
    process.stderr.write(`\n*** the in-pod tests' set-up failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)} ***\n`);
    throw err;
  }
});
test.after(async () => {
  await cluster?.close();
  await api?.close();
});

/** Pod removals that failed (removePod's message each), judged by the "cleanup" test. */
const releaseErrors: string[] = [];

/** Removes a pod a test started; a failure is written to stderr and kept for "cleanup", not thrown. */
async function release(podId: string): Promise<void> {
  await cluster!.containerd.cri.removePod(podId).catch((e: unknown) => {
    const message = e instanceof Error ? e.message : String(e);
    releaseErrors.push(message);
    process.stderr.write(`\n*** CLEANUP: ${message} ***\n`);
  });
}

function alerts(pod: EnginePod): Alert[] {
  return pod
    .log()
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Alert);
}

/** Polls until an alert matches, doing `act` before each look; fails with the log's tail after the deadline. */
async function waitAlert(pod: EnginePod, match: (a: Alert) => boolean, act: () => void | Promise<void> = () => {}, deadlineMs = 90_000): Promise<Alert> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    await act();
    const found = alerts(pod).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no matching alert within ${deadlineMs / 1000} s; log tail:\n${pod.log().slice(-20).join('\n')}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Polls `check` every second until it holds (true) or the deadline passes (false). */
async function waitUntil(check: () => boolean, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return true;
}

async function readyz(pod: EnginePod): Promise<{ status: number; body: { status: string; components: Array<{ name: string; state: string; reason?: string; error?: string; required?: boolean }> } }> {
  const r = await fetch(`http://127.0.0.1:${pod.forwarderPort}/readyz`);
  return { status: r.status, body: (await r.json()) as never };
}

t('the least-privileged pod (no privileged, the template capabilities) loads the probe', async () => {
  const ds = cluster!.objects.find((o) => o.kind === 'DaemonSet')!;
  assert.is(podOf(ds).spec.containers[0]!.securityContext?.privileged, false);
  const r = await readyz(engine!);
  assert.is(r.status, 200);
  assert.equal(r.body.components.find((c) => c.name === 'syscall')?.state, 'up', JSON.stringify(r.body));
  assert.ok(engine!.log().some((l) => l.includes('module: source syscall started')));
});

t('cat /etc/shadow on the host and in another pod is detected', async () => {
  const host = await waitAlert(
    engine!,
    (a) => a.output_fields['fd.name'] === '/etc/shadow' && a.output_fields['container.id'] === 'host' && a.output_fields['proc.name'] === 'cat',
    () => {
      spawnSync('cat', ['/etc/shadow'], { stdio: 'ignore' });
    },
  );
  assert.match(host.rule, /sensitive file|Sensitive file/i);
  const cri = cluster!.containerd.cri;
  const pod = await cri.runPod({ name: 'shop-web', namespace: 'shop', labels: { app: 'web' } });
  const id = await cri.runContainer(pod, { name: 'web', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['600'] });
  const inPod = await waitAlert(
    engine!,
    // with the pod's metadata, which the engine asks the runtime (the socket the DaemonSet mounts) for
    (a) => a.output_fields['fd.name'] === '/etc/shadow' && a.output_fields['container.id'] === id.slice(0, 12) && a.output_fields['k8s.pod.name'] === 'shop-web' && a.output_fields['k8s.ns.name'] === 'shop',
    async () => {
      await cri.execSync(id, ['cat', '/etc/shadow']);
    },
  );
  assert.match(inPod.rule, /sensitive file|Sensitive file/i);
  await release(pod.id);
});

t("the webhook serves the client pair of the Secret (rae webhook-config's kubeconfig): audit events detected; without the pair or the CA, refused", async () => {
  // The API server's kubeconfig as the docs make it: rae webhook-config with the webhook-config.yaml configure.sh wrote.
  const wc = spawnSync(process.execPath, ['bin/rae.js', 'webhook-config', '-c', join(cluster!.dir, 'site', 'webhook-config.yaml')], { encoding: 'utf8', timeout: 600_000 });
  assert.is(wc.status, 0, wc.stderr);
  const kubeconfig = parseYaml(wc.stdout) as { clusters: Array<{ cluster: Record<string, string> }>; users: Array<{ user: Record<string, string> }> };
  const fromB64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString();
  const server = kubeconfig.clusters[0]!.cluster;
  const user = kubeconfig.users[0]!.user;
  const namespace = cluster!.objects.find((o) => o.kind === 'DaemonSet')!.metadata.namespace;
  assert.is(server.server, `https://runtime-audit-engine-webhook.${namespace}.svc:9765/orchestrator-audit`);
  const ca = fromB64(server['certificate-authority-data']);
  assert.is(ca, readFileSync(join(engine!.volumes.get('webhook-tls')!, 'ca.crt'), 'utf8'), "the kubeconfig trusts the Secret's CA");
  const pair = { cert: fromB64(user['client-certificate-data']), key: fromB64(user['client-key-data']) };
  assert.ok(pair.cert.includes('BEGIN CERTIFICATE') && pair.key.includes('PRIVATE KEY'), 'the kubeconfig carries the client pair');
  // Its server names the Service (no cluster DNS here): the same request to the engine's loopback port.
  const post = (items: object[], tls: { ca?: string; cert?: string; key?: string }) =>
    new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items });
      const req = request({ host: '127.0.0.1', port: engine!.webhookPort, path: '/orchestrator-audit', method: 'POST', ...tls, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(body);
    });
  // An exec into a pod named for this run, as the API server would send it.
  const target = `pod-test-exec-${process.pid}`;
  const exec = JSON.parse(readFileSync(join(K8SAUDIT_SAMPLES, 'exec_pod.json'), 'utf8')) as { objectRef: { name: string }; requestURI: string };
  exec.requestURI = exec.requestURI.replace(exec.objectRef.name, target);
  exec.objectRef.name = target;
  assert.is(await post([exec], { ca, ...pair }), 200);
  const a = await waitAlert(engine!, (x) => x.source === 'k8s_audit' && x.output_fields['ka.target.name'] === target);
  assert.is(a.rule, 'Attach/Exec Pod');
  // Without the client pair: the handshake is refused (requireClientCert), nothing is evaluated.
  await post([exec], { ca }).then(
    (status) => assert.unreachable(`a client without the client certificate was served (${status})`),
    (err: Error) => assert.match(err.message, /certificate required|socket hang up|ECONNRESET/i),
  );
  // Without the CA, the client does not trust the webhook.
  await post([], pair).then(
    () => assert.unreachable('a client without the CA must not trust the webhook'),
    (err: Error) => assert.match(err.message, /self-signed|unable to verify|certificate/i),
  );
});

t('POST /test on the forwarder alerts', async () => {
  const r = await fetch(`http://127.0.0.1:${engine!.forwarderPort}/test`, { method: 'POST' });
  assert.is(r.status, 200);
  const a = await waitAlert(engine!, (x) => x.rule === 'Test rule');
  assert.match(a.output, /test/i);
});

t('an EngineAuditRules written into the mounted resources volume goes live without a restart', async () => {
  const canary = tempDir('rae-canary-');
  writeFileSync(join(canary, 'secret.txt'), 'x');
  writeFileSync(
    join(engine!.volumes.get('resources')!, 'canary.yaml'),
    [
      'apiVersion: deckhouse.io/v1alpha1',
      'kind: EngineAuditRules',
      'metadata:',
      '  name: pod-canary',
      'spec:',
      '  rules:',
      '    - rule:',
      '        name: Pod canary opened',
      '        desc: a file below the canary directory was opened',
      `        condition: open_read and fd.name startswith ${canary}/`,
      '        output: Pod canary opened (file=%fd.name)',
      '        priority: Critical',
      '',
    ].join('\n'),
  );
  const a = await waitAlert(
    engine!,
    (x) => x.rule === 'Pod canary opened',
    () => {
      spawnSync('cat', [join(canary, 'secret.txt')], { stdio: 'ignore' });
    },
  );
  assert.is(a.output_fields['fd.name'], join(canary, 'secret.txt'));
  assert.ok(
    engine!.log().some((l) => /EngineAuditRules: .*pod-canary/.test(l)),
    'the load names the resource',
  );
});

t("an EngineAuditRules applied through the cluster's API (the pod's service account) goes live; its status is written back", async () => {
  assert.ok(
    engine!.log().some((l) => l.includes(`module: watching ${api!.url} (the service account)`)),
    engine!
      .log()
      .filter((l) => l.startsWith('module: '))
      .join('\n'),
  );
  const canary = tempDir('rae-api-canary-');
  writeFileSync(join(canary, 'secret.txt'), 'x');
  api!.apply({
    apiVersion: 'deckhouse.io/v1alpha1',
    kind: 'EngineAuditRules',
    metadata: { name: 'api-canary' },
    spec: {
      rules: [{ rule: { name: 'API canary opened', desc: 'a file below the canary directory was opened', condition: `open_read and fd.name startswith ${canary}/`, output: 'API canary opened (file=%fd.name)', priority: 'Critical' } }],
    },
  });
  const a = await waitAlert(
    engine!,
    (x) => x.rule === 'API canary opened',
    () => {
      spawnSync('cat', [join(canary, 'secret.txt')], { stdio: 'ignore' });
    },
  );
  assert.is(a.output_fields['fd.name'], join(canary, 'secret.txt'));
  // The status, written by this engine (the one node: RAE_HOSTNAME is the node's name) through the
  // status subresource, holding the writer Lease in the namespace of its service account.
  type Status = { observedGeneration: number; nodes: number; readyNodes: number; conditions: Array<{ type: string; status: string; reason: string; message: string }> };
  const status = () => api!.get('EngineAuditRules', 'api-canary')?.status as Status | undefined;
  const ready = () => status()?.conditions.find((c) => c.type === 'Ready');
  assert.ok(await waitUntil(() => ready()?.status === 'True', 120_000), `no Ready=True status: ${JSON.stringify(status())}`);
  assert.equal(
    { generation: status()!.observedGeneration, nodes: status()!.nodes, readyNodes: status()!.readyNodes, reason: ready()!.reason, message: ready()!.message },
    { generation: 1, nodes: 1, readyNodes: 1, reason: 'Loaded', message: 'loaded on 1 of 1 node' },
  );
  const namespace = cluster!.objects.find((o) => o.kind === 'DaemonSet')!.metadata.namespace;
  assert.is((api!.get('Lease', 'runtime-audit-engine-status', namespace)?.spec as { holderIdentity?: string } | undefined)?.holderIdentity, hostname());
});

t("deploy/'s event generator Pod (event-generator run): the engine pod detects each action it performed", async () => {
  const t0 = performance.now();
  const gen = await cluster!.startGenerator(engine!);
  // its stdout: one line per action (performed, unavailable with the reason, FAILED); its stderr ends with the summary
  const ended = await waitUntil(() => gen.log().some((l) => /^event-generator: \d+ action\(s\): /.test(l)), 300_000);
  assert.ok(ended, `the generator did not finish within 300 s:\n${gen.log().slice(-20).join('\n')}`);
  assert.match(
    gen.log().find((l) => l.startsWith('event-generator: ') && l.includes('performed'))!,
    / 0 failed$/,
    gen
      .log()
      .filter((l) => /^failed|FAILED/.test(l))
      .join('\n'),
  );
  const performed = gen
    .log()
    .map((l) => l.match(/^performed\s+(\S+) -> (.+)$/))
    .filter((m) => m !== null)
    .map(([, action, rule]) => ({ action: action!, rule: rule! }));
  // what the image lets it do (busybox, no perl or ssh, the container's default capabilities), at least:
  const names = performed.map((p) => p.action);
  for (const a of ['syscall.ReadSensitiveFileUntrusted', 'syscall.ClearLogActivities', 'syscall.CreateSymlinkOverSensitiveFiles', 'k8saudit.CreatePrivilegedPod', 'k8saudit.ExecIntoPod'])
    assert.ok(names.includes(a), `${a} not performed:\n${gen.log().join('\n')}`);
  const container = gen.containerId.slice(0, 12);
  const detected = (p: { action: string; rule: string }) => alerts(engine!).some((a) => a.rule === p.rule && (p.action.startsWith('syscall.') ? a.output_fields['container.id'] === container : a.source === 'k8s_audit'));
  const ranS = (performance.now() - t0) / 1000;
  await waitUntil(() => performed.every(detected), 120_000);
  process.stderr.write(
    `event generator pod: ran ${ranS.toFixed(1)} s, alerts complete ${((performance.now() - t0) / 1000).toFixed(1)} s after its start; ${performed.length} actions performed:\n${performed.map((p) => `  ${p.action} -> ${p.rule}${detected(p) ? '' : '  (NOT detected)'}`).join('\n')}\n`,
  );
  process.stderr.write(
    `  not performed here: ${gen
      .log()
      .filter((l) => l.startsWith('unavailable'))
      .map((l) => l.replace(/^unavailable\s+/, ''))
      .join('; ')}\n`,
  );
  assert.equal(
    performed.filter((p) => !detected(p)),
    [],
    'performed actions without an alert',
  );
  const meta = (gen.pod.config as { metadata: { name: string; namespace: string } }).metadata;
  const ofPod = alerts(engine!).filter((a) => a.output_fields['container.id'] === container);
  assert.ok(
    ofPod.some((a) => a.output_fields['k8s.pod.name'] === meta.name && a.output_fields['k8s.ns.name'] === meta.namespace),
    `no alert of the generator's container names its pod ${meta.namespace}/${meta.name}: ${JSON.stringify(ofPod.map((a) => [a.output_fields['k8s.pod.name'], a.output_fields['k8s.ns.name']]))}`,
  );
  await release(gen.pod.id);
});

t('a pod without CAP_BPF names it in its log and in /readyz, and is not ready', async () => {
  const pod = await cluster!.startEngine({ withoutCapabilities: ['BPF'], name: 'no-bpf' });
  // Never ready by design (syscall.optional: false): wait for the end of its start instead.
  assert.ok(await waitUntil(() => pod.log().some((l) => l.includes('run: started (')), 600_000), pod.log().slice(-20).join('\n'));
  const line = pod.log().find((l) => l.includes('kernel (syscall) source off'));
  assert.ok(line, pod.log().slice(-20).join('\n'));
  assert.match(line!, /without CAP_BPF\)/);
  assert.not.match(line!, /CAP_PERFMON\)/);
  const r = await readyz(pod);
  assert.is(r.status, 503, JSON.stringify(r.body));
  const syscall = r.body.components.find((c) => c.name === 'syscall');
  assert.is(syscall?.state, 'off');
  assert.match(syscall?.reason ?? '', /without CAP_BPF\)/);
  assert.is(syscall?.required, true);
  await release(pod.pod.id);
});

t('cleanup: every pod and the private containerd removed, nothing left behind', async () => {
  const left = await cluster!.close();
  assert.equal(left, [], `left behind: ${left.join('; ')}; failed pod removals: ${releaseErrors.join('; ') || 'none'}`);
  if (releaseErrors.length) process.stderr.write(`cleanup: ${releaseErrors.length} pod removal(s) failed in their test, the containerd's stop removed them: ${releaseErrors.join('; ')}\n`);
});

test.run();
