// A tiny kubelet for tests: turns a rendered pod template (deploy/) into the CRI calls a kubelet
// makes (RunPodSandbox, CreateContainer with the container's args, env, capabilities, read-only
// root, hostPID and mounts) against the private containerd of support/containers. Volumes
// are materialised as a kubelet does: configMap and secret keys as files in a directory (that
// directory is what the test writes to for a volume update), emptyDir as a directory, hostPath
// as the node's path. What this machine cannot or must not do is adapted and reported:
// capabilities outside the node's bounding set are left out (runc cannot grant them; here
// CAP_SYS_RESOURCE), hostPaths given in `hostPathMap` go to a test directory or file instead (the
// node's /var/lib/runtime-audit-engine may belong to another engine; the node's containerd socket
// is the private containerd's), and a hostPath that does not
// exist is not mounted (containerd would create it as a directory on the host). With `apiServer`
// (an API server for the pods, here the Kubernetes API test server) the container gets what a
// kubelet gives every pod, KUBERNETES_SERVICE_HOST and _PORT, and, when the pod (or else its
// service account) automounts the token, the service account volume at
// /var/run/secrets/kubernetes.io/serviceaccount (token, ca.crt, namespace; read-only).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContainerSpec, CriAdmin, Pod } from './containers/index.js';
import { podOf, type K8sObject } from './k8s-objects.js';

export type { K8sObject } from './k8s-objects.js';

/** Capability names (without CAP_) by number, for the bounding-set check. */
const CAP_NUMBERS: Record<string, number> = {
  CHOWN: 0,
  DAC_OVERRIDE: 1,
  DAC_READ_SEARCH: 2,
  FOWNER: 3,
  KILL: 5,
  SETGID: 6,
  SETUID: 7,
  NET_BIND_SERVICE: 10,
  NET_ADMIN: 12,
  NET_RAW: 13,
  IPC_LOCK: 14,
  SYS_MODULE: 16,
  SYS_CHROOT: 18,
  SYS_PTRACE: 19,
  SYS_ADMIN: 21,
  SYS_RESOURCE: 24,
  SYSLOG: 34,
  PERFMON: 38,
  BPF: 39,
  CHECKPOINT_RESTORE: 40,
};

/** The capabilities of this process's bounding set that `names` lacks. */
function outsideBoundingSet(names: readonly string[]): string[] {
  const bnd = BigInt(`0x${readFileSync('/proc/self/status', 'utf8').match(/^CapBnd:\s+([0-9a-f]+)/m)![1]}`);
  return names.filter((n) => CAP_NUMBERS[n] !== undefined && ((bnd >> BigInt(CAP_NUMBERS[n]!)) & 1n) === 0n);
}

export interface KubeletOptions {
  /** Where volumes are materialised. */
  dir: string;
  /** The node's name (spec.nodeName for fieldRef env). */
  nodeName: string;
  /** hostPath -> directory (made when missing) or existing file used instead. */
  hostPathMap?: Record<string, string>;
  /** Extra args appended to the container's (environment adaptations the test names). */
  extraArgs?: string[];
  /** Capabilities to drop from the template's add list (a test of a missing capability). */
  withoutCapabilities?: string[];
  /** The API server of this cluster (without it the pods get no service account and no API address). */
  apiServer?: { host: string; port: number; token: string; caPem: string };
}

/** Where a kubelet mounts the service account's token, CA and namespace. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A pod started from a template. */
export interface StartedPod {
  pod: Pod;
  containerId: string;
  /** Volume name -> the host directory or file mounted. */
  volumes: Map<string, string>;
  /** Capabilities of the template not granted (outside the node's bounding set). */
  notGranted: string[];
  /** The container's CRI log file. */
  logFile: string;
}

/** Runs the first container of workload `w` (DaemonSet, Deployment, Job or Pod) as a kubelet would. */
export async function runFromTemplate(cri: CriAdmin, logDir: string, w: K8sObject, objects: readonly K8sObject[], opts: KubeletOptions): Promise<StartedPod> {
  const { labels, spec } = podOf(w);
  const namespace = w.metadata.namespace ?? 'default';
  const c = spec.containers[0]!;
  const volumes = new Map<string, string>();
  const find = (kind: string, name: string | undefined) => {
    const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
    if (!o) throw new Error(`kubelet: ${kind}/${name} is not among the objects`);
    return o;
  };
  for (const v of spec.volumes ?? []) {
    const target = join(opts.dir, 'volumes', v.name);
    const keys = v.configMap ?? v.secret;
    if (keys) {
      const o = v.configMap ? find('ConfigMap', v.configMap.name) : find('Secret', v.secret?.secretName);
      const data: Record<string, Buffer> = {};
      for (const [k, val] of Object.entries(o.data ?? {})) data[k] = v.configMap ? Buffer.from(val) : Buffer.from(val.replace(/\n/g, ''), 'base64');
      for (const [k, val] of Object.entries(o.stringData ?? {})) data[k] = Buffer.from(val);
      const items = keys.items ?? Object.keys(data).map((key) => ({ key, path: key }));
      mkdirSync(target, { recursive: true });
      for (const it of items) writeFileSync(join(target, it.path), data[it.key]!, { mode: v.secret ? 0o400 : 0o644 });
      volumes.set(v.name, target);
    } else if (v.emptyDir) {
      mkdirSync(target, { recursive: true });
      volumes.set(v.name, target);
    } else if (v.hostPath) {
      const mapped = opts.hostPathMap?.[v.hostPath.path];
      if (mapped) {
        if (!existsSync(mapped)) mkdirSync(mapped, { recursive: true });
        volumes.set(v.name, mapped);
      } else if (existsSync(v.hostPath.path)) volumes.set(v.name, v.hostPath.path);
    } else throw new Error(`kubelet: volume ${v.name}: unsupported kind`);
  }
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'spec.nodeName') env[e.name] = opts.nodeName;
    else if (e.valueFrom?.secretKeyRef) {
      const { name, key } = e.valueFrom.secretKeyRef;
      const s = find('Secret', name);
      const encoded = s.data?.[key];
      const value = s.stringData?.[key] ?? (encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString());
      if (value === undefined) throw new Error(`kubelet: env ${e.name}: no key ${key} in Secret ${name}`);
      env[e.name] = value;
    } else throw new Error(`kubelet: env ${e.name}: unsupported source`);
  }
  const mounts = (c.volumeMounts ?? []).filter((m) => volumes.has(m.name)).map((m) => ({ containerPath: m.mountPath, hostPath: volumes.get(m.name)!, readonly: m.readOnly === true }));
  if (opts.apiServer) {
    env.KUBERNETES_SERVICE_HOST = opts.apiServer.host;
    env.KUBERNETES_SERVICE_PORT = String(opts.apiServer.port);
    const account = spec.serviceAccountName ?? 'default';
    const sa = objects.find((x) => x.kind === 'ServiceAccount' && x.metadata.name === account) as { automountServiceAccountToken?: boolean } | undefined;
    if (spec.automountServiceAccountToken ?? sa?.automountServiceAccountToken ?? true) {
      const dir = join(opts.dir, 'volumes', 'kube-api-access');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'token'), opts.apiServer.token, { mode: 0o644 }); // a kubelet's default mode (420)
      writeFileSync(join(dir, 'ca.crt'), opts.apiServer.caPem, { mode: 0o644 });
      writeFileSync(join(dir, 'namespace'), namespace, { mode: 0o644 });
      volumes.set('kube-api-access', dir);
      mounts.push({ containerPath: SERVICE_ACCOUNT_DIR, hostPath: dir, readonly: true });
    }
  }
  if (!c.image) throw new Error(`kubelet: container ${c.name} has no image`);
  const sc = c.securityContext ?? {};
  const wanted = (sc.capabilities?.add ?? []).filter((n) => !(opts.withoutCapabilities ?? []).includes(n));
  const notGranted = outsideBoundingSet(wanted);
  const pod = await cri.runPod({ name: `${w.metadata.name}-test`, namespace, labels, privileged: sc.privileged === true });
  const container: ContainerSpec = {
    name: c.name,
    image: c.image,
    args: [...(c.args ?? []), ...(opts.extraArgs ?? [])],
    env,
    privileged: sc.privileged === true,
    pid: spec.hostPID ? 'NODE' : 'CONTAINER',
    capabilities: { add: wanted.filter((n) => !notGranted.includes(n)), drop: sc.capabilities?.drop ?? [] },
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    mounts,
    labels: { app: labels.app ?? w.metadata.name },
  };
  if (c.command) container.command = c.command;
  const containerId = await cri.runContainer(pod, container);
  const podConfig = pod.config as { logDirectory: string };
  return { pod, containerId, volumes, notGranted, logFile: join(podConfig.logDirectory ?? logDir, c.name, '0.log') };
}
