// The engine as deploy/ runs it, on this machine: the image built offline (support/image.ts),
// imported into a private containerd with CRI (support/containers), the site overlay written by
// deploy/configure.sh and rendered by kubectl, and the DaemonSet's pod template started by the
// tiny kubelet (support/kubelet.ts); the event generator's Pod from site/event-generator the
// same way. Used by test/deploy/pod.test.ts and bench footprint.
// The pods share the node's network (no CNI, no cluster DNS here), so each engine gets free
// loopback ports through `-o` options appended to the template's args, and the generator's
// `--webhook-url` (the webhook Service's name) is overridden by one more naming the engine's
// loopback port (the webhook certificate names 127.0.0.1); everything else is the templates'.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { buildImages, startContainerd, type PrivateContainerd } from './containers/index.js';
import { freePort } from './real-servers.js';
import { stopOnSignal } from './cleanup.js';
import { buildTestImage, type TestImage } from './image.js';
import { runFromTemplate, type K8sObject, type KubeletOptions, type StartedPod } from './kubelet.js';

const DEPLOY = join(import.meta.dirname, '..', 'deploy');

/** A pod started from a template, with its container's log. */
interface LoggedPod extends StartedPod {
  /** The container log's lines (CRI format: time stream tag message), message parts only. */
  log(): string[];
}

/** An engine pod with the ports it was given. */
export interface EnginePod extends LoggedPod {
  forwarderPort: number;
  webhookPort: number;
  /** performance.now() when the container had started. */
  startedAt: number;
  /** Seconds from StartContainer to /healthz answering 200 (undefined while not ready). */
  readySeconds?: number;
}

/** The cluster: containerd with the engine image, the rendered site overlay. */
export interface Cluster {
  image: TestImage;
  containerd: PrivateContainerd;
  objects: K8sObject[];
  dir: string;
  /** Starts the DaemonSet's pod; `withoutCapabilities` drops some of its capabilities; `apiServer` is the cluster's API for its service account. */
  startEngine(opts?: { withoutCapabilities?: string[]; name?: string; apiServer?: KubeletOptions['apiServer'] }): Promise<EnginePod>;
  /** Starts deploy/'s event generator Pod (rendered from site/event-generator), its audit events going to `engine`'s webhook. */
  startGenerator(engine: EnginePod): Promise<LoggedPod>;
  /** Waits for /healthz to answer 200; returns the seconds since the start of the pod. */
  waitReady(pod: EnginePod, deadlineMs?: number): Promise<number>;
  /** Stops everything (once); resolves with what the containerd left behind (PrivateContainerd.stop), `[]` when nothing. */
  close(): Promise<string[]>;
}

/** Builds the image and starts containerd with it; throws when something cannot be set up. */
export async function startCluster(): Promise<Cluster> {
  const image = buildTestImage();
  const dir = mkdtempSync(join(tmpdir(), 'rae-engine-pod-'));
  let containerd: PrivateContainerd | undefined;
  let closed: Promise<string[]> | undefined;
  const close = () =>
    (closed ??= (async () => {
      unregister();
      const left = (await containerd?.stop()) ?? [];
      image.close();
      rmSync(dir, { recursive: true, force: true });
      return left;
    })());
  const unregister = stopOnSignal(async () => void (await close()));
  try {
    // the run's shared archive when there is one, else a save of the built image
    const archive = image.archive ?? join(dir, 'engine.tar');
    if (!image.archive) {
      const saved = image.podman(['save', '--format', 'docker-archive', '-o', archive, image.tag]);
      if (saved.code !== 0) throw new Error(`podman save: ${saved.stderr}`);
    }
    containerd = await startContainerd(buildImages(join(dir, 'images')));
    await containerd.importImage(archive);
    const conf = spawnSync('bash', [join(DEPLOY, 'configure.sh'), image.tag, '--out', join(dir, 'site')], { encoding: 'utf8' });
    if (conf.status !== 0) throw new Error(`configure.sh: ${conf.stderr}`);
    const objects = render(join(dir, 'site'));
    const ds = objects.find((o) => o.kind === 'DaemonSet' && o.metadata.name === 'runtime-audit-engine')!;
    const generator = render(join(dir, 'site', 'event-generator')).find((o) => o.kind === 'Pod')!;
    const cd = containerd;
    let n = 0;
    return {
      image,
      containerd: cd,
      objects,
      dir,
      async startEngine(opts = {}) {
        const forwarderPort = await freePort();
        const webhookPort = await freePort();
        const started = await runFromTemplate(cd.cri, join(cd.dir, 'logs'), { ...ds, metadata: { ...ds.metadata, name: opts.name ?? `engine-${n++}` } }, objects, {
          dir: join(dir, `pod-${n}`),
          nodeName: hostname(),
          // the node's state directory may belong to an engine outside this test; the pods' runtime is the private containerd
          hostPathMap: { '/var/lib/runtime-audit-engine': join(dir, 'state'), '/run/containerd/containerd.sock': cd.socket },
          extraArgs: ['-o', 'forwarder.address=127.0.0.1', '-o', `forwarder.port=${forwarderPort}`, '-o', 'webhook.address=127.0.0.1', '-o', `webhook.port=${webhookPort}`],
          withoutCapabilities: opts.withoutCapabilities,
          apiServer: opts.apiServer,
        });
        return { ...started, startedAt: performance.now(), forwarderPort, webhookPort, log: () => containerLog(started.logFile) };
      },
      async startGenerator(engine) {
        const started = await runFromTemplate(cd.cri, join(cd.dir, 'logs'), generator, objects, {
          dir: join(dir, 'event-generator'),
          nodeName: hostname(),
          extraArgs: ['--webhook-url', `https://127.0.0.1:${engine.webhookPort}/orchestrator-audit`],
        });
        return { ...started, log: () => containerLog(started.logFile) };
      },
      async waitReady(pod, deadlineMs = 600_000) {
        const deadline = Date.now() + deadlineMs;
        for (;;) {
          const ok = await fetch(`http://127.0.0.1:${pod.forwarderPort}/healthz`).then(
            (r) => r.status === 200,
            () => false,
          );
          if (ok) return (pod.readySeconds = (performance.now() - pod.startedAt) / 1000);
          if (Date.now() > deadline) throw new Error(`the engine pod was not ready within ${deadlineMs / 1000} s:\n${pod.log().slice(-30).join('\n')}`);
          await new Promise((r) => setTimeout(r, 250));
        }
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The objects `kubectl kustomize DIR` renders. */
function render(kustomization: string): K8sObject[] {
  const rendered = spawnSync('kubectl', ['kustomize', kustomization], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (rendered.status !== 0) throw new Error(`kubectl kustomize ${kustomization}: ${rendered.stderr}`);
  return parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as K8sObject)
    .filter(Boolean);
}

/** The message parts of a CRI container log (lines `time stream tag message`); none before the file exists. */
function containerLog(file: string): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ').slice(3).join(' '));
}

/** VmRSS (MB) of the engine process in a pod: the node process whose command line runs bin/rae.js with the pod's forwarder port. */
export function engineRssMb(pod: EnginePod): number {
  const r = spawnSync('pgrep', ['-f', `rae.js run .*forwarder.port=${pod.forwarderPort}`], { encoding: 'utf8' });
  const pid = r.stdout.trim().split('\n')[0];
  if (!pid) throw new Error('the engine process of the pod was not found');
  const kb = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)?.[1];
  return Number(kb) / 1024;
}
