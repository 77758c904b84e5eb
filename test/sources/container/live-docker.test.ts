// Container fields end to end through a private dockerd (root, real kernel, the real `rae run`):
// a Docker container with io.kubernetes.pod.* labels (as on cri-dockerd nodes) gives the k8s
// fields, and a runtime that does not answer delays no event. rae run reaches dockerd through a
// unix-socket proxy that holds every request until the test lets them through: the alert for
// `cat /etc/shadow` in the container comes at once with <NA> metadata (the runtime is still held),
// and once the requests pass, later alerts carry the container and pod.
import { createConnection, createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { kernelGate } from '../syscall/collector.js';
import { buildImages, dockerPresent, imageToolsPresent, leftovers, netnsNames, runtimesAvailable, startDockerd, type PrivateEngine } from '../../../support/containers/index.js';

const gate = kernelGate('live-docker.test.ts');
const ready = gate.run && runtimesAvailable() && imageToolsPresent() && dockerPresent();
const t = ready ? test : test.skip;
const WAIT_MS = 300_000;
const root = mkdtempSync(join(tmpdir(), 'rae-live-docker-'));
let d: PrivateEngine;
let rae: RaeRun;
let proxy: Server;
let netns: string[] = [];
/** Requests held by the proxy until `release()`. */
let held: Array<() => void> | undefined = [];
const release = () => {
  const h = held ?? [];
  held = undefined;
  for (const go of h) go();
};

/** A unix-socket proxy to `target` that holds the client's bytes while `held` is set. */
async function heldProxy(path: string, target: string): Promise<Server> {
  const srv = createServer((client) => {
    const upstream = createConnection(target);
    client.on('data', (c) => (held ? held.push(() => upstream.write(c)) : upstream.write(c)));
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on('close', end);
      s.on('error', end);
    }
  });
  await new Promise<void>((r) => srv.listen(path, r));
  return srv;
}

const RULE = `- rule: Shadow read in a container
  desc: test rule
  condition: evt.type in (open, openat, openat2) and evt.is_open_read=true and fd.name=/etc/shadow and container.id != host
  output: shadow read (privileged=%container.privileged pod_uid=%k8s.pod.uid)
  priority: WARNING
`;

test.before(async () => {
  if (!ready) return;
  netns = netnsNames();
  d = await startDockerd(buildImages(join(root, 'images')));
  const proxyPath = join(d.dir, 'held.sock');
  proxy = await heldProxy(proxyPath, d.socket);
  writeFileSync(join(root, 'rule.yaml'), RULE);
  const cfg = join(root, 'config.yaml');
  writeFileSync(
    cfg,
    `rules:\n  builtIn: []\n  files: [${JSON.stringify(join(root, 'rule.yaml'))}]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\ncontainers:\n  callTimeoutMs: 120000\n  docker:\n    sockets: [${JSON.stringify(proxyPath)}]\n  cri:\n    enabled: false\n  podman:\n    enabled: false\n`,
  );
  rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')]);
  await rae.waitLog(/run: ready/);
});

test.after(async () => {
  if (!ready) return;
  release();
  const code = await rae?.stop();
  proxy?.close();
  await d.stop();
  assert.equal(leftovers(d.dir, d.cgroups, netns), []);
  rmSync(root, { recursive: true, force: true });
  assert.is(code, 0);
});

t('a held runtime delays no event (<NA> at once); once it answers, alerts carry the container and the k8s fields from its labels', async () => {
  const labels = { 'io.kubernetes.pod.name': 'web-7d4b9c', 'io.kubernetes.pod.namespace': 'shop', 'io.kubernetes.pod.uid': '0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10' };
  const id = (await d.run({ name: 'web', privileged: true, labels, mounts: [{ source: '/etc', destination: '/host/etc', readonly: true }] })).slice(0, 12);
  const shadow = (a: RaeRun['alerts'][number]) => a.rule === 'Shadow read in a container' && a.output_fields['container.id'] === id;
  await d.cli(['exec', 'web', 'cat', '/etc/shadow']);
  await rae.waitAlerts((as) => as.some(shadow), 'the first shadow read', WAIT_MS);
  assert.ok(held, 'the runtime was held all along');
  const first = rae.alerts.find(shadow)!;
  assert.is(first.output_fields['container.name'], null);
  assert.is(first.output_fields['k8s.pod.name'], null);
  assert.is(first.output_fields['container.privileged'], null);
  release();
  const known = (a: RaeRun['alerts'][number]) => shadow(a) && a.output_fields['container.name'] === 'web';
  const deadline = Date.now() + WAIT_MS;
  while (!rae.alerts.some(known) && Date.now() < deadline) {
    await d.cli(['exec', 'web', 'cat', '/etc/shadow']);
    await rae.waitAlerts((as) => as.some(known), 'a shadow read with metadata', 2000).catch(() => undefined);
  }
  const later = rae.alerts.find(known);
  assert.ok(later, `no alert with metadata within ${WAIT_MS} ms`);
  assert.is(later!.output_fields['container.image.repository'], 'localhost/rae-busybox');
  assert.is(later!.output_fields['container.image.tag'], '1.35');
  assert.is(later!.output_fields['container.privileged'], true);
  assert.is(later!.output_fields['k8s.pod.name'], 'web-7d4b9c');
  assert.is(later!.output_fields['k8s.ns.name'], 'shop');
  assert.is(later!.output_fields['k8s.pod.uid'], '0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10');
});

test.run();
