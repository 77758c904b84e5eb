// Container metadata from a CRI runtime (containerd, CRI-O) over gRPC on its unix socket:
// ListContainers, ContainerStatus(verbose) and PodSandboxStatus(verbose) of runtime.v1
// (cri.proto), mapped as Falco's CRI engine maps them; lifecycle events from containerd's own
// Events/Subscribe (CRI's GetContainerEvents needs containerd >= 1.7; Debian 12 has 1.6).
import grpc from '@grpc/grpc-js';
import loader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import { keptLabels, shortId, splitImage, type ContainerMount, type ContainerRecord, type PodRecord } from './record.js';
import type { MetadataSource, RuntimeEvent, Watch } from './source.js';

/** grpc-go's default keepalive enforcement MinTime: a client pinging more often is disconnected. */
const KEEPALIVE_MS = 300_000;
const CRI_PROTO = fileURLToPath(new URL('./cri.proto', import.meta.url));
const EVENTS_PROTO = fileURLToPath(new URL('./containerd-events.proto', import.meta.url));
const LOAD = { longs: String, enums: String, defaults: true, oneofs: true } as const;

/** CRI's propagation enum in the plugin's words. */
const PROPAGATION: Record<string, string> = {
  PROPAGATION_PRIVATE: 'private',
  PROPAGATION_HOST_TO_CONTAINER: 'rslave',
  PROPAGATION_BIDIRECTIONAL: 'rshared',
};
/** NamespaceMode NODE: the host's namespace (numeric in the verbose info JSON, named in messages). */
const isNode = (mode: unknown) => mode === 2 || mode === 'NODE';

type Unary = (req: unknown, opts: { deadline: number }, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

/** The client constructor of service `path` (dotted: `runtime.v1.RuntimeService`) in a loaded proto file. */
export function serviceOf(definition: loader.PackageDefinition, path: string): grpc.ServiceClientConstructor {
  let at: unknown = grpc.loadPackageDefinition(definition);
  for (const name of path.split('.')) at = typeof at === 'object' && at !== null ? (at as grpc.GrpcObject)[name] : undefined;
  if (typeof at !== 'function') throw new Error(`${path} is not a service of the proto`);
  return at as grpc.ServiceClientConstructor;
}

/** Options of a CRI source. */
export interface CriOptions {
  /** Deadline of one call. */
  callTimeoutMs: number;
  /** containerd namespace whose events are followed (CRI's is k8s.io). */
  namespace: string;
}

/** A Mount of ContainerStatus (enums as names: LOAD). */
interface CriMount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  propagation: string;
}

/** ContainerStatusResponse (cri.proto; int64 as strings, defaults filled in: LOAD) with its verbose info. */
interface ContainerStatusResponse {
  status: {
    id: string;
    metadata?: { name: string };
    startedAt: string;
    image?: { image: string };
    imageRef: string;
    labels: Record<string, string>;
    mounts: CriMount[];
    imageId: string;
  };
  info: Record<string, string>;
}

/** PodSandboxStatusResponse (cri.proto, as above) with its verbose info. */
interface PodSandboxStatusResponse {
  status: {
    id: string;
    metadata?: { name: string; uid: string; namespace: string };
    createdAt: string;
    network?: { ip: string };
    linux?: { namespaces?: { options?: { network?: string; pid?: string; ipc?: string } } };
    labels: Record<string, string>;
  };
  info: Record<string, string>;
}

/** A containerd Envelope of Events/Subscribe: its topic and the event, an Any whose value is the encoded message. */
interface Envelope {
  topic: string;
  event?: { value: Buffer };
}

/** containerd's Events service: the one call made. */
type EventsClient = grpc.Client & { subscribe(req: unknown): grpc.ClientReadableStream<Envelope> };

interface ContainerInfo {
  sandboxID?: string;
  config?: { linux?: { security_context?: { privileged?: boolean; namespace_options?: { network?: number; pid?: number; ipc?: number } } } };
}

/** A CRI runtime on `socket`. */
export class CriSource implements MetadataSource {
  readonly name = 'cri';
  private readonly rt: grpc.Client & Record<string, Unary>;
  private readonly events: EventsClient;
  private runtimeType: ContainerRecord['type'] = 'containerd';

  constructor(
    readonly socket: string,
    private readonly opts: CriOptions = { callTimeoutMs: 5000, namespace: 'k8s.io' },
  ) {
    const RuntimeService = serviceOf(loader.loadSync(CRI_PROTO, LOAD), 'runtime.v1.RuntimeService');
    const Events = serviceOf(loader.loadSync(EVENTS_PROTO, LOAD), 'containerd.services.events.v1.Events');
    const target = `unix://${socket}`;
    const insecure = grpc.credentials.createInsecure();
    // the methods of a loaded service are untyped: these are the ones called here
    this.rt = new RuntimeService(target, insecure) as unknown as grpc.Client & Record<string, Unary>;
    // Keepalive pings on the event stream no more often than containerd's gRPC server (grpc-go's
    // default enforcement) permits: one per 5 minutes; more often, its third ping closed the stream
    // (RESOURCE_EXHAUSTED "excess pings", after 40 s with 10 s pings), and every reconnect lost events.
    this.events = new Events(target, insecure, { 'grpc.keepalive_time_ms': KEEPALIVE_MS }) as unknown as EventsClient;
  }

  private call<T>(method: string, req: unknown): Promise<T> {
    return new Promise((resolve, reject) => this.rt[method]!.call(this.rt, req, { deadline: Date.now() + this.opts.callTimeoutMs }, (err, res) => (err ? reject(err) : resolve(res as T))));
  }

  /** Version: also tells containerd from CRI-O (container.type). */
  async version(): Promise<string> {
    const v = await this.call<{ runtimeName: string; runtimeVersion: string }>('Version', { version: 'v1' });
    this.runtimeType = v.runtimeName === 'cri-o' ? 'cri-o' : 'containerd';
    return `${v.runtimeName} ${v.runtimeVersion}`;
  }

  async list(): Promise<ContainerRecord[]> {
    await this.version();
    const res = await this.call<{ containers: Array<{ id: string; state: string }> }>('ListContainers', { filter: {} });
    const out: ContainerRecord[] = [];
    for (const c of res.containers) {
      if (c.state !== 'CONTAINER_RUNNING' && c.state !== 'CONTAINER_CREATED') continue;
      const r = await this.get(c.id);
      if (r) out.push(r);
    }
    return out;
  }

  async get(id: string): Promise<ContainerRecord | undefined> {
    let status: ContainerStatusResponse;
    try {
      status = await this.call('ContainerStatus', { containerId: id, verbose: true });
    } catch (e) {
      if ((e as grpc.ServiceError).code === grpc.status.NOT_FOUND) return this.sandbox(id);
      throw e;
    }
    const s = status.status;
    const info = parseInfo(status.info.info) as ContainerInfo;
    const sec = info.config?.linux?.security_context;
    const sandboxId = info.sandboxID ?? '';
    const pod = sandboxId ? await this.pod(sandboxId) : undefined;
    const image = s.image?.image ?? '';
    const split = splitImage(image);
    const imageRef: string = s.imageRef ?? '';
    const labels = keptLabels(s.labels);
    const mounts: ContainerMount[] = (s.mounts ?? []).map((m) => ({
      source: m.hostPath,
      dest: m.containerPath,
      mode: '',
      rdwr: !m.readonly,
      propagation: PROPAGATION[m.propagation] ?? 'private',
    }));
    return {
      id: shortId(s.id),
      fullId: s.id,
      type: this.runtimeType,
      name: s.metadata?.name ?? '',
      image,
      imageId: (s.imageId || (imageRef.startsWith('sha256:') ? imageRef : '')).replace(/^sha256:/, ''),
      imageRepository: split.repository,
      imageTag: split.tag,
      imageDigest: split.digest || (imageRef.includes('@') ? imageRef.slice(imageRef.indexOf('@') + 1) : ''),
      privileged: sec?.privileged === true,
      mounts,
      ip: pod?.ip ?? '',
      hostPid: isNode(sec?.namespace_options?.pid),
      hostNetwork: isNode(sec?.namespace_options?.network),
      hostIpc: isNode(sec?.namespace_options?.ipc),
      labels,
      startTs: BigInt(s.startedAt || '0'),
      pod,
      sandbox: false,
    };
  }

  /** The pod of a sandbox id; undefined when the runtime has none. */
  private async pod(sandboxId: string): Promise<(PodRecord & { hostNetwork: boolean; hostPid: boolean; hostIpc: boolean; startTs: bigint; image: string }) | undefined> {
    let res: PodSandboxStatusResponse;
    try {
      res = await this.call('PodSandboxStatus', { podSandboxId: sandboxId, verbose: true });
    } catch (e) {
      if ((e as grpc.ServiceError).code === grpc.status.NOT_FOUND) return undefined;
      throw e;
    }
    const s = res.status;
    const ns = s.linux?.namespaces?.options ?? {};
    return {
      name: s.metadata?.name ?? '',
      namespace: s.metadata?.namespace ?? '',
      uid: s.metadata?.uid ?? '',
      sandboxId: shortId(s.id),
      fullSandboxId: s.id,
      labels: keptLabels(s.labels),
      ip: s.network?.ip ?? '',
      hostNetwork: isNode(ns.network),
      hostPid: isNode(ns.pid),
      hostIpc: isNode(ns.ipc),
      startTs: BigInt(s.createdAt || '0'),
      image: (parseInfo(res.info.info) as { image?: string }).image ?? '',
    };
  }

  /** A pod's sandbox (pause) container, which ContainerStatus does not know. */
  private async sandbox(id: string): Promise<ContainerRecord | undefined> {
    const p = await this.pod(id);
    if (!p) return undefined;
    const { hostNetwork, hostPid, hostIpc, startTs, image, ...pod } = p;
    const split = splitImage(image);
    return {
      id: pod.sandboxId,
      fullId: pod.fullSandboxId,
      type: this.runtimeType,
      name: pod.name,
      image,
      imageId: '',
      imageRepository: split.repository,
      imageTag: split.tag,
      imageDigest: split.digest,
      privileged: false,
      mounts: [],
      ip: pod.ip,
      hostPid,
      hostNetwork,
      hostIpc,
      labels: pod.labels,
      startTs,
      pod,
      sandbox: true,
    };
  }

  watch(onEvent: (e: RuntimeEvent) => void, onError: (err: Error) => void): Watch {
    const ns = this.opts.namespace;
    const topics: Array<[string, RuntimeEvent['kind']]> = [
      ['/containers/create', 'create'],
      ['/tasks/start', 'start'],
      ['/containers/delete', 'delete'],
    ];
    const stream = this.events.subscribe({ filters: topics.map(([t]) => `namespace==${JSON.stringify(ns)},topic==${JSON.stringify(t)}`) });
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      onError(err);
    };
    stream.on('data', (env: Envelope) => {
      const kind = topics.find(([t]) => t === env.topic)?.[1];
      const id = env.event ? firstString(env.event.value) : undefined;
      if (kind && id) onEvent({ kind, id });
    });
    stream.on('error', (e: grpc.ServiceError) => {
      if (e.code !== grpc.status.CANCELLED) fail(e);
    });
    stream.on('end', () => fail(new Error('containerd event stream ended')));
    return {
      close: () => {
        done = true;
        stream.cancel();
      },
    };
  }

  close(): void {
    this.rt.close();
    this.events.close();
  }
}

function parseInfo(text: string | undefined): unknown {
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/**
 * Field 1 of a protobuf message as a string, when it is length-delimited: the container id of
 * containerd's ContainerCreate, ContainerDelete and TaskStart payloads (api/events/*.proto).
 */
function firstString(buf: Buffer): string | undefined {
  let at = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (at >= buf.length || shift > 28) return -1;
      const b = buf[at++]!;
      v |= (b & 0x7f) << shift;
      if (!(b & 0x80)) return v >>> 0;
      shift += 7;
    }
  };
  while (at < buf.length) {
    const key = varint();
    if (key < 0) return undefined;
    const wire = key & 7;
    if (wire === 2) {
      const len = varint();
      if (len < 0 || at + len > buf.length) return undefined;
      if (key >>> 3 === 1) return buf.subarray(at, at + len).toString('utf8');
      at += len;
    } else if (wire === 0) {
      if (varint() < 0) return undefined;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else return undefined;
  }
  return undefined;
}
