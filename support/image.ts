// The engine image for tests and the bench: scripts/build-image.sh --base-from-host into a private
// podman store (a temporary directory, removed by close()), and podman commands against that
// store with the flags this machine kind needs (runc, cgroupfs, ulimits at the host's hard
// limits, no network). Consumes nothing but the checkout; produces a built image and a runner.
// Under the test runner (RAE_TEST_SHARED, scripts/run-tests.mjs) one build serves the whole run:
// the first file builds and saves the image to an archive named by the hash of the build's
// inputs, the others load that archive into their own store (deploy/image and deploy/pod built
// the same image, 60-90 s each).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopOnSignal } from './cleanup.js';

const ROOT = join(import.meta.dirname, '..');

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
  /** Seconds the build took (or the load, when `loaded`). */
  buildSeconds: number;
  /** Whether the image was loaded from the run's shared archive (another file had built it). */
  loaded: boolean;
  /** A docker-archive of the image when the run shares one (importable by `ctr images import`), else undefined. */
  archive?: string;
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

/** `s` quoted for sh. */
const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * The hash of what build-image.sh puts in the image: the checkout's files as its context takes
 * them (tracked and untracked, not ignored), node_modules as installed (npm's hidden lockfile),
 * the built probe, and the build's extra arguments. The machine's node and busybox, which make
 * the bases, do not change during a run.
 */
function inputsKey(extraArgs: string[]): string {
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (listed.status !== 0) throw new Error(`git ls-files in ${ROOT}: ${listed.stderr}`);
  const files = listed.stdout
    .split('\0')
    .filter((f) => f && !/^(node_modules|probes\/build)(\/|$)/.test(f) && existsSync(join(ROOT, f)) && lstatSync(join(ROOT, f)).isFile())
    .sort();
  const hashed = spawnSync('git', ['hash-object', '--stdin-paths'], { cwd: ROOT, encoding: 'utf8', input: `${files.join('\n')}\n`, maxBuffer: 64 << 20 });
  if (hashed.status !== 0) throw new Error(`git hash-object in ${ROOT}: ${hashed.stderr}`);
  const h = createHash('sha256').update(JSON.stringify({ files, objects: hashed.stdout, extraArgs }));
  for (const f of ['node_modules/.package-lock.json', 'probes/build/Release/rae_probe.node', 'probes/build/Release/rae_watchdog.node']) h.update(existsSync(join(ROOT, f)) ? readFileSync(join(ROOT, f)) : `no ${f}`);
  return h.digest('hex').slice(0, 16);
}

/**
 * Builds the image (tag localhost/rae-test:<pid>, or :<inputs' hash> when shared), or loads it
 * from this run's shared archive; throws with the build's output when it fails.
 */
export function buildTestImage(extraArgs: string[] = []): TestImage {
  const shared = process.env.RAE_TEST_SHARED && existsSync(process.env.RAE_TEST_SHARED) ? process.env.RAE_TEST_SHARED : undefined;
  const key = shared ? inputsKey(extraArgs) : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'rae-image-test-'));
  const tag = `localhost/rae-test:${key ?? process.pid}`;
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
  const build = ['bash', 'scripts/build-image.sh', '--base-from-host', '--podman-root', dir, '--tag', tag, ...extraArgs];
  const archive = shared ? join(shared, `engine-image-${key}.tar`) : undefined;
  let b: Ran;
  let what = 'build-image.sh';
  let loaded = false;
  if (archive) {
    // Build and save under an exclusive flock(1), unless the archive is there (another file built
    // it): files running side by side wait for one build; the kernel drops the lock of a holder
    // that dies, and an archive appears only complete (renamed into place).
    const save = ['podman', ...flags, 'save', '--format', 'docker-archive', '-o', `${archive}.part`, tag];
    const script = `[ -f ${q(archive)} ] && exit 0; ${build.map(q).join(' ')} && ${save.map(q).join(' ')} >&2 && mv ${q(`${archive}.part`)} ${q(archive)}`;
    b = ran(spawnSync('flock', ['-x', `${archive}.lock`, 'sh', '-c', script], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 2_700_000 }));
    if (b.code === 0 && b.stdout.trim() === '') {
      what = `podman load -i ${archive}`;
      loaded = true;
      const l = podman(['load', '-i', archive]);
      b = { ...l, stdout: l.code === 0 ? tag : l.stdout };
    }
  } else b = ran(spawnSync(build[0]!, build.slice(1), { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 2_700_000 }));
  const buildSeconds = (performance.now() - t0) / 1000;
  if (b.code !== 0 || b.stdout.trim() !== tag) {
    close();
    throw new Error(`${what} failed (exit ${b.code}, stdout ${JSON.stringify(b.stdout)})\n${b.stderr}`);
  }
  const limits = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
  const runFlags = ['--ulimit', `nofile=${limits}:${limits}`, '--ulimit', 'nproc=32768:32768', '--network', 'none'];
  return {
    tag,
    dir,
    buildSeconds,
    loaded,
    archive,
    podman,
    run: (args, opts = [], input) => podman(['run', '--rm', ...(input === undefined ? [] : ['-i']), ...runFlags, ...opts, tag, ...args], input),
    size: () => Number(podman(['image', 'inspect', tag, '--format', '{{.Size}}']).stdout.trim()),
    close,
  };
}
