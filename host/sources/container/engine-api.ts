// Container metadata from Docker or Podman through the Engine REST API on their unix socket
// (undici): GET /containers/json, /containers/{id}/json, /images/{id}/json and the /events
// stream, mapped as Falco's docker and podman engines map them; for Podman also the libpod
// endpoint for ImageName/ImageDigest (https://docs.podman.io/en/latest/_static/api.html).
import { Readable } from 'node:stream';
import type { Client } from 'undici';
import { keptLabels, podFromLabels, shortId, splitImage, type ContainerMount, type ContainerRecord } from './record.js';
import type { MetadataSource, RuntimeEvent, Watch } from './source.js';

/** Docker Engine API version both speak (dockerd 20.10, podman 4 compat). */
const API = '/v1.41';
const LIBPOD = '/v4.0.0/libpod';

/** A client on `socket`, undici imported only now: a start without Docker or Podman never loads it (about 1.3 s of module loading, profiled under load; issue #33). */
async function clientOn(socket: string, headersTimeout: number, bodyTimeout: number): Promise<Client> {
  const { Client } = await import('undici');
  return new Client('http://localhost', { socketPath: socket, headersTimeout, bodyTimeout });
}

/** Options of an Engine API source. */
export interface EngineOptions {
  callTimeoutMs: number;
}

/** What `call()` parses by default: the fields the write side reads (the Id of a created container or exec, an exec's Running and ExitCode). */
export interface EngineAnswer {
  Id: string;
  Running?: boolean;
  ExitCode?: number;
}

/** GET /containers/{id}/json: the fields mapped. */
interface ContainerInspect {
  Id: string;
  Name?: string;
  Image?: string;
  Config?: { Image?: string; Labels?: Record<string, string> | null };
  HostConfig?: { Privileged?: boolean; PidMode?: string; NetworkMode?: string; IpcMode?: string };
  Mounts?: Array<{ Source?: string; Destination?: string; Mode?: string; RW?: boolean; Propagation?: string }>;
  NetworkSettings?: { IPAddress?: string; Networks?: Record<string, { IPAddress?: string }> };
  State?: { StartedAt?: string };
}

/** GET /images/{id}/json: the fields mapped. */
interface ImageInspect {
  Id?: string;
  RepoTags?: string[];
  RepoDigests?: string[];
}

/** Podman's GET /libpod/containers/{id}/json: the image as named, which the compat answer lacks. */
interface LibpodInspect {
  ImageName?: string;
  ImageDigest?: string;
}

/** An HTTP error status from the runtime. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    path: string,
  ) {
    super(`${path}: HTTP ${status}`);
  }
}

/** Docker (`flavor` docker) or Podman (`podman`) on `socket`. */
export class EngineSource implements MetadataSource {
  /** Made on the first call (clientOn). */
  private client: Promise<Client> | undefined;

  constructor(
    readonly name: 'docker' | 'podman',
    readonly socket: string,
    private readonly opts: EngineOptions = { callTimeoutMs: 5000 },
  ) {}

  private connect(): Promise<Client> {
    this.client ??= clientOn(this.socket, this.opts.callTimeoutMs, this.opts.callTimeoutMs);
    return this.client;
  }

  private async json<T>(path: string): Promise<T | undefined> {
    const res = await (await this.connect()).request({ method: 'GET', path, signal: AbortSignal.timeout(this.opts.callTimeoutMs) });
    if (res.statusCode === 404) {
      await res.body.dump();
      return undefined;
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new HttpError(res.statusCode, path);
    }
    return (await res.body.json()) as T;
  }

  /**
   * One Engine API call for the write side (the event generator's --in-container creates, execs
   * in and removes its containers through the same client): `path` below the API version, a JSON
   * body or a tar stream (`/images/load`); resolves with the status, the answer's text and its
   * JSON as `T` (undefined when empty or not one JSON value: read it only after checking the
   * status).
   */
  async call<T = EngineAnswer>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: object | Readable, timeoutMs = this.opts.callTimeoutMs): Promise<{ status: number; text: string; json: T }> {
    const stream = body instanceof Readable;
    const res = await (await this.connect()).request({
      method,
      path: `${API}${path}`,
      headers: body === undefined ? {} : { 'content-type': stream ? 'application/x-tar' : 'application/json' },
      body: body === undefined ? undefined : body instanceof Readable ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, text, json: json as T };
  }

  async list(): Promise<ContainerRecord[]> {
    const rows = (await this.json<Array<{ Id: string }>>(`${API}/containers/json`)) ?? [];
    const out: ContainerRecord[] = [];
    for (const row of rows) {
      const r = await this.get(row.Id);
      if (r) out.push(r);
    }
    return out;
  }

  async get(id: string): Promise<ContainerRecord | undefined> {
    const c = await this.json<ContainerInspect>(`${API}/containers/${encodeURIComponent(id)}/json`);
    if (!c) return undefined;
    const img = c.Image ? await this.json<ImageInspect>(`${API}/images/${encodeURIComponent(c.Image)}/json`) : undefined;
    const lib = this.name === 'podman' ? await this.json<LibpodInspect>(`${LIBPOD}/containers/${encodeURIComponent(c.Id)}/json`) : undefined;
    // The image as the user named it; an id (sha256:...) falls back to the image's first tag.
    const named: string = lib?.ImageName || (c.Config?.Image && !c.Config.Image.startsWith('sha256:') ? c.Config.Image : (img?.RepoTags?.[0] ?? ''));
    const split = splitImage(named);
    const repoDigest: string = img?.RepoDigests?.[0] ?? '';
    const digest = split.digest || lib?.ImageDigest || (repoDigest.includes('@') ? repoDigest.slice(repoDigest.indexOf('@') + 1) : '');
    const hc = c.HostConfig ?? {};
    const labels = keptLabels(c.Config?.Labels ?? {});
    const mounts: ContainerMount[] = (c.Mounts ?? []).map((m) => ({
      source: m.Source ?? '',
      dest: m.Destination ?? '',
      mode: m.Mode ?? '',
      rdwr: m.RW === true,
      propagation: m.Propagation ?? '',
    }));
    const networks = Object.values(c.NetworkSettings?.Networks ?? {});
    const ip = c.NetworkSettings?.IPAddress || networks.find((n) => n.IPAddress)?.IPAddress || '';
    const started = Date.parse(c.State?.StartedAt ?? '');
    return {
      id: shortId(c.Id),
      fullId: c.Id,
      type: this.name,
      name: String(c.Name ?? '').replace(/^\//, ''),
      image: named,
      imageId: String(img?.Id ?? c.Image ?? '').replace(/^sha256:/, ''),
      imageRepository: split.repository,
      imageTag: split.tag,
      imageDigest: digest,
      privileged: hc.Privileged === true,
      mounts,
      ip,
      hostPid: hc.PidMode === 'host',
      hostNetwork: hc.NetworkMode === 'host',
      hostIpc: hc.IpcMode === 'host',
      labels,
      startTs: Number.isFinite(started) && started > 0 ? BigInt(started) * 1_000_000n : 0n,
      pod: podFromLabels(labels),
      sandbox: false,
    };
  }

  watch(onEvent: (e: RuntimeEvent) => void, onError: (err: Error) => void): Watch {
    const ac = new AbortController();
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      onError(err);
    };
    const filters = encodeURIComponent(JSON.stringify({ type: ['container'] }));
    // its own connection (a Client has one, and the stream never ends); no body timeout: the
    // stream is quiet while nothing happens
    const stream = clientOn(this.socket, this.opts.callTimeoutMs, 0);
    stream
      .then((c) => c.request({ method: 'GET', path: `${API}/events?filters=${filters}`, signal: ac.signal, bodyTimeout: 0 }))
      .then(async (res) => {
        if (res.statusCode !== 200) throw new HttpError(res.statusCode, '/events');
        let buf = '';
        for await (const chunk of res.body) {
          buf += (chunk as Buffer).toString('utf8');
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            const e = eventOf(line);
            if (e) onEvent(e);
          }
        }
        throw new Error(`${this.name} event stream ended`);
      })
      .catch((e: Error) => {
        void stream.then((c) => c.destroy()).catch(() => undefined);
        if (!ac.signal.aborted) fail(e);
      });
    return {
      close: () => {
        done = true;
        ac.abort();
        void stream.then((c) => c.destroy()).catch(() => undefined);
      },
    };
  }

  close(): void {
    void this.client?.then((c) => c.close()).catch(() => undefined);
  }
}

/** A lifecycle event from one line of /events; undefined for other actions or bad lines. */
function eventOf(line: string): RuntimeEvent | undefined {
  if (!line) return undefined;
  let e: { Action?: string; status?: string; id?: string; Actor?: { ID?: string } };
  try {
    e = JSON.parse(line);
  } catch {
    return undefined;
  }
  const id = e.Actor?.ID ?? e.id;
  const action = e.Action ?? e.status;
  if (!id) return undefined;
  if (action === 'create') return { kind: 'create', id };
  if (action === 'start') return { kind: 'start', id };
  if (action === 'destroy' || action === 'remove') return { kind: 'delete', id };
  return undefined;
}
