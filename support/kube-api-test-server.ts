// A TEST SERVER that answers a few paths of the Kubernetes API, for the tests of the module's API
// client (no kube-apiserver can be installed on this machine kind: none in Debian 12 or npm). It
// is not a Kubernetes API server: no etcd, no admission, no schema validation, no RBAC beyond one
// bearer token. What it does follow are the API conventions the client relies on
// (https://kubernetes.io/docs/reference/using-api/api-concepts/):
//   - HTTPS with a certificate from its own CA; every request needs `Authorization: Bearer <token>`;
//   - list: `{apiVersion, kind: <Kind>List, metadata: {resourceVersion}, items}`, the list's
//     resourceVersion being the store's latest; equality label selectors (`labelSelector=a=b`);
//   - watch (`?watch=true`): chunked JSON lines `{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR,
//     "object": ...}`; without resourceVersion (or "0") every current object as ADDED first, then
//     the changes; from resourceVersion N every change after N from the history, then the live
//     ones; N older than the history kept -> an ERROR event with a Status of code 410 (reason
//     Expired), as the real server sends it, then the end; `allowWatchBookmarks=true` -> BOOKMARK
//     events carrying only the latest resourceVersion (every `bookmarkMs`, and on `bookmark()`);
//     `timeoutSeconds` ends the stream;
//   - objects: one resourceVersion counter for the store; metadata.generation counts spec
//     changes; create (409 AlreadyExists), get, replace (409 Conflict on a stale
//     metadata.resourceVersion), delete, and for kinds with a status subresource `/status`
//     (PUT, or PATCH with a JSON merge patch) that changes only status, while a replace of the
//     object keeps the status it had;
//   - Leases (coordination.k8s.io/v1, namespaced) like any object;
//   - for kubectl: legacy discovery (/api, /api/v1, /apis, /apis/<group>/<version>) and, to a
//     client that accepts `as=Table`, lists and objects as a meta.k8s.io/v1 Table with the kind's
//     printer columns (the JSONPath subset CRDs use: `.a.b` and `[?(@.k=="v")]`; `date` columns
//     as an age, as the API server renders them).
// Faults for tests: resetWatches() destroys every open watch connection mid-stream; compact()
// forgets the history, so a watch from a resourceVersion older than the latest gets the 410.
// Consumes kinds; produces a listening server on 127.0.0.1 and a kubeconfig for it.
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { stringify } from 'yaml';
import { buildCertificate, newEcKeyPair } from '../host/sources/audit/x509.js';

/** A kind the server serves. */
export interface TestKind {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  /** A status subresource: replace keeps status, `/status` changes only status. */
  status?: boolean;
  /** A CRD's additionalPrinterColumns: served as a Table to clients that ask (kubectl get). */
  printerColumns?: PrinterColumn[];
  shortNames?: string[];
}

/** One of a CRD's additionalPrinterColumns. */
export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  priority?: number;
  description?: string;
  format?: string;
}

/** An object in the store. */
export interface StoredObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid: string; resourceVersion: string; generation: number; creationTimestamp: string; [k: string]: unknown };
  spec?: unknown;
  status?: unknown;
  [k: string]: unknown;
}

/** The Lease kind (coordination.k8s.io/v1), always served. */
const LEASE_KIND: TestKind = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true };

interface Change {
  rv: number;
  kind: TestKind;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: StoredObject;
}

interface OpenWatch {
  kind: TestKind;
  namespace?: string;
  res: ServerResponse;
  bookmarks: boolean;
  timer?: NodeJS.Timeout;
}

/** One request as the server saw it (for tests that check what the client asked). */
interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
}

export interface KubeApiTestServerOptions {
  kinds: TestKind[];
  /** BOOKMARK interval for watches that allow them, ms (default 1000; 0: only on bookmark()). */
  bookmarkMs?: number;
}

/** A running test server. */
export interface KubeApiTestServer {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  readonly caPem: string;
  readonly token: string;
  /** Every request so far, in order. */
  readonly requests: SeenRequest[];
  /** Watches open now. */
  openWatches(): number;
  /** Writes a kubeconfig for this server (CA data, bearer token) at `path`; returns `path`. */
  writeKubeconfig(path: string): string;
  /** Creates or replaces an object (as `kubectl apply` ends up doing); returns it as stored. */
  apply(object: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec?: unknown }): StoredObject;
  /** Deletes an object; false when there was none. */
  remove(kind: string, name: string, namespace?: string): boolean;
  get(kind: string, name: string, namespace?: string): StoredObject | undefined;
  /** The store's latest resourceVersion. */
  resourceVersion(): string;
  /** Sends a BOOKMARK on every open watch that allows them. */
  bookmark(): void;
  /**
   * Destroys every open watch connection (a reset mid-stream); with `partial`, after half of an
   * event line (a MODIFIED of an object that does not exist), as a connection cut inside a chunk.
   * Returns how many.
   */
  resetWatches(opts?: { partial?: boolean }): number;
  /** Forgets the history: a watch from a resourceVersion older than the latest gets 410 Gone (as etcd's compaction). */
  compact(): void;
  close(): Promise<void>;
}

function tlsMaterial(): { caPem: string; certPem: string; keyPem: string } {
  const notBefore = new Date(Date.now() - 5 * 60_000);
  const notAfter = new Date(Date.now() + 24 * 3600_000);
  const ca = newEcKeyPair();
  const caName = { commonName: 'kube-api-test-server CA' };
  const caPem = buildCertificate({ subject: caName, issuer: caName, publicKey: ca.publicKey, issuerKey: ca.privateKey, issuerPublicKey: ca.publicKey, notBefore, notAfter, purpose: 'ca' });
  const leaf = newEcKeyPair();
  const certPem = buildCertificate({
    subject: { commonName: '127.0.0.1' },
    issuer: caName,
    publicKey: leaf.publicKey,
    issuerKey: ca.privateKey,
    issuerPublicKey: ca.publicKey,
    notBefore,
    notAfter,
    purpose: 'server',
    altNames: ['127.0.0.1', 'localhost'],
  });
  return { caPem, certPem, keyPem: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

const apiVersionOf = (k: TestKind) => `${k.group}/${k.version}`;

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** The first value a printer column's JSONPath selects (`.a.b`, `[?(@.k=="v")]`), undefined when none. */
function jsonPathValue(o: unknown, path: string): unknown {
  let cur: unknown[] = [o];
  for (const [, key, filterKey, filterValue] of path.matchAll(/\.(\w+)|\[\?\(@\.(\w+)=="([^"]*)"\)\]/g)) {
    cur = cur.flatMap((v) => {
      if (key !== undefined) return v !== null && typeof v === 'object' && key in v ? [(v as Record<string, unknown>)[key]] : [];
      return Array.isArray(v) ? v.filter((x) => (x as Record<string, unknown>)[filterKey!] === filterValue) : [];
    });
  }
  return cur[0];
}

/** An age as kubectl shows it (apimachinery's HumanDuration, to the hour). */
function age(since: string): string {
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(since)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  return `${Math.floor(m / 60)}h`;
}

/** Objects as a meta.k8s.io/v1 Table with the kind's printer columns. */
function table(k: TestKind, objects: StoredObject[], resourceVersion: string) {
  const columns = k.printerColumns ?? [];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
      ...columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 })),
    ],
    rows: objects.map((o) => ({
      cells: [
        o.metadata.name,
        ...columns.map((c) => {
          const v = jsonPathValue(o, c.jsonPath);
          return v === undefined ? null : c.type === 'date' ? age(String(v)) : v;
        }),
      ],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}

/** A JSON merge patch (RFC 7386). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Legacy discovery documents (kubectl reads them before anything else) for `path`, undefined for other paths. */
function discover(kinds: TestKind[], serverUrl: string, path: string): unknown {
  const groups = [...new Set(kinds.map(apiVersionOf))].map((gv) => {
    const [name, version] = gv.split('/') as [string, string];
    return { name, versions: [{ groupVersion: gv, version }], preferredVersion: { groupVersion: gv, version } };
  });
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: new URL(serverUrl).host }] };
  if (path === '/api/v1') return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1', resources: [] };
  if (path === '/apis') return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  const gv = /^\/apis\/([^/]+\/[^/]+)$/.exec(path)?.[1];
  if (!gv || !groups.some((g) => g.versions[0]!.groupVersion === gv)) return undefined;
  const resources = kinds
    .filter((k) => apiVersionOf(k) === gv)
    .flatMap((k) => [
      { name: k.plural, singularName: k.kind.toLowerCase(), namespaced: k.namespaced, kind: k.kind, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], ...(k.shortNames ? { shortNames: k.shortNames } : {}) },
      ...(k.status ? [{ name: `${k.plural}/status`, singularName: '', namespaced: k.namespaced, kind: k.kind, verbs: ['get', 'patch', 'update'] }] : []),
    ]);
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources };
}

/** The served objects, their history and the open watches, with the API's operations on them (no HTTP). */
function kubeState(opts: KubeApiTestServerOptions) {
  const kinds = [...opts.kinds, LEASE_KIND];
  const store = new Map<string, StoredObject>();
  const history: Change[] = [];
  let rv = 1;
  let compactedAt = 0;
  const watches = new Set<OpenWatch>();
  const bookmarkMs = opts.bookmarkMs ?? 1000;

  const keyOf = (k: TestKind, name: string, ns?: string) => `${k.plural}/${ns ?? ''}/${name}`;
  const kindNamed = (kind: string) => {
    const k = kinds.find((x) => x.kind === kind);
    if (!k) throw new Error(`kube-api-test-server: kind ${kind} is not served`);
    return k;
  };

  function send(w: OpenWatch, type: string, object: unknown): void {
    if (!w.res.destroyed && !w.res.writableEnded) w.res.write(`${JSON.stringify({ type, object })}\n`);
  }

  function bookmarkObject(k: TestKind) {
    return { kind: k.kind, apiVersion: apiVersionOf(k), metadata: { resourceVersion: String(rv) } };
  }

  function record(kind: TestKind, type: Change['type'], object: StoredObject): void {
    history.push({ rv: Number(object.metadata.resourceVersion), kind, type, object });
    for (const w of watches) if (w.kind === kind && (w.namespace === undefined || w.namespace === object.metadata.namespace)) send(w, type, object);
  }

  function put(k: TestKind, body: StoredObject | Record<string, unknown>, ns: string | undefined, mode: 'create' | 'replace' | 'status'): { code: number; body: unknown } {
    const meta = (body.metadata ?? {}) as { name?: string; resourceVersion?: string };
    if (!meta.name) return { code: 422, body: status(422, 'Invalid', 'metadata.name: Required value') };
    const key = keyOf(k, meta.name, ns);
    const old = store.get(key);
    if (mode === 'create' && old) return { code: 409, body: status(409, 'AlreadyExists', `${k.plural}.${k.group} "${meta.name}" already exists`) };
    if (mode !== 'create' && !old) return { code: 404, body: status(404, 'NotFound', `${k.plural}.${k.group} "${meta.name}" not found`) };
    if (old && meta.resourceVersion && meta.resourceVersion !== old.metadata.resourceVersion) {
      return { code: 409, body: status(409, 'Conflict', `Operation cannot be fulfilled on ${k.plural}.${k.group} "${meta.name}": the object has been modified; please apply your changes to the latest version and try again`) };
    }
    rv += 1;
    const { metadata: _m, status: newStatus, ...rest } = body as StoredObject;
    let next: StoredObject;
    if (mode === 'status') {
      next = { ...old!, status: newStatus, metadata: { ...old!.metadata, resourceVersion: String(rv) } };
    } else {
      const specChanged = !old || JSON.stringify(old.spec) !== JSON.stringify(rest.spec);
      next = {
        ...rest,
        apiVersion: apiVersionOf(k),
        kind: k.kind,
        metadata: {
          ...(body.metadata as object),
          name: meta.name,
          ...(ns ? { namespace: ns } : {}),
          uid: old?.metadata.uid ?? randomUUID(),
          resourceVersion: String(rv),
          generation: (old?.metadata.generation ?? 0) + (specChanged ? 1 : 0),
          creationTimestamp: old?.metadata.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      };
      if (k.status) {
        if (old?.status !== undefined) next.status = old.status;
        else delete next.status;
      } else if (newStatus !== undefined) next.status = newStatus;
    }
    store.set(key, next);
    record(k, old ? 'MODIFIED' : 'ADDED', next);
    return { code: old ? 200 : 201, body: next };
  }

  function remove(k: TestKind, name: string, ns?: string): { code: number; body: unknown } {
    const key = keyOf(k, name, ns);
    const old = store.get(key);
    if (!old) return { code: 404, body: status(404, 'NotFound', `${k.plural}.${k.group} "${name}" not found`) };
    store.delete(key);
    rv += 1;
    const gone = { ...old, metadata: { ...old.metadata, resourceVersion: String(rv) } };
    record(k, 'DELETED', gone);
    return { code: 200, body: gone };
  }

  /** Objects of a kind (in a namespace), matching an equality label selector (`a=b,c==d`). */
  function list(k: TestKind, ns?: string, labelSelector = ''): StoredObject[] {
    const wanted = labelSelector
      .split(',')
      .filter(Boolean)
      .map((term) => term.split(/==?/) as [string, string]);
    const labels = (o: StoredObject) => (o.metadata.labels ?? {}) as Record<string, string>;
    return [...store.values()].filter((o) => o.kind === k.kind && (ns === undefined || o.metadata.namespace === ns) && wanted.every(([key, v]) => labels(o)[key.trim()] === v?.trim()));
  }

  function openWatch(k: TestKind, ns: string | undefined, query: Record<string, string>, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const w: OpenWatch = { kind: k, namespace: ns, res, bookmarks: query.allowWatchBookmarks === 'true' };
    const from = query.resourceVersion;
    if (from && from !== '0' && Number(from) < compactedAt) {
      res.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${from} (${compactedAt})`) })}\n`);
      return;
    }
    watches.add(w);
    res.on('error', () => undefined); // a write racing a reset
    const close = () => {
      watches.delete(w);
      if (w.timer) clearInterval(w.timer);
    };
    res.on('close', close);
    if (!from || from === '0') for (const o of list(k, ns)) send(w, 'ADDED', o);
    else for (const c of history) if (c.rv > Number(from) && c.kind === k && (ns === undefined || c.object.metadata.namespace === ns)) send(w, c.type, c.object);
    if (w.bookmarks && bookmarkMs > 0) w.timer = setInterval(() => send(w, 'BOOKMARK', bookmarkObject(k)), bookmarkMs);
    const timeout = Number(query.timeoutSeconds);
    if (timeout > 0) {
      const t = setTimeout(() => res.end(), timeout * 1000);
      res.on('close', () => clearTimeout(t));
    }
  }

  return {
    kinds,
    store,
    watches,
    keyOf,
    kindNamed,
    send,
    bookmarkObject,
    put,
    remove,
    list,
    openWatch,
    rv: () => rv,
    compact() {
      compactedAt = rv;
      history.length = 0;
    },
  };
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startKubeApiTestServer(opts: KubeApiTestServerOptions): Promise<KubeApiTestServer> {
  const state = kubeState(opts);
  const { kinds, store, watches, keyOf, kindNamed, send, bookmarkObject, put, remove, list, openWatch } = state;
  const tls = tlsMaterial();
  const token = randomBytes(24).toString('hex');
  const sockets = new Set<Socket>();
  const requests: SeenRequest[] = [];
  let serverUrl = '';

  // /apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/status]]
  const PATH = /^\/apis\/([^/]+)\/([^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+)(\/status)?)?$/;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const query = Object.fromEntries(url.searchParams);
    requests.push({ method: req.method ?? 'GET', path: url.pathname, query });
    const reply = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${token}`) return reply(401, status(401, 'Unauthorized', 'Unauthorized'));
    const discovery = discover(kinds, serverUrl, url.pathname);
    if (discovery) return reply(200, discovery);
    const m = PATH.exec(url.pathname);
    const k = m && kinds.find((x) => x.group === m[1] && x.version === m[2] && x.plural === m[4]);
    if (!m || !k || (m[3] !== undefined && !k.namespaced)) return reply(404, status(404, 'NotFound', 'the server could not find the requested resource'));
    const [, , , ns, , name, sub] = m;
    if (k.namespaced && name !== undefined && ns === undefined) return reply(404, status(404, 'NotFound', 'the server could not find the requested resource'));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    if (chunks.length > 0) {
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch (err) {
        return reply(400, status(400, 'BadRequest', `the body is not JSON: ${(err as Error).message}`));
      }
    }
    const asTable = (req.headers.accept ?? '').includes('as=Table');
    if (name === undefined) {
      if (req.method === 'GET' && (query.watch === 'true' || query.watch === '1')) return openWatch(k, ns, query, res);
      if (req.method === 'GET' && asTable) return reply(200, table(k, list(k, ns, query.labelSelector), String(state.rv())));
      if (req.method === 'GET') return reply(200, { apiVersion: apiVersionOf(k), kind: `${k.kind}List`, metadata: { resourceVersion: String(state.rv()) }, items: list(k, ns, query.labelSelector) });
      if (req.method === 'POST') {
        const r = put(k, body, ns, 'create');
        return reply(r.code, r.body);
      }
      return reply(405, status(405, 'MethodNotAllowed', `${req.method} is not supported on a collection`));
    }
    if (sub && !k.status) return reply(404, status(404, 'NotFound', 'the server could not find the requested resource'));
    const current = store.get(keyOf(k, name, ns));
    if (req.method === 'GET') return current ? reply(200, asTable && !sub ? table(k, [current], String(state.rv())) : current) : reply(404, status(404, 'NotFound', `${k.plural}.${k.group} "${name}" not found`));
    if (req.method === 'DELETE') {
      const r = remove(k, name, ns);
      return reply(r.code, r.body);
    }
    if (req.method === 'PATCH') {
      if (!current) return reply(404, status(404, 'NotFound', `${k.plural}.${k.group} "${name}" not found`));
      if (req.headers['content-type'] !== 'application/merge-patch+json') return reply(415, status(415, 'UnsupportedMediaType', 'only application/merge-patch+json is supported here'));
      body = mergePatch(current, body) as Record<string, unknown>;
      (body.metadata as { resourceVersion?: string }).resourceVersion = undefined;
    }
    if (req.method === 'PUT' || req.method === 'PATCH') {
      const r = put(k, { ...body, metadata: { ...(body.metadata as object), name } }, ns, sub ? 'status' : 'replace');
      return reply(r.code, r.body);
    }
    return reply(405, status(405, 'MethodNotAllowed', `${req.method} is not supported`));
  }

  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status(500, 'InternalError', err.message)));
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  serverUrl = url;

  return {
    url,
    caPem: tls.caPem,
    token,
    requests,
    openWatches: () => watches.size,
    writeKubeconfig(path) {
      const config = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'test', cluster: { server: url, 'certificate-authority-data': Buffer.from(tls.caPem).toString('base64') } }],
        users: [{ name: 'test', user: { token } }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
        'current-context': 'test',
      };
      writeFileSync(path, stringify(config), { mode: 0o600 });
      return path;
    },
    apply(object) {
      const k = kindNamed(object.kind);
      const exists = store.has(keyOf(k, object.metadata.name, object.metadata.namespace));
      const r = put(k, object as unknown as Record<string, unknown>, object.metadata.namespace, exists ? 'replace' : 'create');
      if (r.code >= 300) throw new Error(`kube-api-test-server: apply ${object.kind}/${object.metadata.name}: ${JSON.stringify(r.body)}`);
      return r.body as StoredObject;
    },
    remove(kind, name, namespace) {
      return remove(kindNamed(kind), name, namespace).code === 200;
    },
    get(kind, name, namespace) {
      return store.get(keyOf(kindNamed(kind), name, namespace));
    },
    resourceVersion: () => String(state.rv()),
    bookmark() {
      for (const w of watches) if (w.bookmarks) send(w, 'BOOKMARK', bookmarkObject(w.kind));
    },
    resetWatches({ partial = false } = {}) {
      const open = [...watches];
      for (const w of open) {
        watches.delete(w);
        if (w.timer) clearInterval(w.timer);
        const socket = w.res.socket;
        // The half line is flushed to the client before the cut (the watch gets nothing more meanwhile).
        if (partial) w.res.write(JSON.stringify({ type: 'MODIFIED', object: { kind: w.kind.kind, metadata: { name: 'cut-short', resourceVersion: String(state.rv() + 1000) } } }).slice(0, 60), () => socket?.destroy());
        else socket?.destroy();
      }
      return open.length;
    },
    compact: state.compact,
    async close() {
      for (const w of watches) if (w.timer) clearInterval(w.timer);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
