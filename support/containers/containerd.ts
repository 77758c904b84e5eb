// A private containerd with its CRI plugin, for tests: own root, state and socket in a temp dir
// (it runs beside any system containerd), the local pause image as sandbox image, host-network
// pods (no CNI), and `restrict_oom_score_adj` because this machine's bounding set lacks
// CAP_SYS_RESOURCE (reference containers.md section 4). stop() removes every pod, task and
// container, then tears down as every private instance does (instance.ts: the daemon and its
// shims, mounts, cgroups, the dir) and returns what is still left. cri.removePod escalates through
// podTeardown when the CRI cannot stop a pod (a shim gone mid-stop: "ttrpc: closed").
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CriAdmin, type Teardown } from './cri-admin.js';
import { startDaemon, type Daemon } from './daemon.js';
import { killNaming, mountsUnder, processesInCgroup, processesNaming } from './host-state.js';
import { PAUSE_IMAGE, type TestImages } from './images.js';
import { startInstance } from './instance.js';

const run = promisify(execFile);

/** Whether containerd, ctr and runc are installed (scripts/setup.sh --for test). */
export function containerdPresent(): boolean {
  return ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/sbin/runc'].every((p) => existsSync(p));
}

/** A running private containerd. */
export interface PrivateContainerd {
  dir: string;
  /** The gRPC socket (CRI and containerd's own services). */
  socket: string;
  daemon: Daemon;
  cri: CriAdmin;
  /** Cgroup paths this instance's containers use; stop() removes them. */
  cgroups: string[];
  /** `ctr --address <socket> -n <ns> ...args`; resolves with stdout. */
  ctr(ns: string, args: string[]): Promise<string>;
  /** `ctr images import` of an OCI archive into namespace `ns` (CRI's is k8s.io). */
  importImage(archive: string, ns?: string): Promise<void>;
  /** `ctr run -d`: a plain containerd container, cgroup `/<ns>/<name>`. */
  ctrRun(ns: string, name: string, image: string, args: string[]): Promise<void>;
  /** Stops the daemon (containers keep running under their shims) and starts it again. */
  restart(): Promise<void>;
  /**
   * Everything removed, the daemon stopped, the dir deleted; resolves with what is still left
   * (processes, mounts, cgroups: `leftovers` without network namespaces, which host-network pods
   * do not make), `[]` when nothing, and writes a non-empty list to stderr. Runs once.
   */
  stop(): Promise<string[]>;
}

function config(dir: string): string {
  return `version = 2
root = "${dir}/root"
state = "${dir}/state"
# the opt plugin would create /opt/containerd on the host
disabled_plugins = ["io.containerd.internal.v1.opt"]
[grpc]
  address = "${dir}/containerd.sock"
[ttrpc]
  address = "${dir}/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    conf_dir = "${dir}/cni"
    bin_dir = "${dir}/cni-bin"
`;
}

/** Starts a private containerd in a new temp dir and imports `images` into namespace k8s.io. */
export async function startContainerd(images: TestImages): Promise<PrivateContainerd> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-containerd-'));
  for (const d of ['cni', 'cni-bin', 'logs']) mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'config.toml'), config(dir));
  const socket = join(dir, 'containerd.sock');
  const cgroups: string[] = [];
  const podCgroups = new Map<string, string>();
  const ctr = async (ns: string, args: string[]) => (await run('/usr/bin/ctr', ['--address', socket, '-n', ns, ...args], { maxBuffer: 16 << 20 })).stdout;
  const cri = new CriAdmin(socket, join(dir, 'logs'), podTeardown(dir, ctr, podCgroups));
  // pods created through runPod register their cgroup parent for removal
  const runPod = cri.runPod.bind(cri);
  cri.runPod = async (spec) => {
    const pod = await runPod(spec);
    if (pod.cgroupParent) {
      cgroups.push(pod.cgroupParent);
      podCgroups.set(pod.id, pod.cgroupParent);
    }
    return pod;
  };
  const importImage = async (archive: string, ns = 'k8s.io') => void (await ctr(ns, ['images', 'import', archive]));
  const instance = await startInstance(
    dir,
    cgroups,
    {
      what: 'containerd',
      launch: () => startDaemon('/usr/bin/containerd', ['--config', join(dir, 'config.toml')]),
      ready: () =>
        existsSync(socket) &&
        cri.podIds().then(
          () => true,
          () => false,
        ),
      removals: [
        ['removing the pods', () => cri.removeAllPods()],
        ['removing the ctr containers', () => removeCtrContainers(ctr)],
      ],
      beforeStop: () => cri.close(),
    },
    async () => {
      await importImage(images.pauseOci);
      await importImage(images.busyboxOci);
    },
  );
  return {
    dir,
    socket,
    get daemon() {
      return instance.daemon;
    },
    cri,
    cgroups,
    ctr,
    importImage,
    async ctrRun(ns, name, image, args) {
      cgroups.push(`/${ns}/${name}`);
      await ctr(ns, ['run', '-d', image, name, ...args]);
    },
    restart: instance.restart,
    stop: instance.stop,
  };
}

/** Kills and deletes every task and container `ctr` made, in every namespace. */
async function removeCtrContainers(ctr: PrivateContainerd['ctr']): Promise<void> {
  const namespaces = (await ctr('default', ['namespaces', 'ls', '-q'])).split('\n').filter(Boolean);
  for (const ns of namespaces) {
    for (const id of (await ctr(ns, ['containers', 'ls', '-q'])).split('\n').filter(Boolean)) {
      await ctr(ns, ['tasks', 'kill', '-s', 'SIGKILL', id]).catch(() => undefined);
      await ctr(ns, ['tasks', 'delete', '-f', id]).catch(() => undefined);
      await ctr(ns, ['containers', 'delete', id]).catch(() => undefined);
    }
  }
}

/**
 * removePod's escalation for this containerd (dir, ctr): force SIGKILLs the pod's tasks through
 * ctr and deletes them, then SIGKILLs its shim (`-id <pod>`) and any process left in its cgroup
 * (containerd cleans up after a dead shim) and lazily unmounts what below `dir` names the pod or
 * one of its containers; leftovers lists those processes and mounts.
 */
function podTeardown(dir: string, ctr: PrivateContainerd['ctr'], podCgroups: Map<string, string>): Teardown {
  const mountsOf = (ids: string[]) => mountsUnder(dir).filter((m) => ids.some((id) => m.includes(id)));
  return {
    async force(podId, containerIds) {
      for (const id of [...containerIds, podId]) {
        await ctr('k8s.io', ['tasks', 'kill', '-s', 'SIGKILL', id]).catch(() => undefined);
        await ctr('k8s.io', ['tasks', 'delete', '-f', id]).catch(() => undefined);
      }
      await killNaming(`-id ${podId} `);
      const cgroup = podCgroups.get(podId);
      for (const pid of cgroup ? processesInCgroup(cgroup) : []) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      for (const m of mountsOf([podId, ...containerIds]).reverse()) await run('umount', ['-l', m]).catch(() => undefined);
    },
    leftovers(podId, containerIds) {
      const cgroup = podCgroups.get(podId);
      return [
        ...processesNaming(`-id ${podId} `).map((p) => `shim ${p.pid}: ${p.cmdline}`),
        ...(cgroup ? processesInCgroup(cgroup) : []).map((pid) => `process ${pid} in cgroup ${cgroup}`),
        ...mountsOf([podId, ...containerIds]).map((m) => `mount ${m}`),
      ];
    },
  };
}
