// The kubelet side of CRI for tests: run pod sandboxes, create/start containers in them, exec,
// and remove everything, over gRPC on the runtime's socket (cri-admin.proto).
import grpc from '@grpc/grpc-js';
import loader from '@grpc/proto-loader';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const PROTO = fileURLToPath(new URL('./cri-admin.proto', import.meta.url));
/** Bound on one CRI call (StartContainer took up to 1.9 s at load 18; far more margin here). */
const CALL_MS = 120_000;

/** A pod as kubelet describes it. Pods share the node's network (no CNI here). */
export interface PodSpec {
  name: string;
  namespace: string;
  uid?: string;
  labels?: Record<string, string>;
  /** Default true: a privileged container needs a privileged sandbox. */
  privileged?: boolean;
  /** kubelet-style parent `/kubepods/besteffort/pod<uid>` unless given; '' for none (`/k8s.io/<id>`). */
  cgroupParent?: string;
}

/** A running pod sandbox. */
export interface Pod {
  id: string;
  uid: string;
  /** The PodSandboxConfig sent, passed again to CreateContainer as kubelet does. */
  config: Record<string, unknown>;
  /** The cgroup parent used ('' for none). */
  cgroupParent: string;
}

/** A container in a pod. */
export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  mounts?: Array<{ containerPath: string; hostPath: string; readonly?: boolean; propagation?: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL' }>;
  labels?: Record<string, string>;
  privileged?: boolean;
  /** PID namespace: CONTAINER (kubelet's default for v1 pods) or NODE (hostPID). */
  pid?: 'CONTAINER' | 'NODE' | 'POD';
}

/** Result of ExecSync. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

type Call = (req: unknown, opts: { deadline: number }, cb: (err: grpc.ServiceError | null, res: any) => void) => void;

/** A CRI client with the calls a test needs. */
export class CriAdmin {
  private readonly client: grpc.Client & Record<string, Call>;

  constructor(
    socket: string,
    private readonly logDir: string,
  ) {
    const def = loader.loadSync(PROTO, { longs: String, enums: String, defaults: true, oneofs: true });
    const v1 = (grpc.loadPackageDefinition(def) as any).runtime.v1;
    this.client = new v1.RuntimeService(`unix://${socket}`, grpc.credentials.createInsecure());
  }

  private call<T>(method: string, req: unknown): Promise<T> {
    return new Promise((resolve, reject) => this.client[method]!.call(this.client, req, { deadline: Date.now() + CALL_MS }, (err, res) => (err ? reject(new Error(`CRI ${method}: ${err.message}`)) : resolve(res as T))));
  }

  /** RunPodSandbox with host networking, kubelet's labels and cgroup parent. */
  async runPod(spec: PodSpec): Promise<Pod> {
    const uid = spec.uid ?? randomUUID();
    const cgroupParent = spec.cgroupParent ?? `/kubepods/besteffort/pod${uid}`;
    const config = {
      metadata: { name: spec.name, uid, namespace: spec.namespace, attempt: 0 },
      logDirectory: `${this.logDir}/${spec.namespace}_${spec.name}_${uid}`,
      labels: { ...spec.labels, 'io.kubernetes.pod.name': spec.name, 'io.kubernetes.pod.namespace': spec.namespace, 'io.kubernetes.pod.uid': uid },
      annotations: { 'kubernetes.io/config.source': 'api' },
      linux: {
        cgroupParent,
        securityContext: { privileged: spec.privileged ?? true, namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } },
      },
    };
    const res = await this.call<{ podSandboxId: string }>('RunPodSandbox', { config });
    return { id: res.podSandboxId, uid, config, cgroupParent };
  }

  /** CreateContainer in `pod`; returns the container id. */
  async createContainer(pod: Pod, spec: ContainerSpec): Promise<string> {
    const meta = pod.config.metadata as { name: string; namespace: string; uid: string };
    const config = {
      metadata: { name: spec.name, attempt: 0 },
      image: { image: spec.image },
      command: spec.command ?? [],
      args: spec.args ?? [],
      mounts: (spec.mounts ?? []).map((m) => ({ readonly: false, propagation: 'PROPAGATION_PRIVATE', ...m })),
      labels: {
        ...spec.labels,
        'io.kubernetes.container.name': spec.name,
        'io.kubernetes.pod.name': meta.name,
        'io.kubernetes.pod.namespace': meta.namespace,
        'io.kubernetes.pod.uid': meta.uid,
      },
      logPath: `${spec.name}/0.log`,
      linux: { securityContext: { privileged: spec.privileged ?? false, namespaceOptions: { network: 'NODE', pid: spec.pid ?? 'CONTAINER', ipc: 'POD' } } },
    };
    const res = await this.call<{ containerId: string }>('CreateContainer', { podSandboxId: pod.id, config, sandboxConfig: pod.config });
    return res.containerId;
  }

  async startContainer(id: string): Promise<void> {
    await this.call('StartContainer', { containerId: id });
  }

  /** CreateContainer + StartContainer. */
  async runContainer(pod: Pod, spec: ContainerSpec): Promise<string> {
    const id = await this.createContainer(pod, spec);
    await this.startContainer(id);
    return id;
  }

  async execSync(id: string, cmd: string[], timeoutS = 60): Promise<ExecResult> {
    const res = await this.call<{ stdout: Buffer; stderr: Buffer; exitCode: number }>('ExecSync', { containerId: id, cmd, timeout: timeoutS });
    return { stdout: Buffer.from(res.stdout).toString('utf8'), stderr: Buffer.from(res.stderr).toString('utf8'), exitCode: res.exitCode };
  }

  async removeContainer(id: string): Promise<void> {
    await this.call('StopContainer', { containerId: id, timeout: 0 });
    await this.call('RemoveContainer', { containerId: id });
  }

  /** StopPodSandbox + RemovePodSandbox (its containers go with it). */
  async removePod(id: string): Promise<void> {
    await this.call('StopPodSandbox', { podSandboxId: id });
    await this.call('RemovePodSandbox', { podSandboxId: id });
  }

  /** Every pod sandbox's id. */
  async podIds(): Promise<string[]> {
    const res = await this.call<{ items: Array<{ id: string }> }>('ListPodSandbox', {});
    return res.items.map((p) => p.id);
  }

  /** Removes every pod sandbox. */
  async removeAllPods(): Promise<void> {
    for (const id of await this.podIds()) await this.removePod(id);
  }

  close(): void {
    this.client.close();
  }
}
