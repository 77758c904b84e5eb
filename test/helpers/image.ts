// The engine image for tests and the bench: scripts/build-image.sh --base-from-host into a private
// podman store (a temporary directory, removed by close()), and podman commands against that
// store with the flags this machine kind needs (runc, cgroupfs, ulimits at the host's hard
// limits, no network). Consumes nothing but the checkout; produces a built image and a runner.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopOnSignal } from './cleanup.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Why the image cannot be built here, or undefined when it can (root, podman, runc, busybox-static). */
export function imageToolsMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'building the image needs root (podman with a private store)';
  const missing = ['/usr/bin/podman', '/usr/sbin/runc', '/bin/busybox'].filter((p) => !existsSync(p));
  return missing.length > 0 ? `missing ${missing.join(', ')} (scripts/setup.sh --for test installs podman, runc and busybox-static as root)` : undefined;
}

/** Output of one command. */
interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A built image in a private store. */
export interface TestImage {
  tag: string;
  /** The store's directory (podman --root/--runroot below it). */
  dir: string;
  /** Seconds the build took. */
  buildSeconds: number;
  /** `podman ARGS` against the private store. */
  podman(args: string[], input?: string): Ran;
  /** `podman run --rm` with this machine's flags; `opts` go before the image. */
  run(args: string[], opts?: string[], input?: string): Ran;
  /** The image's size in bytes, as podman reports it. */
  size(): number;
  /** Removes every image and the store. */
  close(): void;
}

function ran(r: ReturnType<typeof spawnSync>): Ran {
  return { code: r.status, stdout: String(r.stdout ?? ''), stderr: `${r.stderr ?? ''}${r.error ? `\n${r.error.message}` : ''}` };
}

/** Builds the image (tag localhost/rae-test:<pid>); throws with the build's output when it fails. */
export function buildTestImage(extraArgs: string[] = []): TestImage {
  const dir = mkdtempSync(join(tmpdir(), 'rae-image-test-'));
  const tag = `localhost/rae-test:${process.pid}`;
  const flags = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs', '--events-backend', 'file', '--root', join(dir, 'root'), '--runroot', join(dir, 'run')];
  // Bounds against a hang only, far past what a loaded machine needs: under a CPU hog beside the
  // suite (load 25-35) the build took 640-840 s, and 840 s killed one that was tagging its image.
  const podman = (args: string[], input?: string): Ran => ran(spawnSync('podman', [...flags, ...args], { encoding: 'utf8', input, maxBuffer: 64 << 20, timeout: 1_800_000 }));
  const close = (): void => {
    unregister();
    podman(['rmi', '--all', '--force']);
    rmSync(dir, { recursive: true, force: true });
  };
  const unregister = stopOnSignal(close);
  const t0 = performance.now();
  const b = ran(spawnSync('bash', ['scripts/build-image.sh', '--base-from-host', '--podman-root', dir, '--tag', tag, ...extraArgs], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 2_700_000 }));
  const buildSeconds = (performance.now() - t0) / 1000;
  if (b.code !== 0 || b.stdout.trim() !== tag) {
    close();
    throw new Error(`build-image.sh failed (exit ${b.code}, stdout ${JSON.stringify(b.stdout)})\n${b.stderr}`);
  }
  const limits = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
  const runFlags = ['--ulimit', `nofile=${limits}:${limits}`, '--ulimit', 'nproc=32768:32768', '--network', 'none'];
  return {
    tag,
    dir,
    buildSeconds,
    podman,
    run: (args, opts = [], input) => podman(['run', '--rm', ...(input === undefined ? [] : ['-i']), ...runFlags, ...opts, tag, ...args], input),
    size: () => Number(podman(['image', 'inspect', tag, '--format', '{{.Size}}']).stdout.trim()),
    close,
  };
}
