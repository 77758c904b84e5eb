// The container context of a suite test (`context.container`): the test's process chain runs
// inside a container, as upstream's HostRunner delegates it to one (pkg/test/runner/host:
// delegateToContainer; its containers are privileged, named by the test, the base image tagged
// with the test's `image`). As upstream: through the node's Docker or Podman when one answers
// (runtime.ts; the engine then has the container's runtime metadata: container.name, .image,
// .privileged), else in a cgroup box of the event generator (host/generator/cgroup-box.ts: a
// busybox overlay root in its own mount and network namespaces and its own container cgroup,
// which the engine reads as container.id, with no runtime metadata), privileged, one per test,
// removed after it. The chain's program (the leaf program and leaf.pl, perl) needs the node's
// /usr (and /lib, /lib64 where they lead into /usr) and /usr/bin/bash (the `before` and `after`
// scripts), bound read-only, and the test's plan directory writable at its own path, so the plan,
// the program and the report are where the chain expects them.
// A runtime's container waits, before its chain starts, until `ready` says the engine has its
// metadata (the runtime's events reach the engine asynchronously; a chain started at once could
// run before it, without container.name). Consumes the chain's first process and the plan
// directory; produces the chain's exit ("exit N" or why it did not run) and the container it ran in.
import { existsSync, lstatSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CgroupBoxes, GENERATOR_IMAGE, type BoxBind } from '../../generator/index.js';
import type { ContainersConfig } from '../../sources/container/index.js';
import { RuntimeContainers } from './runtime.js';

/** One process of the chain as leaf.pl starts it (perform.ts writes it into the plan). */
export interface ChainProcess {
  path: string;
  argv0: string;
  args: string[];
  env: Record<string, string>;
  setpriv?: string[];
  /** In a container: the program to link (or copy) at `real` before the process starts there, `path` a symlink to it when they differ (leaf.pl make_exe). */
  make?: { from: string; real: string };
}

/** The container a chain ran in, as the alerts of its processes name it. */
export interface ChainContainer {
  runtime: 'docker' | 'podman' | 'cgroup';
  id: string;
  name: string;
}

/** One test's chain to run in a container. */
export interface ContainerChain {
  /** The container's own process (perform.ts: the chain's first, its environment the container's `env`). */
  entry: ChainProcess;
  /** leaf.pl, in the plan directory. */
  script: string;
  /** The plan directory. */
  dir: string;
  testId: string;
  /** The test's `context.container` (name, image, env). */
  spec: Record<string, unknown>;
}

/** The environment variable of a runtime container's own process while it waits for `ready` (the suite engine's readiness rule, engine.ts, looks for it). */
export const CONTAINER_WAIT_ENV = 'RAE_SUITE_CONTAINER_WAIT';

/** How ChainContainers finds and waits for runtimes. */
export interface ChainContainersOptions {
  /** The runtimes to try (default: none, the cgroup box only). */
  runtimes?: ContainersConfig;
  /**
   * Resolves once the engine has the metadata of the container whose waiting process carries
   * `testId` (or after a bound: then the chain starts anyway); default: at once.
   */
  ready?(testId: string): Promise<void>;
  log(line: string): void;
}

/** The node paths the chain needs in the container: /usr, /lib and /lib64 where they lead into /usr (merged /usr), bash, and the plan directory. */
function binds(dir: string): BoxBind[] {
  const out: BoxBind[] = [{ source: '/usr', target: '/usr' }];
  for (const p of ['/lib', '/lib64']) if (existsSync(p)) out.push({ source: lstatSync(p).isSymbolicLink() ? realpathSync(p) : p, target: p });
  out.push({ source: '/usr/bin/bash', target: '/bin/bash' }, { source: dir, target: dir, writable: true });
  return out;
}

/** `env -i NAME=value... PATH ARGS...` reading the program from the file $f: the chain's first process with only the chain's environment. */
const EXEC_ENTRY = 'exec /usr/bin/env -i "$@" < "$f"';

/** The containers of one runner's tests: the runtime opened on first use, kept until close(). */
export class ChainContainers {
  private opened?: Promise<{ runtime?: RuntimeContainers; unavailable?: string }>;

  constructor(private readonly opts: ChainContainersOptions) {}

  /** Runs the chain in a fresh privileged container; resolves with its exit, or why no container could be made (then nothing ran). The container is removed before this resolves. */
  async run(c: ContainerChain, timeoutMs: number): Promise<{ code: string; container?: ChainContainer }> {
    const none: { runtime?: RuntimeContainers; unavailable?: string } = { unavailable: 'no runtime configured' };
    this.opened ??= (this.opts.runtimes ? RuntimeContainers.open(this.opts.runtimes, this.opts.log) : Promise.resolve(none)).then((o) => {
      if (!o.runtime) this.opts.log(`suite: context.container: no Docker/Podman (${o.unavailable}): chains run in cgroup boxes, without runtime metadata`);
      return o;
    });
    const { runtime } = await this.opened;
    return runtime ? this.inRuntime(runtime, c, timeoutMs) : this.inBox(c, timeoutMs);
  }

  private async inRuntime(runtime: RuntimeContainers, c: ContainerChain, timeoutMs: number): Promise<{ code: string; container?: ChainContainer }> {
    const name = String(c.spec.name ?? 'event-generator');
    const go = join(c.dir, 'go');
    const env = Object.entries({ ...c.entry.env, [CONTAINER_WAIT_ENV]: '1' }).map(([k, v]) => `${k}=${v}`);
    const chainEnv = Object.entries({ ...c.entry.env, RAE_SUITE_STAGE: '0' }).map(([k, v]) => `${k}=${v}`);
    // the container's own process waits for `go` (its sleeps are the engine's first sight of
    // the container), then becomes the chain's first process
    const argv = ['/bin/sh', '-c', `go=$1; f=$2; shift 2; while [ ! -e "$go" ]; do sleep 0.05; done; ${EXEC_ENTRY}`, 'sh', go, c.script, ...chainEnv, c.entry.path, ...c.entry.args];
    let started: Awaited<ReturnType<RuntimeContainers['start']>>;
    try {
      started = await runtime.start({ name, image: String(c.spec.image ?? GENERATOR_IMAGE), argv, env, binds: binds(c.dir) });
    } catch (err) {
      return { code: `no container: ${runtime.runtime} at ${runtime.socket}: ${(err as Error).message}` };
    }
    try {
      await this.opts.ready?.(c.testId);
      writeFileSync(go, '');
      const code = await started.wait(timeoutMs);
      return { code: `exit ${code}`, container: { runtime: runtime.runtime, id: started.id, name } };
    } catch (err) {
      return { code: `error ${(err as Error).message}` };
    } finally {
      await started.remove().catch((err: Error) => this.opts.log(`suite: ${err.message}`));
    }
  }

  private async inBox(c: ContainerChain, timeoutMs: number): Promise<{ code: string; container?: ChainContainer }> {
    const opening = await CgroupBoxes.open({ binds: binds(c.dir), log: this.opts.log });
    if (!opening.runner) return { code: `no container: ${opening.unavailable}` };
    const boxes = opening.runner;
    try {
      const box = await boxes.container(true);
      const env = Object.entries({ ...c.entry.env, RAE_SUITE_STAGE: '0' }).map(([k, v]) => `${k}=${v}`);
      const argv = ['/bin/sh', '-c', `f=$1; shift; ${EXEC_ENTRY}`, 'sh', c.script, ...env, c.entry.path, ...c.entry.args];
      const code = await box.exec(argv, { timeoutMs });
      return { code: `exit ${code}`, container: { runtime: 'cgroup', id: box.id, name: box.name } };
    } catch (err) {
      return { code: `error ${(err as Error).message}` };
    } finally {
      await boxes.close();
    }
  }

  /** Closes the runtime's client. */
  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    (await opened)?.runtime?.close();
  }
}
