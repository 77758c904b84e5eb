// The module's resources as objects of the orchestrator's API: ModuleConfig, EngineAuditRules and
// NamespacedEngineAuditRules listed and watched (list-watch.ts), each object rendered as the manifest a file would hold
// (apiVersion, kind, metadata.name and .namespace, spec: what `kubectl apply` was given, without
// the server's metadata and status) at a path of its own, `cluster/<plural>/[<namespace>/]<name>.yaml`. Those snapshots go
// to the same controller as the watched directory's files, so an object is checked, located,
// accepted or rejected exactly as a manifest file is (an invalid one never replaces the running
// rules). Snapshots are handed on one at a time, only once every kind has been listed, and only
// when their content (or an object's generation) changed: a reconnect or relist that finds what
// was there, or a change of status only, applies nothing.
// Consumes ListWatchTransports; produces ManifestFile snapshots.
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { type ApiObject, ListWatch, type ListWatchTransport } from './list-watch.js';
import type { ManifestFile } from './watch.js';

/** The folder of the paths cluster objects are rendered at (their diagnostics name it). */
const CLUSTER_PATH = 'cluster';

export interface ClusterResourcesOptions {
  /** One transport per kind; each object is rendered under `cluster/<plural>/`. */
  kinds: ReadonlyArray<{ plural: string; transport: ListWatchTransport }>;
  /** Called with every changed snapshot (and the objects it was rendered from, by path), one call at a time. */
  onChange(files: ManifestFile[], objects: ReadonlyMap<string, ApiObject>): Promise<void>;
  log(message: string): void;
  retryMs?: number;
  retryMaxMs?: number;
}

/** Running list-watches. */
export interface ClusterResources {
  /** The objects held now (with their metadata and status), by the path they are rendered at. */
  objects(): Map<string, ApiObject>;
  /** Resolves true once every kind has been listed, false when `timeoutMs` passes first. */
  whenSynced(timeoutMs: number): Promise<boolean>;
  /** Resolves once no snapshot is pending or being handled. */
  idle(): Promise<void>;
  close(): void;
}

/** The manifest of an object: the parts a user applies, in the order they write them. */
function renderObject(o: ApiObject): string {
  const { name, namespace } = o.metadata;
  return stringify({ apiVersion: o.apiVersion, kind: o.kind, metadata: namespace ? { name, namespace } : { name }, spec: o.spec ?? null }, { lineWidth: 0 });
}

/** The snapshot's content and each object's generation (the status speaks of generations). */
function contentKey(files: ManifestFile[], objects: ReadonlyMap<string, ApiObject>): string {
  const h = createHash('sha256');
  for (const f of files) h.update(`${f.path}\0${f.text ?? ''}\0${objects.get(f.path)?.metadata.generation ?? ''}\0`);
  return h.digest('hex');
}

/** Starts listing and watching every kind; snapshots flow once all are listed. */
export function startClusterResources(opts: ClusterResourcesOptions): ClusterResources {
  const abort = new AbortController();
  let scheduled = false;
  let running: Promise<void> | undefined;
  let dirty = false;
  let lastKey = '';
  const idleWaiters: Array<() => void> = [];
  const watches = opts.kinds.map((k) => ({ plural: k.plural, lw: new ListWatch(k.transport, { onChange: () => changed(), log: opts.log, retryMs: opts.retryMs, retryMaxMs: opts.retryMaxMs }) }));
  const synced = () => watches.every((w) => w.lw.synced);

  const pathOf = (plural: string, o: ApiObject) => `${CLUSTER_PATH}/${plural}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}.yaml`;
  const objects = () => new Map(watches.flatMap((w) => w.lw.items().map((o) => [pathOf(w.plural, o), o] as const)));
  const files = (of: ReadonlyMap<string, ApiObject>): ManifestFile[] => [...of].map(([path, o]) => ({ path, text: renderObject(o) })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  const settleIfIdle = () => {
    if (!running && !scheduled) while (idleWaiters.length > 0) idleWaiters.shift()!();
  };

  async function deliver(): Promise<void> {
    do {
      dirty = false;
      const held = objects();
      const snapshot = files(held);
      const key = contentKey(snapshot, held);
      if (key === lastKey || abort.signal.aborted) continue;
      lastKey = key;
      try {
        await opts.onChange(snapshot, held);
      } catch (err) {
        opts.log(`resources: handling a change of the cluster's objects failed: ${(err as Error).message}`);
      }
    } while (dirty && !abort.signal.aborted);
  }

  // The events of one chunk of a watch stream are handled together (one snapshot after them).
  function changed(): void {
    if (!synced() || abort.signal.aborted) return;
    if (running) {
      dirty = true;
      return;
    }
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      running = deliver().finally(() => {
        running = undefined;
        settleIfIdle();
      });
    });
  }

  for (const w of watches) void w.lw.run(abort.signal);

  return {
    objects,
    async whenSynced(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const all = Promise.all(watches.map((w) => w.lw.whenSynced())).then(() => true as const);
      try {
        return await Promise.race([all, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIfIdle();
      }),
    close() {
      abort.abort();
      settleIfIdle();
    },
  };
}
