// The containers of suite tests made through the node's Docker or Podman, as upstream's runner
// makes them (pkg/container/builder: docker's Engine API; a privileged container per test named
// by the test's `name`, default `event-generator`, from the base image tagged with the test's
// `image` when it names one, the tag removed after). The base image is the event generator's,
// built offline from the node's busybox-static and loaded when the runtime lacks it
// (host/generator/container.ts); the node's /usr, /lib, /lib64 and bash are bound read-only into
// the container for the chain's program, and the test's plan directory writable at its own path.
// The container has no network (`none`: its own loopback only, IPv6 on), as the generator's. Consumes the
// sockets to try (the default ones of `rae run`'s configuration, or the one given); produces
// started containers, their exit status, and their removal.
import type { ContainersConfig } from '../../sources/container/index.js';
import { EngineSource, DEFAULT_RUNTIMES } from '../../sources/container/index.js';
import { GENERATOR_IMAGE, GENERATOR_LABEL, openGeneratorRuntime, type BoxBind } from '../../generator/index.js';

/** What one test's container is. */
export interface RuntimeContainerSpec {
  /** The container's name (upstream's default: event-generator). */
  name: string;
  /** The image name it runs (the base image tagged with it when different). */
  image: string;
  /** The container's process: argv, and its environment as NAME=value. */
  argv: string[];
  env: string[];
  /** Node paths bound into it (read-only unless writable). */
  binds: readonly BoxBind[];
}

/** A started container. */
export interface StartedContainer {
  id: string;
  /** Resolves with the exit status of its process, or rejects when it does not end within `timeoutMs`. */
  wait(timeoutMs: number): Promise<number>;
  /** Removes the container (forced) and the image tag made for it. */
  remove(): Promise<void>;
}

/** The containers section that names one socket: its runtime's only, the others off. */
export function containersFor(runtime: 'docker' | 'podman', socket: string): ContainersConfig {
  return {
    callTimeoutMs: DEFAULT_RUNTIMES.callTimeoutMs,
    cri: { enabled: false, sockets: [] },
    docker: { enabled: runtime === 'docker', sockets: runtime === 'docker' ? [socket] : [] },
    podman: { enabled: runtime === 'podman', sockets: runtime === 'podman' ? [socket] : [] },
  };
}

/**
 * Deadline of the probe of a named socket: only the runner waits on it, and a busy node's Podman
 * answers its first GET /version in seconds (it asks conmon and the OCI runtime for their
 * versions); the metadata reader's 5 s deadline made a loaded Podman look absent.
 */
const PROBE_TIMEOUT_MS = 60_000;

/**
 * Which runtime answers on `socket` (a path or unix:// URL, as upstream's
 * --container-runtime-unix-socket): Podman names itself "Podman Engine" among the components of
 * GET /version; anything else that answers is taken as Docker. Rejects when nothing answers.
 */
export async function runtimeAt(socket: string): Promise<{ runtime: 'docker' | 'podman'; socket: string }> {
  const path = socket.replace(/^unix:\/\//, '');
  const probe = new EngineSource('docker', path, { callTimeoutMs: PROBE_TIMEOUT_MS });
  try {
    const v = await probe.call<{ Components?: Array<{ Name?: string }> }>('GET', '/version');
    if (v.status !== 200) throw new Error(`HTTP ${v.status} ${v.text.trim().slice(0, 200)}`);
    return { runtime: v.json?.Components?.some((c) => /podman/i.test(c.Name ?? '')) ? 'podman' : 'docker', socket: path };
  } catch (err) {
    throw new Error(`container runtime socket ${path}: no Docker/Podman Engine API answers there (${(err as Error).message})`);
  } finally {
    probe.close();
  }
}

/** The Engine API runtime a suite's containers are made in. */
export class RuntimeContainers {
  private constructor(private readonly engine: EngineSource) {}

  /** docker or podman. */
  get runtime(): 'docker' | 'podman' {
    return this.engine.name;
  }

  get socket(): string {
    return this.engine.socket;
  }

  /** The first runtime of `cfg` that answers, with the base image loaded; or why there is none. */
  static async open(cfg: ContainersConfig, log: (line: string) => void): Promise<{ runtime?: RuntimeContainers; unavailable?: string }> {
    const opened = await openGeneratorRuntime(cfg, log);
    return opened.engine ? { runtime: new RuntimeContainers(opened.engine) } : { unavailable: opened.unavailable };
  }

  /** Creates and starts the container; on a failure nothing is left (the container and the tag are removed). */
  async start(spec: RuntimeContainerSpec): Promise<StartedContainer> {
    const e = this.engine;
    const fail = (what: string, r: { status: number; text: string }) => new Error(`${what}: HTTP ${r.status} ${r.text.trim().slice(0, 300)}`);
    let tagged: string | undefined;
    let id: string | undefined;
    const remove = async () => {
      const errors: string[] = [];
      if (id) {
        const r = await e.call('DELETE', `/containers/${id}?force=true&v=true`).catch((err: Error) => ({ status: 0, text: err.message }));
        if (r.status !== 204 && r.status !== 404) errors.push(`removing container ${spec.name}: ${r.status ? `HTTP ${r.status} ` : ''}${r.text.trim()}`);
      }
      if (tagged) {
        const r = await e.call('DELETE', `/images/${encodeURIComponent(tagged)}?noprune=true`).catch((err: Error) => ({ status: 0, text: err.message }));
        if (r.status !== 200 && r.status !== 404) errors.push(`removing image tag ${tagged}: ${r.status ? `HTTP ${r.status} ` : ''}${r.text.trim()}`);
      }
      if (errors.length > 0) throw new Error(errors.join('; '));
    };
    try {
      if (spec.image !== GENERATOR_IMAGE) {
        // upstream tags its base image with the test's name for it; an image of that name that
        // is not ours is left alone (the tag would move off it)
        if ((await e.call('GET', `/images/${encodeURIComponent(spec.image)}/json`)).status === 200) throw new Error(`image ${spec.image} exists in the runtime already: not tagging the suite's base image over it`);
        const at = spec.image.lastIndexOf(':');
        const [repo, tag] = at > spec.image.lastIndexOf('/') ? [spec.image.slice(0, at), spec.image.slice(at + 1)] : [spec.image, 'latest'];
        const r = await e.call('POST', `/images/${encodeURIComponent(GENERATOR_IMAGE)}/tag?repo=${encodeURIComponent(repo)}&tag=${encodeURIComponent(tag)}`);
        if (r.status !== 201 && r.status !== 200) throw fail(`tagging ${GENERATOR_IMAGE} as ${spec.image}`, r);
        tagged = `${repo}:${tag}`;
      }
      const created = await e.call('POST', `/containers/create?name=${encodeURIComponent(spec.name)}`, {
        Image: spec.image,
        Entrypoint: spec.argv,
        Cmd: [],
        Env: spec.env,
        Labels: { [GENERATOR_LABEL]: 'suite' },
        HostConfig: {
          Privileged: true,
          NetworkMode: 'none',
          // Docker turns IPv6 off in a container's network namespace; suites' clientServer
          // resources use ::1 as upstream's do on a host with IPv6
          Sysctls: { 'net.ipv6.conf.all.disable_ipv6': '0', 'net.ipv6.conf.lo.disable_ipv6': '0' },
          Binds: spec.binds.map((b) => `${b.source}:${b.target}:${b.writable ? 'rw' : 'ro'}`),
        },
      });
      if (created.status !== 201) throw fail(`creating container ${spec.name}`, created);
      id = created.json.Id;
      const started = await e.call('POST', `/containers/${id}/start`);
      if (started.status !== 204 && started.status !== 304) throw fail(`starting container ${spec.name}`, started);
    } catch (err) {
      await remove().catch(() => undefined);
      throw err;
    }
    const cid = id;
    return {
      id: cid,
      wait: async (timeoutMs) => {
        const r = await e.call<{ StatusCode?: number }>('POST', `/containers/${cid}/wait`, undefined, timeoutMs).catch((err: Error) => {
          throw new Error(`container ${spec.name} did not end in ${timeoutMs} ms (${err.message})`);
        });
        if (r.status !== 200 || typeof r.json?.StatusCode !== 'number') throw fail(`waiting for container ${spec.name}`, r);
        return r.json.StatusCode;
      },
      remove,
    };
  }

  close(): void {
    this.engine.close();
  }
}
