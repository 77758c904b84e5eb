// The container context of a suite test (`context.container`): the test's process chain runs
// inside a container, as upstream's HostRunner delegates it to one (pkg/test/runner/host:
// delegateToContainer; its containers are privileged, named by the test, the base image tagged
// with the test's `image`). Here the container is a cgroup box of the event generator
// (host/generator/cgroup-box.ts: a busybox overlay root in its own mount and network namespaces
// and its own container cgroup, which the engine reads as container.id), privileged, one per test,
// removed after it. The chain's program is perl (leaf.pl), which the busybox image lacks: the
// node's /usr (and /lib, /lib64 when they are links into it) and /usr/bin/bash (the `before` and
// `after` scripts) are bound read-only into the box, and the test's plan directory writable at
// the same path, so the plan, the links named as the test's processes and the report are where
// the chain expects them. Consumes the chain's first process and the plan directory; produces the
// chain's exit ("exit N" or why it did not run) and the container it ran in.
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { CgroupBoxes } from '../../generator/index.js';
import type { BoxBind } from '../../generator/cgroup-box.js';

/** The chain's first process as the box starts it (perform.ts's ChainProcess, without setpriv: the container's own process runs as root). */
interface BoxProcess {
  path: string;
  args: string[];
  env: Record<string, string>;
}

/** The container a chain ran in, as the alerts of its processes name it. */
export interface ChainContainer {
  runtime: 'cgroup';
  id: string;
  name: string;
}

/** The node paths the chain needs in the box: /usr, /lib and /lib64 where they lead into /usr (merged /usr), bash, and the plan directory. */
function binds(dir: string): BoxBind[] {
  const out: BoxBind[] = [{ source: '/usr', target: '/usr' }];
  for (const p of ['/lib', '/lib64']) if (existsSync(p)) out.push({ source: lstatSync(p).isSymbolicLink() ? realpathSync(p) : p, target: p });
  out.push({ source: '/usr/bin/bash', target: '/bin/bash' }, { source: dir, target: dir, writable: true });
  return out;
}

/**
 * Runs `entry` (its program, leaf.pl, read from `script` on stdin) in a fresh privileged box with
 * only its own environment; resolves with its exit, or why the box could not be made (then
 * nothing ran). The box is removed before this resolves.
 */
export async function runInContainer(entry: BoxProcess, script: string, dir: string, timeoutMs: number, log: (line: string) => void): Promise<{ code: string; container?: ChainContainer }> {
  const opening = await CgroupBoxes.open({ binds: binds(dir), log });
  if (!opening.runner) return { code: `no container: ${opening.unavailable}` };
  const boxes = opening.runner;
  try {
    const box = await boxes.container(true);
    const env = Object.entries({ ...entry.env, RAE_SUITE_STAGE: '0' }).map(([k, v]) => `${k}=${v}`);
    // stdin is the program; `env -i` leaves the process nothing but the chain's environment
    const argv = ['/bin/sh', '-c', 'f=$1; shift; exec /usr/bin/env -i "$@" < "$f"', 'sh', script, ...env, entry.path, ...(entry.args.length > 0 ? ['-', ...entry.args] : [])];
    const code = await box.exec(argv, { timeoutMs });
    return { code: `exit ${code}`, container: { runtime: 'cgroup', id: box.id, name: box.name } };
  } catch (err) {
    return { code: `error ${(err as Error).message}` };
  } finally {
    await boxes.close();
  }
}
