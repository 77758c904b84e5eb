// A private podman (rootful) for tests (reference containers.md section 6): storage, run root,
// tmp dir and API socket in a temp dir, runc (crun refuses this hybrid-cgroup host), ulimits no
// higher than the host's hard limits (no CAP_SYS_RESOURCE to raise them), no network, file
// events. The API is `podman system service` on a private socket. stop() removes every pod and
// container, then tears down as every private instance does (instance.ts).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { privateEngine, type PrivateEngine } from './docker.js';
import { startDaemon } from './daemon.js';
import { BUSYBOX_IMAGE, type TestImages } from './images.js';
import { startInstance } from './instance.js';

const run = promisify(execFile);

/** Whether podman, conmon and runc are installed. */
export function podmanPresent(): boolean {
  return ['/usr/bin/podman', '/usr/bin/conmon', '/usr/sbin/runc'].every((p) => existsSync(p));
}

function containersConf(dir: string): string {
  return `[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
netns = "none"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "${dir}/tmp"
`;
}

/** Starts a private podman API service in a new temp dir with the busybox image imported. */
export async function startPodman(images: TestImages): Promise<PrivateEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-podman-'));
  mkdirSync(join(dir, 'tmp'));
  writeFileSync(join(dir, 'containers.conf'), containersConf(dir));
  const env = { ...process.env, CONTAINERS_CONF: join(dir, 'containers.conf') };
  const global = ['--root', join(dir, 'root'), '--runroot', join(dir, 'runroot'), '--storage-driver', 'overlay'];
  const socket = join(dir, 'podman.sock');
  const cli = async (args: string[]) => (await run('/usr/bin/podman', [...global, ...args], { env, maxBuffer: 16 << 20 })).stdout;
  const cgroups: string[] = ['/libpod_parent/conmon'];
  const instance = await startInstance(
    dir,
    cgroups,
    {
      what: 'podman service',
      launch: () => startDaemon('/usr/bin/podman', [...global, 'system', 'service', '--time=0', `unix://${socket}`], env),
      ready: () => existsSync(socket),
      beforeRelaunch: () => rmSync(socket, { force: true }),
      removals: [
        ['removing the pods', () => cli(['pod', 'rm', '-a', '-f'])],
        ['removing the containers', () => cli(['rm', '-a', '-f', '-t', '0'])],
      ],
      removeWithoutDaemon: true,
    },
    () => cli(['import', '--change', 'CMD ["/bin/sh"]', images.busyboxRootfs, BUSYBOX_IMAGE]),
  );
  return privateEngine(instance, socket, cgroups, cli, (id) => `/libpod_parent/libpod-${id}`, ['rm', '-f', '-t', '0']);
}
