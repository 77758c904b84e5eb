// The orchestrator's API as the module reaches it, through @kubernetes/client-node (the
// Kubernetes project's own JavaScript client): its KubeConfig (in a pod the service account's
// token and CA, `loadFromCluster`; elsewhere a kubeconfig file), its Watch (the chunked JSON-lines
// watch stream) and its generated CustomObjectsApi (list). Nothing here is specific to a test
// server: only documented API paths and parameters are used. Consumes a kubeconfig path ('' =
// in-cluster); produces ListWatchTransports for the module's cluster-scoped kinds and the
// StatusApi of the status writer (Leases through the generic object paths, which serve every
// group: `/apis/coordination.k8s.io/v1/namespaces/<ns>/leases`, bodies as plain JSON).
import { CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import type { ApiObject, ListWatchTransport } from './list-watch.js';
import type { Lease, StatusApi } from './status-writer.js';

/** A custom resource kind: its group, version, plural (the URL's) and kind. */
interface ResourceKind {
  group: string;
  version: string;
  plural: string;
  kind: string;
}

/**
 * The client configuration: the kubeconfig file at `path`, or with '' the pod's service account
 * (token, CA and the API server's address from KUBERNETES_SERVICE_HOST/PORT). Throws a clear
 * error when neither is there.
 */
export function loadKubeConfig(path: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    try {
      kc.loadFromFile(path);
    } catch (err) {
      throw new Error(`cannot read the kubeconfig ${path}: ${(err as Error).message}`);
    }
    if (!kc.getCurrentCluster()) throw new Error(`the kubeconfig ${path} has no current cluster (current-context: ${kc.getCurrentContext() || 'none'})`);
    return kc;
  }
  if (!env.KUBERNETES_SERVICE_HOST) throw new Error('not in a pod (KUBERNETES_SERVICE_HOST is not set) and resources.kubeconfig is empty: set resources.kubeconfig to a kubeconfig file, or resources.watchApi to false');
  kc.loadFromCluster();
  return kc;
}

/** The API path of a custom resource's collection (of every namespace, for a namespaced one). */
function collectionPath(k: ResourceKind): string {
  return `/apis/${k.group}/${k.version}/${k.plural}`;
}

/** The longest silence of a watch stream before it is opened again (API servers send a bookmark about every minute). */
const SILENCE_MS = 3 * 60_000;

/** A watch's own end, as client-go: between 5 and 10 minutes, so the fleet's watches do not all end at once. */
function watchTimeoutSeconds(): number {
  return 300 + Math.floor(Math.random() * 300);
}

/** The module's kinds (ModuleConfig, EngineAuditRules, NamespacedEngineAuditRules of every namespace), each with its transport. */
export function moduleKinds(kc: KubeConfig, apiGroup: string, version: string): Array<{ plural: string; transport: ListWatchTransport }> {
  return [
    { plural: 'moduleconfigs', kind: 'ModuleConfig' },
    { plural: 'engineauditrules', kind: 'EngineAuditRules' },
    { plural: 'namespacedengineauditrules', kind: 'NamespacedEngineAuditRules' },
  ].map((k) => ({ plural: k.plural, transport: customResourceTransport(kc, { group: apiGroup, version, ...k }) }));
}

/** List and watch of one custom resource (in every namespace). */
function customResourceTransport(kc: KubeConfig, k: ResourceKind): ListWatchTransport {
  const api = kc.makeApiClient(CustomObjectsApi);
  const watcher = new Watch(kc);
  const path = collectionPath(k);
  return {
    what: k.kind,
    async list() {
      const body = (await api.listClusterCustomObject({ group: k.group, version: k.version, plural: k.plural })) as { items?: ApiObject[]; metadata?: { resourceVersion?: string } };
      return { items: body.items ?? [], resourceVersion: body.metadata?.resourceVersion ?? '' };
    },
    watch(resourceVersion, onEvent, signal) {
      return new Promise<void>((resolve, reject) => {
        let ended = false;
        let request: AbortController | undefined;
        // A stream silent for SILENCE_MS (no event, no bookmark) may be a dead connection: it ends
        // cleanly and is watched again from where it was (the client has no deadline of its own).
        let silence: NodeJS.Timeout | undefined;
        const heard = () => {
          clearTimeout(silence);
          silence = setTimeout(() => end(), SILENCE_MS);
          silence.unref();
        };
        const end = (err?: unknown) => {
          if (ended) return;
          ended = true;
          clearTimeout(silence);
          signal.removeEventListener('abort', stop);
          request?.abort();
          if (err) reject(err);
          else resolve();
        };
        heard();
        const stop = () => end();
        signal.addEventListener('abort', stop, { once: true });
        const query = { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: watchTimeoutSeconds() };
        watcher
          .watch(
            path,
            query,
            (type: string, object: ApiObject) => {
              if (ended) return;
              heard();
              // Watch swallows what its callback throws: the error is carried out here.
              try {
                onEvent({ type, object });
              } catch (err) {
                end(err);
              }
            },
            (err: unknown) => end(err ?? undefined),
          )
          .then((r) => {
            request = r;
            if (ended) r.abort();
          }, end);
      });
    },
  };
}

/** The namespace of the kubeconfig's current context (in a pod: the service account's), else `default`. */
export function contextNamespace(kc: KubeConfig): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace?.trim() || 'default';
}

const LEASES = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' };

/** The status writer's calls: Leases, and the status subresource of the module's kinds (group `apiGroup`, `version`). */
export function statusApi(kc: KubeConfig, apiGroup: string, version: string): StatusApi {
  const api = kc.makeApiClient(CustomObjectsApi);
  const plurals: Record<string, string> = { EngineAuditRules: 'engineauditrules', NamespacedEngineAuditRules: 'namespacedengineauditrules', ModuleConfig: 'moduleconfigs' };
  return {
    async getLease(namespace, name) {
      try {
        return (await api.getNamespacedCustomObject({ ...LEASES, namespace, name })) as Lease;
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      }
    },
    createLease: (namespace, body) => api.createNamespacedCustomObject({ ...LEASES, namespace, body }),
    replaceLease: (namespace, body) => api.replaceNamespacedCustomObject({ ...LEASES, namespace, name: body.metadata.name, body }),
    async listLeases(namespace, labelSelector) {
      return ((await api.listNamespacedCustomObject({ ...LEASES, namespace, labelSelector })) as { items?: Lease[] }).items ?? [];
    },
    replaceStatus(o) {
      const plural = plurals[o.kind ?? ''];
      if (!plural) throw new Error(`replaceStatus: ${o.kind ?? 'an object without a kind'} ${o.metadata.name} has no status subresource here`);
      const at = { group: apiGroup, version, plural, name: o.metadata.name, body: o };
      const { namespace } = o.metadata;
      return namespace ? api.replaceNamespacedCustomObjectStatus({ ...at, namespace }) : api.replaceClusterCustomObjectStatus(at);
    },
  };
}
