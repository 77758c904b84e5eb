// What a private runtime may leave on the host, and its removal: processes and mounts that name
// the test's temp dir, cgroup directories the runtime created (in every hierarchy), network
// namespaces. `leftovers()` lists what remains so a test can assert the list is empty.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Mount points of every cgroup hierarchy (v1 controllers and the unified v2 tree). */
function cgroupMounts(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => / - cgroup2? /.test(l))
    .map((l) => l.split(' ')[4]!);
}

/** Pids (not ours) whose command line mentions `needle`. */
export function processesNaming(needle: string): Array<{ pid: number; cmdline: string }> {
  const out: Array<{ pid: number; cmdline: string }> = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
      if (cmdline.includes(needle)) out.push({ pid, cmdline });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Pids whose cgroup path (any hierarchy) is `cgroup` or below it. */
export function processesInCgroup(cgroup: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const lines = readFileSync(`/proc/${pid}/cgroup`, 'latin1').split('\n');
      if (
        lines.some((l) => {
          const p = l.slice(l.indexOf(':', l.indexOf(':') + 1) + 1);
          return p === cgroup || p.startsWith(`${cgroup}/`);
        })
      )
        out.push(pid);
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Mount points below `dir`, deepest last as the kernel lists them. */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m === dir || m.startsWith(`${dir}/`));
}

/** Lazily unmounts everything below `dir`, deepest first. */
function unmountUnder(dir: string): void {
  for (const m of mountsUnder(dir).reverse()) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      /* already gone */
    }
  }
}

/**
 * SIGKILLs every process whose command line mentions `needle` (shims that outlive their daemon)
 * and waits up to `waitMs` for them to be gone, so nothing writes below a dir about to be removed.
 */
export async function killNaming(needle: string, waitMs = 10_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left = processesNaming(needle);
    if (!left.length || Date.now() > deadline) return;
    for (const p of left) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Removes `dir` once nothing is mounted below it, retrying while a late writer empties it. */
export function removeDir(dir: string): void {
  unmountUnder(dir);
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
}

/**
 * Removes the cgroup directories below `dir` (deepest first) and then `dir`; throws as rmdir
 * does when one is still in use. A container whose shim died is never deleted by runc, so its
 * cgroup stays below the pod's and keeps the pod's busy.
 */
function rmdirTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    try {
      rmdirTree(join(dir, e.name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  rmdirSync(dir);
}

/**
 * Removes the cgroup directory `path` with what is below it, and then each empty parent up to
 * the root, in every hierarchy; a directory still in use (another test's) stays. Returns whether
 * `path` is gone.
 */
function removeCgroup(path: string): boolean {
  let gone = true;
  for (const root of cgroupMounts()) {
    try {
      rmdirTree(join(root, path));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
        gone = false;
        continue;
      }
    }
    for (let p = path.slice(0, path.lastIndexOf('/')); p !== '/' && p !== ''; p = p.slice(0, p.lastIndexOf('/')) || '/') {
      try {
        rmdirSync(join(root, p));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        break;
      }
    }
  }
  return gone;
}

/**
 * Removes the cgroups `paths` (deepest first, see removeCgroup), retrying for up to `waitMs`
 * while one is busy: a cgroup stays busy until its last process has been reaped.
 */
export async function removeCgroups(paths: string[], waitMs = 10_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  let left = [...paths].sort((a, b) => b.length - a.length);
  while (left.length) {
    left = left.filter((p) => !removeCgroup(p));
    if (!left.length || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Cgroup paths of `paths` that still exist in some hierarchy. */
function cgroupsPresent(paths: string[]): string[] {
  const roots = cgroupMounts();
  return paths.filter((p) =>
    roots.some((r) => {
      try {
        readdirSync(join(r, p));
        return true;
      } catch {
        return false;
      }
    }),
  );
}

/** Named network namespaces (ip netns) on the host. */
export function netnsNames(): string[] {
  try {
    return readdirSync('/run/netns').sort();
  } catch {
    return [];
  }
}

/**
 * What a private runtime in `dir` left behind: processes naming `dir`, mounts below it, the
 * given cgroup paths, processes still in them, and network namespaces absent from `netnsBefore`.
 */
export function leftovers(dir: string, cgroups: string[], netnsBefore: string[]): string[] {
  const out: string[] = [];
  for (const p of processesNaming(dir)) out.push(`process ${p.pid}: ${p.cmdline}`);
  for (const m of mountsUnder(dir)) out.push(`mount ${m}`);
  for (const c of cgroupsPresent(cgroups)) out.push(`cgroup ${c}`);
  for (const c of cgroups) for (const pid of processesInCgroup(c)) out.push(`process ${pid} in cgroup ${c}`);
  for (const n of netnsNames()) if (!netnsBefore.includes(n)) out.push(`netns ${n}`);
  return out;
}
