// One normalized record per container, whatever runtime it came from, with the semantics and
// renderings of Falco's container plugin (falcosecurity/plugins plugins/container, reference
// containers.md sections 10-11): what container.* and k8s.* fields read. Producing a record is the
// job of cri.ts and engine-api.ts; keeping them is cache.ts's.

/** Which runtime a record came from (container.type). */
type ContainerType = 'docker' | 'podman' | 'containerd' | 'cri-o';

/** One mount as container.mount.* shows it. */
export interface ContainerMount {
  source: string;
  dest: string;
  /** Docker's Mode ("ro", "rw", "" ...); empty for CRI. */
  mode: string;
  rdwr: boolean;
  /** private/rslave/rshared (CRI), or the runtime's own word (Docker: rprivate ...). */
  propagation: string;
}

/** The Kubernetes pod a container runs in (k8s.pod.*, k8s.ns.name). */
export interface PodRecord {
  name: string;
  namespace: string;
  uid: string;
  /** The pod sandbox's id, 12 characters (k8s.pod.sandbox_id); full in fullSandboxId. */
  sandboxId: string;
  fullSandboxId: string;
  labels: Record<string, string>;
  ip: string;
}

/** Everything known about one container. Missing values are '' (rendered `<NA>` by the fields). */
export interface ContainerRecord {
  /** 12 characters: the key of the cache and of container.id. */
  id: string;
  fullId: string;
  type: ContainerType;
  name: string;
  image: string;
  imageId: string;
  imageRepository: string;
  imageTag: string;
  imageDigest: string;
  privileged: boolean;
  mounts: ContainerMount[];
  ip: string;
  hostPid: boolean;
  hostNetwork: boolean;
  hostIpc: boolean;
  labels: Record<string, string>;
  /** Start time, ns since the epoch (0 when unknown). */
  startTs: bigint;
  /** Set for containers of a Kubernetes pod (from CRI, or from io.kubernetes.* labels). */
  pod?: PodRecord;
  /** True for a pod's sandbox (pause) container. */
  sandbox: boolean;
}

/** Falco drops label values longer than this (plugin option label_max_len, default 100). */
const LABEL_MAX_LEN = 100;

/** The first 12 characters of an id, as container.id and k8s.pod.sandbox_id show it. */
export const shortId = (id: string): string => id.slice(0, 12);

/** Labels without those whose value is longer than LABEL_MAX_LEN. */
export function keptLabels(labels: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels ?? {})) if (v.length <= LABEL_MAX_LEN) out[k] = v;
  return out;
}

/**
 * An image reference split as the plugin does: `repo[:tag][@digest]`, the tag being after the
 * last ':' that follows the last '/' (so a registry port is not a tag).
 */
export function splitImage(ref: string): { repository: string; tag: string; digest: string } {
  const at = ref.indexOf('@');
  const digest = at >= 0 ? ref.slice(at + 1) : '';
  const name = at >= 0 ? ref.slice(0, at) : ref;
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) return { repository: name.slice(0, colon), tag: name.slice(colon + 1), digest };
  return { repository: name, tag: '', digest };
}

/** The k8s.* part from io.kubernetes.* labels (CRI sets them; cri-dockerd nodes too). */
export function podFromLabels(labels: Record<string, string>): PodRecord | undefined {
  const name = labels['io.kubernetes.pod.name'];
  const namespace = labels['io.kubernetes.pod.namespace'];
  if (!name || !namespace) return undefined;
  const sandbox = labels['io.kubernetes.sandbox.id'] ?? '';
  return { name, namespace, uid: labels['io.kubernetes.pod.uid'] ?? '', sandboxId: shortId(sandbox), fullSandboxId: sandbox, labels: {}, ip: '' };
}

/** `k:v,k:v` as container.labels and k8s.pod.labels render. */
function renderLabels(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}:${v}`)
    .join(',');
}

/** One mount as container.mount[i] renders: `source:dest:mode:rdwr:propagation`. */
function renderMount(m: ContainerMount): string {
  return `${m.source}:${m.dest}:${m.mode}:${m.rdwr}:${m.propagation}`;
}

/** container.mounts: every mount, comma-separated. */
export function renderMounts(mounts: ContainerMount[]): string {
  return mounts.map(renderMount).join(',');
}

/** The string value of each container.* / k8s.* field a record gives (absent key: `<NA>`). */
export function recordFields(r: ContainerRecord): Record<string, string> {
  const f: Record<string, string> = {
    'container.id': r.id,
    'container.full_id': r.fullId,
    'container.type': r.type,
    'container.privileged': String(r.privileged),
    'container.mounts': renderMounts(r.mounts),
    'container.host_pid': String(r.hostPid),
    'container.host_network': String(r.hostNetwork),
    'container.host_ipc': String(r.hostIpc),
    'container.labels': renderLabels(r.labels),
  };
  const optional: Array<[string, string]> = [
    ['container.name', r.name],
    ['container.image', r.image],
    ['container.image.id', r.imageId],
    ['container.image.repository', r.imageRepository],
    ['container.image.tag', r.imageTag],
    ['container.image.digest', r.imageDigest],
    ['container.ip', r.ip],
  ];
  if (r.startTs > 0n) optional.push(['container.start_ts', String(r.startTs)]);
  if (r.pod) {
    optional.push(
      ['k8s.pod.name', r.pod.name],
      ['k8s.ns.name', r.pod.namespace],
      ['k8s.pod.uid', r.pod.uid],
      ['k8s.pod.id', r.pod.uid],
      ['k8s.pod.sandbox_id', r.pod.sandboxId],
      ['k8s.pod.full_sandbox_id', r.pod.fullSandboxId],
      ['k8s.pod.labels', renderLabels(r.pod.labels)],
      ['k8s.pod.ip', r.pod.ip],
    );
  }
  for (const [k, v] of optional) if (v !== '') f[k] = v;
  return f;
}

/**
 * container.mount.*[KEY] selection: the plugin does a regex search of KEY over each mount's source
 * (or its destination, for mount.source[KEY]) instead of a glob match, so `/tmp*` and `foo` both
 * select `/tmp/foo`. Returns the first matching mount.
 */
export function mountMatching(mounts: ContainerMount[], key: string, over: 'source' | 'dest'): ContainerMount | undefined {
  let re: RegExp;
  try {
    re = new RegExp(key, 'm');
  } catch {
    return undefined;
  }
  return mounts.find((m) => re.test(over === 'source' ? m.source : m.dest));
}

/**
 * The value of a keyed field for a record, as the plugin gives it: container.label[k] and
 * k8s.pod.label[k] (labels over 100 characters are already dropped); container.mount[i] and
 * container.mount.*[i] by index, else the first mount whose source (for mount.source: dest)
 * a regex search of the key finds (mountMatching).
 */
export function keyedValue(r: ContainerRecord, name: string, key: string): string | undefined {
  if (name === 'container.label') return r.labels[key];
  if (name === 'k8s.pod.label') return r.pod?.labels[key];
  const byIndex = /^\d+$/.test(key) ? r.mounts[Number(key)] : undefined;
  const m = byIndex ?? mountMatching(r.mounts, key, name === 'container.mount.source' ? 'dest' : 'source');
  // none matches: 'none' (container.mount) or 'N/A', the values the rules test for (the sandbox
  // rules' sensitive_mount: `not container.mount.dest[/proc*] in ("<NA>","N/A")`); fields of a
  // container whose metadata is not known stay missing
  if (!m) return name === 'container.mount' ? 'none' : 'N/A';
  switch (name) {
    case 'container.mount':
      return renderMount(m);
    case 'container.mount.source':
      return m.source;
    case 'container.mount.dest':
      return m.dest;
    case 'container.mount.mode':
      return m.mode;
    case 'container.mount.rdwr':
      return String(m.rdwr);
    case 'container.mount.propagation':
      return m.propagation;
  }
  return undefined;
}
