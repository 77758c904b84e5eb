// Container metadata from a real CRI runtime: a private containerd (support/containers/) runs
// pod shop/web-7d4b9c (label app=web) with a privileged container mounting the host's /etc and
// /proc and a plain container without mounts; CriSource maps them as Falco's CRI engine does, the
// cache (over rae run's LazyCriSource) lists them at start, learns new ones from containerd's events, drops deleted ones, and
// recovers when containerd is stopped and started again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CriSource } from '../../../host/sources/container/cri.js';
import { ContainerCache, LazyCriSource, recordFields, type ContainerRecord } from '../../../host/sources/container/index.js';
import { buildImages, BUSYBOX_IMAGE, PRIVILEGED_SLEEPER, containerdPresent, imageToolsPresent, leftovers, netnsNames, runtimesAvailable, startContainerd, type Pod, type PrivateContainerd } from '../../../support/containers/index.js';

const ready = runtimesAvailable() && imageToolsPresent() && containerdPresent();
const t = ready ? test : test.skip;
const WAIT_MS = 300_000;

let imagesDir = '';
let rt: PrivateContainerd;
let pod: Pod;
let privilegedId = '';
let plainId = '';
let netns: string[] = [];
/** A watch that runs from the start of the file to the keepalive test, and how it ended. */
let longWatch: { source: CriSource; watch: { close(): void }; since: number; failed?: Error } | undefined;

test.before(async () => {
  if (!ready) return;
  netns = netnsNames();
  imagesDir = mkdtempSync(join(tmpdir(), 'rae-images-'));
  rt = await startContainerd(buildImages(imagesDir));
  pod = await rt.cri.runPod({ name: 'web-7d4b9c', namespace: 'shop', uid: '0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10', labels: { app: 'web', tier: 'frontend' } });
  privilegedId = await rt.cri.runContainer(pod, PRIVILEGED_SLEEPER);
  plainId = await rt.cri.runContainer(pod, { name: 'sidecar', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'] });
  const source = new CriSource(rt.socket);
  longWatch = { source, since: Date.now(), watch: { close: () => undefined } };
  const w = longWatch;
  w.watch = source.watch(
    () => undefined,
    (e) => (w.failed = e),
  );
});

test.after(async () => {
  if (!ready) return;
  longWatch?.watch.close();
  longWatch?.source.close();
  await rt.stop();
  rmSync(imagesDir, { recursive: true, force: true });
  assert.equal(leftovers(rt.dir, rt.cgroups, netns), []);
});

/** Polls until `fn` returns a value (bounded by WAIT_MS). */
async function until<T>(what: string, fn: () => T | undefined): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t('ContainerStatus + PodSandboxStatus give the pod, image, privileged flag and mounts', async () => {
  const src = new CriSource(rt.socket);
  try {
    const r = (await src.get(privilegedId.slice(0, 12)))!;
    const f = recordFields(r);
    assert.is(f['container.id'], privilegedId.slice(0, 12));
    assert.is(f['container.full_id'], privilegedId);
    assert.is(f['container.name'], 'nginx');
    assert.is(f['container.type'], 'containerd');
    assert.is(f['container.image'], 'localhost/rae-busybox:1.35');
    assert.is(f['container.image.repository'], 'localhost/rae-busybox');
    assert.is(f['container.image.tag'], '1.35');
    assert.match(f['container.image.id']!, /^[0-9a-f]{64}$/);
    assert.is(f['container.privileged'], 'true');
    assert.is(f['container.mounts'], '/etc:/host/etc::false:private,/proc:/host/proc::false:private');
    assert.is(f['container.host_network'], 'true');
    assert.is(f['container.host_pid'], 'false');
    assert.is(f['k8s.pod.name'], 'web-7d4b9c');
    assert.is(f['k8s.ns.name'], 'shop');
    assert.is(f['k8s.pod.uid'], '0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10');
    assert.is(f['k8s.pod.full_sandbox_id'], pod.id);
    assert.is(f['k8s.pod.sandbox_id'], pod.id.slice(0, 12));
    assert.is(r.pod!.labels.app, 'web');
    assert.ok(r.startTs > 0n);
    const plain = (await src.get(plainId))!;
    assert.is(plain.privileged, false);
    assert.equal(plain.mounts, []);
    assert.is(recordFields(plain)['container.mounts'], '');
    const sandbox = (await src.get(pod.id.slice(0, 12)))!;
    assert.is(sandbox.sandbox, true);
    assert.is(sandbox.image, 'localhost/rae-pause:3.9');
    assert.is(sandbox.pod!.name, 'web-7d4b9c');
    assert.is(await src.get('0123456789ab'), undefined);
  } finally {
    src.close();
  }
});

t('the cache lists at start, adds a container from the create event, removes it on delete', async () => {
  const logs: string[] = [];
  // rae run's source: the gRPC client loaded at its first call
  const cache = new ContainerCache([new LazyCriSource(rt.socket)], {}, (l) => logs.push(l));
  try {
    await cache.start();
    assert.ok(cache.isUp('cri'));
    assert.is(cache.peek(privilegedId)?.name, 'nginx', 'listed at start');
    assert.is(cache.peek(plainId)?.name, 'sidecar');
    const id = await rt.cri.runContainer(pod, { name: 'late', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'] });
    const late = await until('record of the new container', () => cache.peek(id));
    assert.is(late.name, 'late');
    assert.is(late.pod?.namespace, 'shop');
    const lookupsBefore = cache.stats.lookups;
    await rt.cri.removeContainer(id);
    await until('removal on the delete event', () => (cache.peek(id) ? undefined : true));
    assert.is(cache.stats.lookups, lookupsBefore, 'delete makes no lookup');
  } finally {
    cache.close();
  }
});

t('an unknown id is answered at once with nothing, looked up asynchronously, then cached', async () => {
  // a cache of one entry: listing two containers leaves one of them to the on-demand lookup
  const cache = new ContainerCache([new CriSource(rt.socket)], { maxEntries: 1 });
  try {
    await cache.start();
    const missing = cache.peek(plainId) ? privilegedId : plainId;
    assert.is(cache.get(missing), undefined);
    const r: ContainerRecord = await until('looked-up record', () => cache.peek(missing));
    assert.is(r.fullId, missing);
    assert.is(cache.stats.found, 1);
    assert.is(cache.stats.entries, 1, 'bounded: the other record was evicted');
    assert.is(cache.get('fedcba987654'), undefined);
    await until('the give-up', () => (cache.stats.notFound === 1 ? true : undefined));
    assert.is(cache.stats.lookups, 1 + 4, 'one lookup for the known id, 1 + 3 retries for the unknown one');
    assert.is(cache.get('fedcba987654'), undefined);
    assert.is(cache.stats.lookups, 5, 'a given-up id is not asked again until an event names it');
  } finally {
    cache.close();
  }
});

t("the event stream lasts: the client's keepalive pings respect containerd's policy (grpc-go refuses pings under 5 min apart and closes the connection on the third)", async () => {
  // with pings every 10 s the stream failed after 40 s (RESOURCE_EXHAUSTED, "excess pings"): watch 50 s
  const w = longWatch!;
  while (!w.failed && Date.now() - w.since < 50_000) await new Promise((r) => setTimeout(r, 250));
  assert.is(w.failed?.message, undefined);
});

t('containerd stopped and started again: the cache reconnects and follows events again', async () => {
  const logs: string[] = [];
  const cache = new ContainerCache([new LazyCriSource(rt.socket)], { backoffMs: 200, maxBackoffMs: 1000 }, (l) => logs.push(l));
  try {
    await cache.start();
    await rt.restart();
    await until('the failure seen', () => (logs.some((l) => /cri failed/.test(l)) ? true : undefined));
    await until('recovery', () => (logs.some((l) => /cri at .* recovered/.test(l)) ? true : undefined));
    const id = await rt.cri.runContainer(pod, { name: 'after-restart', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'] });
    assert.is((await until('record after the restart', () => cache.peek(id))).name, 'after-restart');
  } finally {
    cache.close();
  }
});

test.run();
