// Container metadata through the Docker Engine API from a real private dockerd and podman
// service (support/containers/): a privileged container with /etc and /proc mounted and
// io.kubernetes.pod.* labels (as on cri-dockerd nodes) gives container and k8s fields; the cache
// follows /events; behind a socket proxy that holds every request 2 s, get() still answers at
// once (nothing yet) and the record arrives later; dockerd stopped and started again is recovered.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerCache, EngineSource, recordFields } from '../../../host/sources/container/index.js';
import { buildImages, dockerPresent, imageToolsPresent, leftovers, netnsNames, podmanPresent, runtimesAvailable, startDockerd, startPodman, type PrivateEngine, type TestImages } from '../../../support/containers/index.js';

const ready = runtimesAvailable() && imageToolsPresent();
const WAIT_MS = 300_000;
const POD_LABELS = {
  app: 'demo',
  'io.kubernetes.pod.name': 'web-7d4b9c',
  'io.kubernetes.pod.namespace': 'shop',
  'io.kubernetes.pod.uid': '0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10',
  'io.kubernetes.container.name': 'nginx',
};
const MOUNTS = [
  { source: '/etc', destination: '/host/etc', readonly: true },
  { source: '/proc', destination: '/host/proc', readonly: true },
];

let imagesDir = '';
let images: TestImages;
test.before(() => {
  if (!ready) return;
  imagesDir = mkdtempSync(join(tmpdir(), 'rae-images-'));
  images = buildImages(imagesDir);
});
test.after(() => {
  if (imagesDir) rmSync(imagesDir, { recursive: true, force: true });
});

async function until<T>(what: string, fn: () => T | undefined): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs `body` against a started engine, then checks its teardown left nothing. */
async function withEngine(start: (i: TestImages) => Promise<PrivateEngine>, body: (e: PrivateEngine) => Promise<void>): Promise<void> {
  const netns = netnsNames();
  const e = await start(images);
  try {
    await body(e);
  } finally {
    await e.stop();
  }
  assert.equal(leftovers(e.dir, e.cgroups, netns), []);
}

/** A unix-socket proxy to `target` that holds each chunk from the client `delayMs` before passing it on. */
async function slowProxy(path: string, target: string, delayMs: number): Promise<Server> {
  const srv = createServer((client) => {
    const upstream = createConnection(target);
    client.on('data', (c) => setTimeout(() => upstream.write(c), delayMs));
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((r) => srv.listen(path, r));
  return srv;
}

(ready && dockerPresent() ? test : test.skip)('dockerd: container fields, k8s fields from io.kubernetes.* labels, events, and a slow socket', async () => {
  await withEngine(startDockerd, async (d) => {
    const id = await d.run({ name: 'web', privileged: true, labels: POD_LABELS, mounts: MOUNTS });
    const src = new EngineSource('docker', d.socket);
    try {
      const f = recordFields((await src.get(id.slice(0, 12)))!);
      assert.is(f['container.id'], id.slice(0, 12));
      assert.is(f['container.full_id'], id);
      assert.is(f['container.type'], 'docker');
      assert.is(f['container.name'], 'web');
      assert.is(f['container.image'], 'localhost/rae-busybox:1.35');
      assert.is(f['container.image.repository'], 'localhost/rae-busybox');
      assert.is(f['container.image.tag'], '1.35');
      assert.match(f['container.image.id']!, /^[0-9a-f]{64}$/);
      assert.is(f['container.privileged'], 'true');
      assert.equal(f['container.mounts']!.split(',').sort(), ['/etc:/host/etc:ro:false:rprivate', '/proc:/host/proc:ro:false:rprivate']);
      assert.is(f['container.host_network'], 'false');
      assert.ok(f['container.labels']!.split(',').includes('app:demo'));
      assert.is(f['k8s.pod.name'], 'web-7d4b9c');
      assert.is(f['k8s.ns.name'], 'shop');
      assert.is(f['k8s.pod.uid'], '0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10');
      assert.ok(BigInt(f['container.start_ts']!) > 0n);
      assert.is(await src.get('0123456789ab'), undefined);
    } finally {
      src.close();
    }

    const cache = new ContainerCache([new EngineSource('docker', d.socket)]);
    try {
      await cache.start();
      assert.is(cache.peek(id)?.name, 'web', 'listed at start');
      const other = await d.run({ name: 'plain' });
      assert.is((await until('record from the create event', () => cache.peek(other))).privileged, false);
      await d.remove(other);
      await until('removal on destroy', () => (cache.peek(other) ? undefined : true));
    } finally {
      cache.close();
    }

    const proxyPath = join(d.dir, 'slow.sock');
    const proxy = await slowProxy(proxyPath, d.socket, 2000);
    const slow = new ContainerCache([new EngineSource('docker', proxyPath, { callTimeoutMs: 30_000 })]);
    try {
      await slow.start();
      const late = await d.run({ name: 'late' });
      assert.is(slow.get(late), undefined, 'answered at once, before the runtime does');
      assert.is((await until('record through the slow socket', () => slow.peek(late))).name, 'late');
    } finally {
      slow.close();
      proxy.close();
    }

    const logs: string[] = [];
    const back = new ContainerCache([new EngineSource('docker', d.socket)], { backoffMs: 200, maxBackoffMs: 1000 }, (l) => logs.push(l));
    try {
      await back.start();
      await d.restart();
      await until('the failure seen', () => logs.some((l) => /docker failed/.test(l)) || undefined);
      await until('recovery', () => logs.some((l) => /docker at .* recovered/.test(l)) || undefined);
      const after = await d.run({ name: 'after-restart' });
      assert.is((await until('record after the restart', () => back.peek(after))).name, 'after-restart');
    } finally {
      back.close();
    }
  });
});

(ready && podmanPresent() ? test : test.skip)('podman: libpod image name and digest, privileged, mounts, labels', async () => {
  await withEngine(startPodman, async (p) => {
    const id = await p.run({ name: 'pod1', privileged: true, labels: { app: 'demo' }, mounts: MOUNTS });
    const src = new EngineSource('podman', p.socket);
    try {
      const r = (await src.get(id))!;
      const f = recordFields(r);
      assert.is(f['container.type'], 'podman');
      assert.is(f['container.name'], 'pod1');
      assert.is(f['container.image.repository'], 'localhost/rae-busybox');
      assert.is(f['container.image.tag'], '1.35');
      assert.match(f['container.image.digest']!, /^sha256:[0-9a-f]{64}$/);
      assert.is(f['container.privileged'], 'true');
      assert.equal(r.mounts.map((m) => `${m.source}:${m.dest}:${m.rdwr}`).sort(), ['/etc:/host/etc:false', '/proc:/host/proc:false']);
      assert.is(r.labels.app, 'demo');
      assert.is(r.pod, undefined, 'no io.kubernetes labels: no pod');
      assert.equal(
        (await src.list()).map((c) => c.fullId),
        [id],
      );
    } finally {
      src.close();
    }
  });
});

test.run();
