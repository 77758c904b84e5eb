// The kubelet side of CRI for tests: run pod sandboxes, create/start containers in them, exec,
// and remove everything, over gRPC on the runtime's socket (cri-admin.proto). Removal retries and
// then escalates through the owner's Teardown (the runtime's own tools), so that a stop failing
// on a loaded node ("ttrpc: closed" when a shim goes away mid-stop) neither leaks the pod nor
// fails the test that asked for it with an error of the runtime's.
import grpc from '@grpc/grpc-js';
import loader from '@grpc/proto-loader';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'undici';
import { serviceOf } from '../../host/sources/container/cri.js';

const PROTO = fileURLToPath(new URL('./cri-admin.proto', import.meta.url));
/** Bound on one CRI call (StartContainer took up to 1.9 s at load 18; far more margin here). */
const CALL_MS = 120_000;
/** Rounds of StopPodSandbox + RemovePodSandbox in removePod; Teardown.force runs before the third and fourth. */
const REMOVE_ROUNDS = 4;
/** How long removePod waits for what is left of a removed pod (processes being reaped) to go. */
const LEFTOVER_MS = 15_000;

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
  env?: Record<string, string>;
  /** Capability names as a pod spec writes them (BPF, not CAP_BPF); drop may be ['ALL']. */
  capabilities?: { add?: string[]; drop?: string[] };
  readonlyRootfs?: boolean;
}

/** What a terminal session printed (the pty's output: stdout and stderr merged) and its status. */
export interface TtyResult {
  output: string;
  /** The v4.channel.k8s.io status (channel 3): `{status: 'Success'}` or a failure with its exit code. */
  status: { status?: string; message?: string };
}

/** Result of ExecSync. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * What only the runtime's owner can do for removePod (it knows the runtime's tools, its dir and
 * the host): `force` kills the tasks and the shim of a pod the CRI could not stop, `leftovers`
 * lists what of a removed pod remains on the host (processes, mounts), `[]` when nothing.
 */
export interface Teardown {
  force(podId: string, containerIds: string[]): Promise<void>;
  leftovers(podId: string, containerIds: string[]): string[];
}

/** A CRI call's failure: `code` is the gRPC status (grpc.status). */
class CriError extends Error {
  constructor(
    readonly method: string,
    readonly code: grpc.status,
    message: string,
  ) {
    super(`CRI ${method}: ${message}`);
  }
}

type Call = (req: unknown, opts: { deadline: number }, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

/** A CRI client with the calls a test needs. */
export class CriAdmin {
  private readonly client: grpc.Client & Record<string, Call>;
  /** Containers created per pod sandbox id, for removePod's force and check. */
  private readonly containersOf = new Map<string, string[]>();

  constructor(
    socket: string,
    private readonly logDir: string,
    private readonly teardown?: Teardown,
  ) {
    const def = loader.loadSync(PROTO, { longs: String, enums: String, defaults: true, oneofs: true });
    const RuntimeService = serviceOf(def, 'runtime.v1.RuntimeService');
    // the methods of a loaded service are untyped: the unary ones called here
    this.client = new RuntimeService(`unix://${socket}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & Record<string, Call>;
  }

  private call<T>(method: string, req: unknown): Promise<T> {
    return new Promise((resolve, reject) => this.client[method]!.call(this.client, req, { deadline: Date.now() + CALL_MS }, (err, res) => (err ? reject(new CriError(method, err.code, err.message)) : resolve(res as T))));
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
      envs: Object.entries(spec.env ?? {}).map(([key, value]) => ({ key, value })),
      mounts: (spec.mounts ?? []).map((m) => ({ readonly: false, propagation: 'PROPAGATION_PRIVATE', ...m })),
      labels: {
        ...spec.labels,
        'io.kubernetes.container.name': spec.name,
        'io.kubernetes.pod.name': meta.name,
        'io.kubernetes.pod.namespace': meta.namespace,
        'io.kubernetes.pod.uid': meta.uid,
      },
      logPath: `${spec.name}/0.log`,
      linux: {
        securityContext: {
          privileged: spec.privileged ?? false,
          namespaceOptions: { network: 'NODE', pid: spec.pid ?? 'CONTAINER', ipc: 'POD' },
          capabilities: { addCapabilities: spec.capabilities?.add ?? [], dropCapabilities: spec.capabilities?.drop ?? [] },
          readonlyRootfs: spec.readonlyRootfs ?? false,
        },
      },
    };
    const res = await this.call<{ containerId: string }>('CreateContainer', { podSandboxId: pod.id, config, sandboxConfig: pod.config });
    this.containersOf.set(pod.id, [...(this.containersOf.get(pod.id) ?? []), res.containerId]);
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

  /**
   * `kubectl exec -it`: CRI Exec with a tty and stdin, then the runtime's streaming server over a
   * WebSocket (v4.channel.k8s.io: one byte of channel, 0 stdin, 1 stdout, 3 status), `input`
   * typed into the terminal. Resolves when the session ends (the shell exits).
   */
  async execTty(id: string, cmd: string[], input: string, timeoutMs = CALL_MS): Promise<TtyResult> {
    const { url } = await this.call<{ url: string }>('Exec', { containerId: id, cmd, tty: true, stdin: true, stdout: true, stderr: false });
    const ws = new WebSocket(url.replace(/^http/, 'ws'), ['v4.channel.k8s.io']);
    ws.binaryType = 'arraybuffer';
    const out: Buffer[] = [];
    let status: TtyResult['status'] = {};
    return await new Promise<TtyResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        ws.close();
        reject(new Error(`exec -it ${cmd.join(' ')}: no end in ${timeoutMs} ms; output so far: ${Buffer.concat(out).toString('utf8')}`));
      }, timeoutMs);
      ws.addEventListener('open', () => ws.send(Buffer.concat([Buffer.from([0]), Buffer.from(input)])));
      ws.addEventListener('message', (e) => {
        const b = Buffer.from(e.data as ArrayBuffer);
        if (b[0] === 1 || b[0] === 2) out.push(b.subarray(1));
        if (b[0] === 3 && b.length > 1) status = JSON.parse(b.subarray(1).toString('utf8'));
      });
      ws.addEventListener('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`exec -it ${cmd.join(' ')}: ${(e as { message?: string }).message ?? 'WebSocket error'}`));
      });
      ws.addEventListener('close', () => {
        clearTimeout(timer);
        resolve({ output: Buffer.concat(out).toString('utf8'), status });
      });
    });
  }

  async removeContainer(id: string): Promise<void> {
    await this.call('StopContainer', { containerId: id, timeout: 0 });
    await this.call('RemoveContainer', { containerId: id });
  }

  /**
   * Removes pod sandbox `id` with its containers and checks that nothing of it is left: rounds of
   * StopPodSandbox + RemovePodSandbox until ListPodSandbox no longer has it (the first retry
   * plain, later ones after the Teardown's `force`: kill its tasks and shim); then the Teardown's
   * `leftovers` must be empty (forced once more and waited for if not). A pod the runtime does not
   * know counts as removed. Throws, naming every error met and what remains, only when something
   * does; errors that retries overcame are written to stderr.
   */
  async removePod(id: string): Promise<void> {
    const containers = this.containersOf.get(id) ?? [];
    const errors: string[] = [];
    const noted = (e: unknown) => errors.push(e instanceof Error ? e.message : String(e));
    const force = () => this.teardown?.force(id, containers).catch((e: unknown) => noted(new Error(`force: ${e instanceof Error ? e.message : String(e)}`)));
    let listed = true;
    for (let round = 0; round < REMOVE_ROUNDS && listed; round++) {
      if (round > 0) await new Promise((r) => setTimeout(r, 500 * round));
      if (round > 1) await force();
      for (const method of ['StopPodSandbox', 'RemovePodSandbox'])
        await this.call(method, { podSandboxId: id }).catch((e: unknown) => {
          if (!(e instanceof CriError && e.code === grpc.status.NOT_FOUND)) noted(e);
        });
      listed = await this.podIds().then(
        (ids) => ids.includes(id),
        (e: unknown) => (noted(e), true),
      );
    }
    // a killed process stays listed until it is reaped: forced once, then given LEFTOVER_MS
    let left = this.teardown?.leftovers(id, containers) ?? [];
    const deadline = Date.now() + LEFTOVER_MS;
    for (let forced = false; left.length && Date.now() < deadline; left = this.teardown!.leftovers(id, containers)) {
      if (!forced) await force();
      forced = true;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (listed) left.unshift('the sandbox (ListPodSandbox still lists it)');
    if (left.length) throw new Error(`pod sandbox ${id} not removed after ${REMOVE_ROUNDS} rounds; left: ${left.join('; ')}; errors: ${errors.join('; ') || 'none'}`);
    this.containersOf.delete(id);
    if (errors.length) process.stderr.write(`cri: pod sandbox ${id} removed after retries (${errors.join('; ')})\n`);
  }

  /** Every pod sandbox's id. */
  async podIds(): Promise<string[]> {
    const res = await this.call<{ items: Array<{ id: string }> }>('ListPodSandbox', {});
    return res.items.map((p) => p.id);
  }

  /** Removes every pod sandbox (each tried, see removePod); throws with the failures after the last. */
  async removeAllPods(): Promise<void> {
    const failed: string[] = [];
    for (const id of await this.podIds()) await this.removePod(id).catch((e: unknown) => failed.push(e instanceof Error ? e.message : String(e)));
    if (failed.length) throw new Error(failed.join('\n'));
  }

  close(): void {
    this.client.close();
  }
}
