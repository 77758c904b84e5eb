// The container test harness itself, against the real runtimes: each private instance starts,
// runs a container from the offline images (privileged, with a host mount, as the metadata tests
// do), places it in the cgroup shape of reference containers.md section 7, and its teardown
// leaves no process, mount, cgroup or network namespace behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildImages,
  BUSYBOX_IMAGE,
  containerdPresent,
  dockerPresent,
  imageToolsPresent,
  leftovers,
  mountsUnder,
  netnsNames,
  podmanPresent,
  processesNaming,
  removeCgroups,
  runtimesAvailable,
  startContainerd,
  startDockerd,
  startPodman,
  type TestImages,
} from '../../../support/containers/index.js';

const ready = runtimesAvailable() && imageToolsPresent();
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

/** The `0::` (cgroup v2) path of a process. */
function cgroupOf(pid: number): string {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('0::'));
  return line ? line.slice(3) : '';
}

(ready && containerdPresent() ? test : test.skip)('containerd + CRI: a kubelet-style pod and a plain ctr container, then nothing left', async () => {
  const netns = netnsNames();
  const c = await startContainerd(images);
  try {
    const pod = await c.cri.runPod({ name: 'web-7d4b9c', namespace: 'shop', labels: { app: 'web' } });
    const id = await c.cri.runContainer(pod, {
      name: 'nginx',
      image: BUSYBOX_IMAGE,
      command: ['sleep'],
      args: ['3600'],
      privileged: true,
      mounts: [{ containerPath: '/host/etc', hostPath: '/etc', readonly: true }],
    });
    const shadow = await c.cri.execSync(id, ['cat', '/etc/shadow']);
    assert.is(shadow.stdout, 'root:*:19000:0:99999:7:::\n');
    assert.is((await c.cri.execSync(id, ['cat', '/host/etc/hostname'])).stdout, readFileSync('/etc/hostname', 'utf8'), 'the host /etc is mounted');
    const info = await c.ctr('k8s.io', ['tasks', 'ls']);
    const taskPid = Number(new RegExp(`^${id}\\s+(\\d+)`, 'm').exec(info)![1]);
    assert.is(cgroupOf(taskPid), `/kubepods/besteffort/pod${pod.uid}/${id}`);
    await c.importImage(images.busyboxOci, 'rae');
    await c.ctrRun('rae', 'rae-native', BUSYBOX_IMAGE, ['sleep', '3600']);
    const native = Number(/^rae-native\s+(\d+)/m.exec(await c.ctr('rae', ['tasks', 'ls']))![1]);
    assert.is(cgroupOf(native), '/rae/rae-native');
  } finally {
    await c.stop();
  }
  assert.equal(leftovers(c.dir, c.cgroups, netns), []);
});

test('removeCgroups takes a pod cgroup with the cgroups of containers whose shim died still below it (runc never deleted them)', async () => {
  const pod = `/rae-harness-${process.pid}/pod-x`;
  const root = '/sys/fs/cgroup/pids';
  mkdirSync(join(root, pod, 'container-a'), { recursive: true });
  mkdirSync(join(root, pod, 'container-b', 'nested'), { recursive: true });
  await removeCgroups([pod], 2_000);
  const dir = mkdtempSync(join(tmpdir(), 'rae-cg-'));
  rmSync(dir, { recursive: true });
  assert.equal(leftovers(dir, [pod, `/rae-harness-${process.pid}`], []), []);
});

(ready && containerdPresent() ? test : test.skip)('removePod when the shim goes away mid-StopPodSandbox ("ttrpc: closed"): it retries and forces, the pod is gone, nothing left', async () => {
  const netns = netnsNames();
  const c = await startContainerd(images);
  try {
    const pod = await c.cri.runPod({ name: 'flaky-stop', namespace: 'default' });
    const id = await c.cri.runContainer(pod, { name: 'sleeper', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'] });
    const shims = processesNaming(`-id ${pod.id} `);
    assert.is(shims.length, 1, JSON.stringify(shims));
    // The shim frozen, StopPodSandbox's state query of the container times out (containerd: 2 s)
    // and its Kill of the container waits for the shim; killed then, the shim's ttrpc connection
    // closes under that call and StopPodSandbox fails as in CI: "failed to stop container ...:
    // failed to kill container ...: ttrpc: closed".
    process.kill(shims[0]!.pid, 'SIGSTOP');
    const removal = c.cri.removePod(pod.id).then(
      () => 'removed',
      (e: Error) => e.message,
    );
    const killing = `Kill container \\"${id}\\"`;
    for (const deadline = Date.now() + 120_000; !c.daemon.log().includes(killing) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    assert.ok(c.daemon.log().includes(killing), `containerd never logged ${killing}:\n${c.daemon.log().slice(-2000)}`);
    process.kill(shims[0]!.pid, 'SIGKILL');
    assert.is(await removal, 'removed');
    assert.not.ok((await c.cri.podIds()).includes(pod.id), 'the sandbox is still listed');
    assert.equal([...processesNaming(pod.id), ...processesNaming(id)], []);
    assert.equal(
      mountsUnder(c.dir).filter((m) => m.includes(pod.id) || m.includes(id)),
      [],
    );
  } finally {
    await c.stop();
  }
  assert.equal(leftovers(c.dir, c.cgroups, netns), []);
});

(ready && containerdPresent() ? test : test.skip)('SIGTERM to a test process with a running containerd pod: it stops everything and exits 143, nothing left', async () => {
  const netns = netnsNames();
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'signal-child.ts'), join(imagesDir, 'signal-child')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = await new Promise<{ dir: string; cgroups: string[] }>((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
    });
    void exited.then((code) => reject(new Error(`the child exited (${code}) before it started containerd:\n${err}`)));
  });
  child.kill('SIGTERM');
  assert.is(await exited, 143, err);
  assert.match(err, /SIGTERM: stopping 1 test resource/);
  assert.equal(leftovers(started.dir, started.cgroups, netns), []);
});

for (const [name, present, start, shape] of [
  ['dockerd', dockerPresent, startDockerd, (id: string) => `/docker/${id}`],
  ['podman', podmanPresent, startPodman, (id: string) => `/libpod_parent/libpod-${id}`],
] as const) {
  (ready && present() ? test : test.skip)(`${name}: a privileged container with labels and a host mount, then nothing left`, async () => {
    const netns = netnsNames();
    const e = await start(images);
    try {
      const id = await e.run({ name: 'c1', privileged: true, labels: { app: 'demo' }, mounts: [{ source: '/etc', destination: '/host/etc', readonly: true }] });
      assert.is(await e.cli(['exec', 'c1', 'cat', '/etc/shadow']), 'root:*:19000:0:99999:7:::\n');
      const pid = Number((await e.cli(['inspect', '-f', '{{.State.Pid}}', id])).trim());
      assert.is(cgroupOf(pid), shape(id));
      assert.is((await e.cli(['inspect', '-f', '{{.HostConfig.Privileged}}', id])).trim(), 'true');
    } finally {
      await e.stop();
    }
    assert.equal(leftovers(e.dir, e.cgroups, netns), []);
  });
}

test.run();
