// Container and Kubernetes metadata from the real container runtimes (CRI/containerd, Docker,
// Podman) for container.* and k8s.* fields: one normalized ContainerRecord per container in a
// bounded cache that never makes an event wait, feeding the container table (table.ts) that the
// compiled rules read in their state region (see ContainerRecord in record.ts for what a field reads).
import { ContainerCache } from './cache.js';
import type { CriOptions } from './cri.js';
import { EngineSource } from './engine-api.js';
import type { ContainerRecord } from './record.js';
import type { MetadataSource, RuntimeEvent, Watch } from './source.js';

export { ContainerCache } from './cache.js';
import type { ContainerTable } from './table.js';
export { ContainerTable, containerFields } from './table.js';
export { EngineSource } from './engine-api.js';
export type { MetadataSource } from './source.js';
export {
  keptLabels,
  mountMatching,
  podFromLabels,
  recordFields,
  renderMounts,
  splitImage,
  type ContainerMount,
  type ContainerRecord,
} from './record.js';

/** Where to find the runtimes; each list is tried in order and every existing socket is used. */
export interface ContainerRuntimesConfig {
  docker: string[];
  podman: string[];
  cri: string[];
  /** Deadline of one metadata call. */
  callTimeoutMs: number;
}

/** Falco's container plugin defaults (plugins/container README, engines.*.sockets). */
export const DEFAULT_RUNTIMES: ContainerRuntimesConfig = {
  docker: ['/var/run/docker.sock'],
  podman: ['/run/podman/podman.sock', `/run/user/${process.getuid?.() ?? 0}/podman/podman.sock`],
  cri: ['/run/containerd/containerd.sock', '/run/crio/crio.sock', '/run/k3s/containerd/containerd.sock'],
  callTimeoutMs: 5000,
};

/**
 * A CRI runtime (cri.ts CriSource) whose gRPC client is loaded at the first call: grpc-js,
 * protobufjs and the two protos hold about 17 MB resident, and the cache calls a source only
 * when its socket exists, so a node without a CRI runtime never loads them.
 */
export class LazyCriSource implements MetadataSource {
  readonly name = 'cri';
  private loading: Promise<MetadataSource> | undefined;
  private loaded: MetadataSource | undefined;
  private closed = false;

  constructor(
    readonly socket: string,
    private readonly opts?: CriOptions,
  ) {}

  private source(): Promise<MetadataSource> {
    this.loading ??= import('./cri.js').then(({ CriSource }) => {
      this.loaded = new CriSource(this.socket, this.opts);
      if (this.closed) this.loaded.close();
      return this.loaded;
    });
    return this.loading;
  }

  async list(): Promise<ContainerRecord[]> {
    return (await this.source()).list();
  }

  async get(id: string): Promise<ContainerRecord | undefined> {
    return (await this.source()).get(id);
  }

  /** Follows events once the client is loaded (the cache watches after a list, so it is by then). */
  watch(onEvent: (e: RuntimeEvent) => void, onError: (err: Error) => void): Watch {
    let inner: Watch | undefined;
    let closed = false;
    this.source().then((s) => {
      if (!closed) inner = s.watch(onEvent, onError);
    }, onError);
    return {
      close: () => {
        closed = true;
        inner?.close();
      },
    };
  }

  close(): void {
    this.closed = true;
    this.loaded?.close();
  }
}

/** One source per configured socket. */
function sourcesOf(cfg: ContainerRuntimesConfig): MetadataSource[] {
  const t = { callTimeoutMs: cfg.callTimeoutMs };
  return [...cfg.cri.map((s) => new LazyCriSource(s, { ...t, namespace: 'k8s.io' })), ...cfg.docker.map((s) => new EngineSource('docker', s, t)), ...cfg.podman.map((s) => new EngineSource('podman', s, t))];
}

/** The `containers` section of the configuration (host/config/config.ts). */
export interface ContainersConfig {
  /** Deadline of one metadata call. */
  callTimeoutMs: number;
  cri: { enabled: boolean; sockets: string[] };
  docker: { enabled: boolean; sockets: string[] };
  podman: { enabled: boolean; sockets: string[] };
}

/** The cache's figures for metrics (enginesecurity_engine_containers, enginesecurity_engine_container_lookups_total). */
interface MetadataFigures {
  containers: number;
  lookups: { found: number; not_found: number; dropped: number; error: number };
}

/**
 * rae run's metadata feed: a cache over the enabled runtimes that writes what it learns and
 * forgets into the container table, and is asked about each container id the table sees first.
 * Nothing waits on it: the cache starts in the background (an absent runtime: one log line) and
 * a lookup's answer reaches the table, and the events after it, whenever it comes.
 */
export function followContainers(cfg: ContainersConfig, table: ContainerTable, log: (line: string) => void): { name: string; stop: () => Promise<void>; figures: () => MetadataFigures } {
  const runtimes: ContainerRuntimesConfig = {
    cri: cfg.cri.enabled ? cfg.cri.sockets : [],
    docker: cfg.docker.enabled ? cfg.docker.sockets : [],
    podman: cfg.podman.enabled ? cfg.podman.sockets : [],
    callTimeoutMs: cfg.callTimeoutMs,
  };
  const cache = new ContainerCache(sourcesOf(runtimes), {}, (line) => log(`run: ${line}`));
  cache.onChange = (id, r) => (r ? table.learn(r) : table.forget(id));
  table.onNewId = (id) => {
    const r = cache.get(id);
    if (r) table.learn(r);
  };
  void cache.start();
  const s = cache.stats;
  return {
    name: 'container metadata',
    stop: async () => cache.close(),
    figures: () => ({ containers: s.entries, lookups: { found: s.found, not_found: s.notFound, dropped: s.dropped, error: s.errors } }),
  };
}
