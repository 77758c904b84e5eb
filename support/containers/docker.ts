// A private dockerd for tests (reference containers.md section 5): data root, exec root, socket
// and pidfile in a temp dir, no iptables or bridge (containers use --network none), and
// runc-boundcaps.sh as default runtime so --privileged works without CAP_SYS_RESOURCE. It starts
// its own containerd under the exec root when no system containerd socket exists. stop() removes
// every container, then tears down as every private instance does (instance.ts).
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startDaemon, type Daemon } from './daemon.js';
import { BUSYBOX_IMAGE, type TestImages } from './images.js';
import { startInstance, type Instance } from './instance.js';

const run = promisify(execFile);
const WRAPPER = fileURLToPath(new URL('./runc-boundcaps.sh', import.meta.url));
const FILTER = fileURLToPath(new URL('./runc-boundcaps.mjs', import.meta.url));
/** Debian's docker.io client, the same version as its dockerd. */
const DOCKER = '/usr/bin/docker';
const TRUST_KEY = '/etc/docker/key.json';

/** Whether dockerd and its client are installed (scripts/setup.sh --for test). */
export function dockerPresent(): boolean {
  return existsSync('/usr/sbin/dockerd') && existsSync(DOCKER);
}

/** A container to run: `docker run -d` with these options. */
interface DockerRunSpec {
  name: string;
  image?: string;
  args?: string[];
  labels?: Record<string, string>;
  privileged?: boolean;
  /** `-v host:container[:ro]` */
  mounts?: Array<{ source: string; destination: string; readonly?: boolean }>;
  /** `--pid host`, `--ipc host` */
  hostPid?: boolean;
  hostIpc?: boolean;
}

/** A running private dockerd (or podman service: same CLI shape, see podman.ts). */
export interface PrivateEngine {
  dir: string;
  /** The Engine API socket. */
  socket: string;
  daemon: Daemon;
  cgroups: string[];
  /** The runtime's CLI against this instance; resolves with stdout. */
  cli(args: string[]): Promise<string>;
  /** `run -d`; resolves with the full container id. */
  run(spec: DockerRunSpec): Promise<string>;
  /** `rm -f` of one container. */
  remove(id: string): Promise<void>;
  /** Stops the daemon and starts it again on the same socket and storage. */
  restart(): Promise<void>;
  /** Removes every container and tears down (instance.ts); resolves with what is still left, `[]` when nothing. Runs once. */
  stop(): Promise<string[]>;
}

/** The `run -d` arguments for a spec. */
function runArgs(spec: DockerRunSpec): string[] {
  const args = ['run', '-d', '--name', spec.name, '--network', 'none'];
  if (spec.privileged) args.push('--privileged');
  if (spec.hostPid) args.push('--pid', 'host');
  if (spec.hostIpc) args.push('--ipc', 'host');
  for (const [k, v] of Object.entries(spec.labels ?? {})) args.push('--label', `${k}=${v}`);
  for (const m of spec.mounts ?? []) args.push('-v', `${m.source}:${m.destination}${m.readonly ? ':ro' : ''}`);
  args.push(spec.image ?? BUSYBOX_IMAGE, ...(spec.args ?? ['sleep', '3600']));
  return args;
}

/**
 * The PrivateEngine of a started instance, dockerd's or podman's (the same CLI shape): `cgroupOf`
 * names a container's cgroup (removed at stop), `rm` is the removal of one container before its id.
 */
export function privateEngine(instance: Instance, socket: string, cgroups: string[], cli: PrivateEngine['cli'], cgroupOf: (id: string) => string, rm: string[]): PrivateEngine {
  return {
    dir: instance.dir,
    socket,
    get daemon() {
      return instance.daemon;
    },
    cgroups,
    cli,
    async run(spec) {
      const id = (await cli(runArgs(spec))).trim();
      cgroups.push(cgroupOf(id));
      return id;
    },
    async remove(id) {
      await cli([...rm, id]);
    },
    restart: instance.restart,
    stop: instance.stop,
  };
}

/** Starts a private dockerd in a new temp dir and imports the busybox image as BUSYBOX_IMAGE. */
export async function startDockerd(images: TestImages): Promise<PrivateEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-dockerd-'));
  // dockerd 20.10 writes a trust key to /etc/docker/key.json (no flag moves it): removed at stop
  // when this instance made it
  const ownKey = !existsSync(TRUST_KEY);
  const runtime = join(dir, 'runc-boundcaps');
  writeFileSync(runtime, readFileSync(WRAPPER, 'utf8').replaceAll('@NODE@', process.execPath).replaceAll('@FILTER@', FILTER));
  chmodSync(runtime, 0o755);
  const socket = join(dir, 'docker.sock');
  const env = { ...process.env, DOCKER_CONFIG: join(dir, 'client') };
  const cli = async (args: string[]) => (await run(DOCKER, ['-H', `unix://${socket}`, ...args], { env, maxBuffer: 16 << 20 })).stdout;
  const cgroups: string[] = [];
  const instance = await startInstance(
    dir,
    cgroups,
    {
      what: 'dockerd',
      launch: () =>
        startDaemon('/usr/sbin/dockerd', [
          '--data-root',
          join(dir, 'data'),
          '--exec-root',
          join(dir, 'exec'),
          '-H',
          `unix://${socket}`,
          '--pidfile',
          join(dir, 'docker.pid'),
          '--iptables=false',
          '--ip-masq=false',
          '--bridge=none',
          '--userland-proxy=false',
          '--storage-driver',
          'overlay2',
          '--add-runtime',
          `rae-runc=${runtime}`,
          '--default-runtime',
          'rae-runc',
        ]),
      ready: () =>
        existsSync(socket) &&
        cli(['version']).then(
          () => true,
          () => false,
        ),
      removals: [
        [
          'removing the containers',
          async () => {
            const ids = (await cli(['ps', '-aq'])).split('\n').filter(Boolean);
            if (ids.length) await cli(['rm', '-f', ...ids]);
          },
        ],
      ],
      afterStop: () => {
        if (ownKey) rmSync(TRUST_KEY, { force: true });
      },
    },
    () => cli(['import', '--change', 'CMD ["/bin/sh"]', images.busyboxRootfs, BUSYBOX_IMAGE]),
  );
  return privateEngine(instance, socket, cgroups, cli, (id) => `/docker/${id}`, ['rm', '-f']);
}
