// Benchmark `containers`: container metadata.
//   cache_bytes_per_container   heap growth of a ContainerCache holding 1,000 records (synthetic,
//                               shaped like a CRI pod container: 2 mounts, 5 labels, 5 pod labels)
//   cri_lookups_per_s           CriSource.get (ContainerStatus verbose + PodSandboxStatus) against a
//                               private containerd (support/containers/), one at a time and
//                               4 in flight; needs root and containerd, else reported skipped
//   cache_miss_to_record_ms     ContainerCache.get() of an unlisted id -> record cached (median)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CriSource } from '../host/sources/container/cri.js';
import { ContainerCache, type ContainerRecord, type MetadataSource } from '../host/sources/container/index.js';
import { buildImages, BUSYBOX_IMAGE, containerdPresent, imageToolsPresent, runtimesAvailable, startContainerd } from '../support/containers/index.js';
import { figure, median, progress } from './report.js';

const S = 'containers';
const RECORDS = 1000;

function synthetic(i: number): ContainerRecord {
  const full = (0xa00000000000 + i).toString(16).padEnd(64, '0');
  const sandbox = (0xb00000000000 + i).toString(16).padEnd(64, 'f');
  return {
    id: full.slice(0, 12),
    fullId: full,
    type: 'containerd',
    name: `app-${i}`,
    image: `registry.example.com/team/app-${i}:1.${i}`,
    imageId: full,
    imageRepository: `registry.example.com/team/app-${i}`,
    imageTag: `1.${i}`,
    imageDigest: `sha256:${full}`,
    privileged: false,
    ip: `10.0.${i >> 8}.${i & 255}`,
    hostPid: false,
    hostNetwork: false,
    hostIpc: false,
    mounts: [
      { source: `/var/lib/kubelet/pods/${i}/volumes/kubernetes.io~configmap/config`, dest: '/etc/app', mode: '', rdwr: false, propagation: 'private' },
      { source: `/var/lib/kubelet/pods/${i}/etc-hosts`, dest: '/etc/hosts', mode: '', rdwr: true, propagation: 'private' },
    ],
    labels: { 'io.kubernetes.container.name': `app-${i}`, 'io.kubernetes.pod.name': `app-${i}-7d4b9c`, 'io.kubernetes.pod.namespace': 'shop', 'io.kubernetes.pod.uid': `uid-${i}`, tier: 'web' },
    startTs: 1_700_000_000_000_000_000n + BigInt(i),
    pod: {
      name: `app-${i}-7d4b9c`,
      namespace: 'shop',
      uid: `uid-${i}`,
      sandboxId: sandbox.slice(0, 12),
      fullSandboxId: sandbox,
      labels: { app: `app-${i}`, tier: 'web', 'pod-template-hash': '7d4b9c', team: 'shop', env: 'prod' },
      ip: `10.0.${i >> 8}.${i & 255}`,
    },
    sandbox: false,
  };
}

/** A source that lists synthetic records: the cache's memory without a runtime. */
function syntheticSource(n: number): MetadataSource {
  return {
    name: 'synthetic',
    socket: '/',
    list: async () => Array.from({ length: n }, (_, i) => synthetic(i)),
    get: async () => undefined,
    watch: () => ({ close() {} }),
    close() {},
  };
}

async function memory(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  const cache = new ContainerCache([syntheticSource(RECORDS)], { maxEntries: RECORDS });
  await cache.start();
  gc();
  const after = process.memoryUsage().heapUsed;
  figure(S, 'cache_bytes_per_container', (after - before) / RECORDS, 'bytes', { containers: cache.stats.entries, heap_delta_bytes: after - before });
  cache.close();
}

async function lookups(): Promise<void> {
  if (!(runtimesAvailable() && imageToolsPresent() && containerdPresent())) {
    progress('cri lookups skipped: needs root, containerd and the image tools (scripts/setup.sh --for test)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-images-'));
  const rt = await startContainerd(buildImages(dir));
  try {
    const pod = await rt.cri.runPod({ name: 'bench', namespace: 'bench', labels: { app: 'bench' } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await rt.cri.runContainer(pod, { name: `c${i}`, image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'] }));
    progress(`containerd up, ${ids.length} containers`);
    const src = new CriSource(rt.socket);
    await src.get(ids[0]!); // connect
    const N = 300;
    let t0 = performance.now();
    for (let i = 0; i < N; i++) await src.get(ids[i % ids.length]!);
    figure(S, 'cri_lookups_per_s', (N * 1000) / (performance.now() - t0), 'lookups/s', { in_flight: 1, lookups: N });
    t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < N) await src.get(ids[next++ % ids.length]!);
      }),
    );
    figure(S, 'cri_lookups_per_s', (N * 1000) / (performance.now() - t0), 'lookups/s', { in_flight: 4, lookups: N });
    src.close();
    const times: number[] = [];
    for (const id of ids) {
      const cache = new ContainerCache([new CriSource(rt.socket)], { maxEntries: 1 });
      await cache.start();
      if (cache.peek(id)) {
        cache.close();
        continue;
      }
      const t = performance.now();
      cache.get(id);
      while (!cache.peek(id)) await new Promise((r) => setImmediate(r));
      times.push(performance.now() - t);
      cache.close();
    }
    figure(S, 'cache_miss_to_record_ms', median(times), 'ms', { samples: times.length, max: Math.max(...times) });
  } finally {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  await memory();
  await lookups();
}
