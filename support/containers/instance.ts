// One private runtime instance's life, the same for dockerd, the podman service and containerd
// (docker.ts, podman.ts, containerd.ts say what differs): the daemon launched in the instance's
// temporary directory and waited for, the runtime's set-up once it answers, a restart on the same
// directory, and a teardown that runs once, also on SIGTERM/SIGINT/SIGHUP (cleanup.ts): the
// runtime's own removals of its containers, the daemon stopped, processes that name the directory
// (shims outlive their daemon) killed, the cgroups its containers used and the directory removed,
// then what is still left reported.
import { stopOnSignal } from '../cleanup.js';
import { waitReady, type Daemon } from './daemon.js';
import { killNaming, leftovers, removeCgroups, removeDir } from './host-state.js';

/** What one runtime decides. */
interface InstanceSpec {
  /** Its name in messages: `dockerd`, `podman service`, `containerd`. */
  what: string;
  /** Starts the daemon (again on restart). */
  launch(): Daemon;
  /** Whether the daemon answers. */
  ready(): Promise<boolean> | boolean;
  /** Before the launch of a restart (the podman service leaves its socket behind). */
  beforeRelaunch?(): void;
  /** The teardown's removals through the runtime, in order, each named: a failure is reported on stderr and the next one runs. */
  removals: Array<[string, () => Promise<unknown>]>;
  /** Whether the removals work without the daemon (podman's CLI works on the store itself); else they are skipped once it exited. */
  removeWithoutDaemon?: boolean;
  /** After the removals, before the daemon stops (containerd: its CRI client). */
  beforeStop?(): void;
  /** After the daemon stopped, before the directory goes (dockerd: the trust key it made). */
  afterStop?(): void;
}

/** A started instance. */
export interface Instance {
  dir: string;
  /** The daemon now running (a restart replaces it). */
  readonly daemon: Daemon;
  /** Stops the daemon and launches it again on the same directory; resolves once it answers. */
  restart(): Promise<void>;
  /**
   * Tears the instance down (once; a second call gets the first one's answer); resolves with what
   * is still left (`leftovers` without network namespaces, which these instances do not make),
   * `[]` when nothing, and writes a non-empty list to stderr.
   */
  stop(): Promise<string[]>;
}

/**
 * Launches the daemon of the instance in `dir` (made by the caller, removed by stop), waits for
 * it and runs `setUp`; on any failure tears down and throws. `cgroups` is the caller's list of
 * the cgroups its containers use, read at teardown.
 */
export async function startInstance(dir: string, cgroups: string[], spec: InstanceSpec, setUp: () => Promise<unknown>): Promise<Instance> {
  let daemon = spec.launch();
  let stopped: Promise<string[]> | undefined;
  const instance: Instance = {
    dir,
    get daemon() {
      return daemon;
    },
    async restart() {
      await daemon.stop();
      spec.beforeRelaunch?.();
      daemon = spec.launch();
      await waitReady(daemon, spec.what, spec.ready);
    },
    stop() {
      stopped ??= (async () => {
        unregister();
        try {
          for (const [what, remove] of spec.removals) {
            if (!spec.removeWithoutDaemon && daemon.exited()) break;
            await remove().catch((e: unknown) => process.stderr.write(`${spec.what} ${dir}: ${what}: ${e instanceof Error ? e.message : String(e)}\n`));
          }
        } finally {
          spec.beforeStop?.();
          await daemon.stop();
          await killNaming(dir);
          await removeCgroups(cgroups);
          spec.afterStop?.();
          removeDir(dir);
        }
        const left = leftovers(dir, cgroups, []).filter((l) => !l.startsWith('netns '));
        if (left.length) process.stderr.write(`*** ${spec.what} ${dir}: LEFT BEHIND after stop: ${left.join('; ')} ***\n`);
        return left;
      })();
      return stopped;
    },
  };
  const unregister = stopOnSignal(async () => void (await instance.stop()));
  try {
    await waitReady(daemon, spec.what, spec.ready);
    await setUp();
  } catch (e) {
    await instance.stop();
    throw e;
  }
  return instance;
}
