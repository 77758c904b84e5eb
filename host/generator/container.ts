// The containers of `rae event-generator run --in-container`: the container-only actions run in
// real containers that this runner creates through the node's Docker or Podman Engine API (the
// metadata source's client, host/sources/container/engine-api.ts, on the sockets of the
// configuration's `containers` section), from an image built offline from the node's
// busybox-static (image.ts) and loaded when the runtime does not have it yet. Containers have no
// network (`none`: only their own loopback), sleep until removed, and are made on first use, one
// plain and one privileged; close() removes them, and so does SIGINT/SIGTERM/SIGHUP before the
// process exits. CRI runtimes (containerd, CRI-O) have no image import in the CRI, so they are
// not used here.
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineSource, type ContainersConfig } from '../sources/container/index.js';
import { busyboxRootfs, busyboxUnavailable, writeOciArchive } from './image.js';
import { ContainerHostBase } from './container-host.js';
import type { ActionContainer } from './types.js';

/** The generator's image in the runtime (kept after the run: loading it again costs about a second). */

/**
 * Deadline of the generator's own Engine API calls. The metadata reader keeps its short
 * `callTimeoutMs` (enrichment must not stall); the generator's writes (create, start, exec, a
 * forced remove) take seconds on a busy node and only the generator waits on them.
 */
const WRITE_TIMEOUT_MS = 60_000;
export const GENERATOR_IMAGE = 'localhost/rae-event-generator:busybox';
/** The label on every container the generator makes. */
export const GENERATOR_LABEL = 'io.rae.event-generator';

/** Options of a runner. */
export interface RunnerOptions {
  /**
   * Pause after a container starts, before its first action: time for a `rae run` that follows
   * the runtime's events to learn the container's metadata (container.name, .privileged, ...),
   * which reaches it asynchronously (docs/containers.md). Default 2000 ms.
   */
  settleMs?: number;
  log?(line: string): void;
}

/** Why no runner, or the runner. */
export type RunnerOpening = { runner: ContainerRunner; unavailable?: undefined } | { runner?: undefined; unavailable: string };

/** Makes, uses and removes the generator's containers on one Engine API runtime. */
export class ContainerRunner extends ContainerHostBase {
  private readonly ids: string[] = [];
  readonly runtime: 'docker' | 'podman';
  protected readonly what = 'the container runner';

  private constructor(
    private readonly engine: EngineSource,
    private readonly opts: RunnerOptions,
  ) {
    super();
    this.runtime = engine.name;
  }

  /**
   * The first Docker, then Podman socket of `cfg` that answers, with the generator's image
   * loaded; or why there is none. Only the configured sockets are tried.
   */
  static async open(cfg: ContainersConfig & { enabled?: boolean }, opts: RunnerOptions = {}): Promise<RunnerOpening> {
    const opened = await openGeneratorRuntime(cfg, opts.log);
    return opened.engine ? { runner: new ContainerRunner(opened.engine, opts) } : { unavailable: opened.unavailable };
  }

  protected async make(privileged: boolean): Promise<ActionContainer> {
    const e = this.engine;
    const name = `rae-event-generator-${process.pid}-${privileged ? 'privileged' : 'plain'}`;
    const created = await e.call('POST', `/containers/create?name=${name}`, {
      Image: GENERATOR_IMAGE,
      Cmd: ['sleep', '3600'],
      Labels: { [GENERATOR_LABEL]: 'true' },
      // CAP_NET_RAW for the packet socket: Docker grants it by default, Podman no longer does.
      HostConfig: { NetworkMode: 'none', Privileged: privileged, CapAdd: privileged ? [] : ['NET_RAW'] },
    });
    if (created.status !== 201) throw new Error(`creating container ${name}: HTTP ${created.status} ${created.text.trim()}`);
    const id: string = created.json.Id;
    this.ids.push(id);
    const started = await e.call('POST', `/containers/${id}/start`);
    if (started.status !== 204 && started.status !== 304) throw new Error(`starting container ${name}: HTTP ${started.status} ${started.text.trim()}`);
    this.opts.log?.(`event-generator: started ${privileged ? 'privileged ' : ''}container ${name} (${id.slice(0, 12)})`);
    await new Promise((r) => setTimeout(r, this.opts.settleMs ?? 2000));
    return { runtime: e.name, id, name, exec: (script, o) => this.exec(id, script, o) };
  }

  /**
   * `sh -c command` (or the argv `command`) in container `id`, then inspected until it has exited, for its exit status.
   * Docker's exec is started detached: attached, dockerd hijacks the connection and does not end
   * the answer when the process exits. Podman's is started attached (its output read and dropped,
   * the answer ends with the process): Podman 4 reports a detached exec as running long after it
   * exited.
   */
  private async exec(id: string, command: string | readonly string[], o: { tty?: boolean; timeoutMs?: number } = {}): Promise<number> {
    const e = this.engine;
    const tty = o.tty === true;
    const attach = e.name === 'podman';
    const timeoutMs = o.timeoutMs ?? 30_000;
    const argv = typeof command === 'string' ? ['sh', '-c', command] : [...command];
    const what = `${typeof command === 'string' ? `sh -c '${command}'` : argv.join(' ')} in ${id.slice(0, 12)}`;
    const fail = (step: string, r: { status: number; text: string }) => new Error(`${step} of ${what}: HTTP ${r.status} ${r.text.trim().slice(0, 300)}`);
    const made = await e.call('POST', `/containers/${id}/exec`, { Cmd: argv, Tty: tty, AttachStdin: false, AttachStdout: attach, AttachStderr: attach });
    if (made.status !== 201) throw fail('exec', made);
    const exec: string = made.json.Id;
    const deadline = Date.now() + timeoutMs;
    const started = await e.call('POST', `/exec/${exec}/start`, { Detach: !attach, Tty: tty }, timeoutMs).catch((err: Error) => {
      throw new Error(Date.now() >= deadline ? `${what} did not end in ${timeoutMs} ms` : `${what}: ${err.message}`);
    });
    if (started.status !== 200) throw fail('exec start', started);
    for (;;) {
      const s = await e.call('GET', `/exec/${exec}/json`);
      if (s.status !== 200) throw fail('exec inspect', s);
      if (s.json.Running === false && typeof s.json.ExitCode === 'number') return s.json.ExitCode;
      if (Date.now() > deadline) throw new Error(`${what} did not end in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Removes every container made (force: they are running), then closes the client. */
  protected async remove(): Promise<void> {
    const errors: string[] = [];
    for (const id of this.ids) {
      const r = await this.engine.call('DELETE', `/containers/${id}?force=true&v=true`).catch((err: Error) => ({ status: 0, text: err.message }));
      if (r.status !== 204 && r.status !== 404) errors.push(`removing container ${id.slice(0, 12)}: ${r.status ? `HTTP ${r.status} ${r.text.trim()}` : r.text}`);
      else this.opts.log?.(`event-generator: removed container ${id.slice(0, 12)}`);
    }
    this.engine.close();
    if (errors.length > 0) throw new Error(errors.join('; '));
  }
}

/**
 * The first Docker, then Podman socket of `cfg` that answers the Engine API, with GENERATOR_IMAGE
 * loaded into it, as a client whose calls have the generator's WRITE_TIMEOUT_MS deadline; or why
 * there is none. Only the configured sockets are tried. Also the runtime of the suite runner's
 * containers (host/testing/suite/runtime.ts).
 */
export async function openGeneratorRuntime(cfg: ContainersConfig & { enabled?: boolean }, log?: (line: string) => void): Promise<{ engine: EngineSource; unavailable?: undefined } | { engine?: undefined; unavailable: string }> {
  const tried: string[] = [];
  const candidates = cfg.enabled !== false ? ([...(cfg.docker.enabled ? cfg.docker.sockets.map((s) => ['docker', s] as const) : []), ...(cfg.podman.enabled ? cfg.podman.sockets.map((s) => ['podman', s] as const) : [])] as const) : [];
  for (const [name, socket] of candidates) {
    if (!existsSync(socket)) {
      tried.push(`${name} ${socket}: absent`);
      continue;
    }
    const engine = new EngineSource(name, socket, { callTimeoutMs: Math.max(cfg.callTimeoutMs, WRITE_TIMEOUT_MS) });
    const ping = await engine.call('GET', '/_ping').catch((e: Error) => ({ status: 0, text: e.message }));
    if (ping.status !== 200) {
      engine.close();
      tried.push(`${name} ${socket}: ${ping.status ? `HTTP ${ping.status}` : ping.text}`);
      continue;
    }
    const why = await loadImage(engine).catch((e: Error) => e.message);
    if (why) {
      engine.close();
      return { unavailable: `${name} at ${socket}: ${why}` };
    }
    log?.(`event-generator: containers through ${name} at ${socket}, image ${GENERATOR_IMAGE}`);
    return { engine };
  }
  const where = tried.length > 0 ? tried.join('; ') : 'no docker or podman socket is enabled';
  return { unavailable: `needs a container runtime with the Docker/Podman Engine API (containers.docker.sockets, containers.podman.sockets): ${where}` };
}

/** Loads GENERATOR_IMAGE unless the runtime has it (within the engine's WRITE_TIMEOUT_MS deadline); resolves with why it could not, or undefined. */
async function loadImage(engine: EngineSource): Promise<string | undefined> {
  const ref = encodeURIComponent(GENERATOR_IMAGE);
  if ((await engine.call('GET', `/images/${ref}/json`)).status === 200) return undefined;
  const missing = busyboxUnavailable();
  if (missing) return missing;
  const dir = mkdtempSync(join(tmpdir(), 'rae-event-generator-image-'));
  try {
    const archive = writeOciArchive(busyboxRootfs(dir), GENERATOR_IMAGE, join(dir, 'image.oci.tar'));
    // the load answers with a stream of JSON messages, an error among them when it failed
    const r = await engine.call('POST', '/images/load?quiet=1', createReadStream(archive));
    if (r.status !== 200 || /"error/i.test(r.text)) return `loading ${GENERATOR_IMAGE}: HTTP ${r.status} ${r.text.trim().slice(0, 300)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return (await engine.call('GET', `/images/${ref}/json`)).status === 200 ? undefined : `${GENERATOR_IMAGE} is not there after loading it`;
}
