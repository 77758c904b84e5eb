// Fuzzing the API over raw TCP (fast-check): every route, method, path parameter, query
// parameter, header and body shape, including what an HTTP client library would refuse to send
// (NUL and CR in headers, bad escapes, bare bytes) and the Sentry bodies' worst cases (gzip bombs,
// truncated gzip, lengths that overrun, unknown item types). The property: every request gets a
// clear answer below 500 within a wide deadline, no internal error is logged, and the server
// keeps serving. Used by test/api/fuzz.test.ts (fixed seed, bounded) and bench/fuzz-api.ts.
import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { upsertSetting } from '../../../host/api/db/index.js';
import { envelope, sentryEvent } from '../cases/ingestion.js';
import type { TestApi, World } from './api.js';

/** What the generated requests may use: real ids and credentials, so deep paths are reached. */
export interface FuzzWorld {
  api: TestApi;
  w: World;
  id: number;
  key: string;
}

/** One generated request, as bytes on the wire. */
interface FuzzRequest {
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

/** A request whose answer broke the property. */
interface FuzzFailure {
  request: { method: string; target: string; headers: Array<[string, string]>; bodyBytes: number };
  reason: string;
}

/** Answer deadline per request: wide, so a loaded machine is not a failure; a hang is. */
const ANSWER_DEADLINE_MS = 30_000;
/** 50 MiB of zeros, gzipped to about 50 KiB: under the body cap, far over the decompressed one. */
const GZIP_BOMB = gzipSync(Buffer.alloc(50 * 1024 * 1024));

const junkString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', '\u0000', 'a\u0000b', '\ud800', '\uffff', '%', '%00', '%FF', '%C0%80', '%zz', '../..', 'null', '-1', '2147483648', '9'.repeat(40)),
  fc.nat({ max: 5000 }).map((n) => 'x'.repeat(n)),
);

function percentEncodeRaw(s: string): string {
  // a raw target may hold any byte but space, CR and LF, which end the request line
  return [...Buffer.from(s, 'utf8')].map((b) => (b <= 0x20 || b >= 0x7f || b === 0x23 || b === 0x3f || b === 0x26 ? `%${b.toString(16).padStart(2, '0').toUpperCase()}` : String.fromCharCode(b))).join('');
}

function encodeComponent(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return percentEncodeRaw(s); // a lone surrogate: its replacement character's bytes
  }
}

/** Header lists: the headers the API reads, with credentials and values it knows, and junk. */
function headerLists(token: fc.Arbitrary<string>, key: string): fc.Arbitrary<Array<[string, string]>> {
  const headerValue = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.oneof(
        token,
        token.map((t) => `Bearer ${t}`),
        fc.constant(`Sentry sentry_version=7, sentry_key=${key}`),
        fc.constantFrom(
          'application/json',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=b',
          'multipart/form-data',
          'application/x-sentry-envelope',
          'text/plain',
          'gzip',
          'deflate',
          'br',
          'identity, gzip',
          'https://app.example',
          'PUT',
        ),
      ),
    },
    { weight: 1, arbitrary: junkString },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) }, // control bytes, NUL, CR included
  );
  const headerName = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        'private-token',
        'authorization',
        'content-type',
        'content-encoding',
        'x-sentry-auth',
        'origin',
        'access-control-request-method',
        'access-control-request-headers',
        'host',
        'transfer-encoding',
        'expect',
        'content-length',
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 20 }) },
  );
  return fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 });
}

/** Bodies of the content type they declare (JSON, form, multipart), for the well-formed requests. */
function typedBodies(json: fc.Arbitrary<unknown>) {
  return fc.oneof(
    json.map((v) => ['application/json', Buffer.from(JSON.stringify(v) ?? 'null')] as const),
    fc
      .record({ active: fc.constantFrom('true', 'false', '1', 'x', ''), integrated: fc.constantFrom('true', 'false', '0', '') }, { requiredKeys: [] })
      .map((f) => ['application/x-www-form-urlencoded', Buffer.from(new URLSearchParams(f).toString())] as const),
    fc.record({ active: fc.constantFrom('true', 'false', 'no'), integrated: fc.constantFrom('true', 'false') }, { requiredKeys: [] }).map(
      (f) =>
        [
          'multipart/form-data; boundary=b',
          Buffer.from(
            `${Object.entries(f)
              .map(([n, v]) => `--b\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
              .join('')}--b--\r\n`,
          ),
        ] as const,
    ),
  );
}

function arbitraries(world: FuzzWorld) {
  const { w, id, key } = world;
  const token = fc.constantFrom(...Object.values(w.tokens), 'glpat-thisIsNotAValidToken0');
  const pid = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(String(id), encodeURIComponent(w.project.path), String(w.publicProject.id), String(w.otherProject.id)) },
    { weight: 2, arbitrary: junkString.map(percentEncodeRaw) },
    { weight: 1, arbitrary: fc.constantFrom('%00', '%FF', 'a%2F%00', '99999999999999', '0', '%2F', 'acme%2Fdocs%00') },
  );
  const route = fc
    .tuple(
      fc.constantFrom(
        '/api/v4/projects/{pid}/error_tracking/settings',
        '/api/v4/projects/{pid}/error_tracking/client_keys',
        '/api/v4/projects/{pid}/error_tracking/client_keys/{kid}',
        '/api/v4/projects/{pid}/error_tracking/errors',
        '/api/v4/projects/{pid}/error_tracking/errors/{kid}',
        '/api/v4/projects/{pid}/error_tracking/errors/{kid}/events',
        '/api/v4/projects/{pid}/error_tracking/errors/{kid}/latest_event',
        '/errortracking/api/v1/projects/api/{pid}/envelope/',
        '/errortracking/api/v1/projects/api/{pid}/store/',
        '/errortracking/api/v1/projects/api/{pid}/envelope',
        '/api/v4/{junk}',
        '/{junk}',
      ),
      pid,
      fc.oneof(fc.nat({ max: 200 }).map(String), junkString.map(percentEncodeRaw)),
      junkString.map(percentEncodeRaw),
    )
    .map(([t, p, kid, junk]) => t.replace('{pid}', p).replace('{kid}', kid).replace('{junk}', junk));
  const queryName = fc.oneof(fc.constantFrom('page', 'per_page', 'private_token', 'access_token', 'sentry_key', 'status', 'sort', 'search', 'active', 'integrated', 'sentry_version'), junkString);
  const queryValue = fc.oneof(token, fc.constant(key), fc.constantFrom('true', 'false', '1', '0', 'yes', 'unresolved', 'last_seen_desc', '100', '-5', '1e9'), junkString);
  const query = fc
    .array(fc.tuple(queryName, queryValue, fc.boolean()), { maxLength: 5 })
    .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([n, v, raw]) => (raw ? `${percentEncodeRaw(n)}=${percentEncodeRaw(v)}` : `${encodeComponent(n)}=${encodeComponent(v)}`)).join('&')}`));
  const headers = headerLists(token, key);
  const json = fc.oneof(fc.record({ active: fc.oneof(fc.boolean(), junkString), integrated: fc.oneof(fc.boolean(), junkString, fc.constant(null)) }, { requiredKeys: [] }), fc.jsonValue({ maxDepth: 4 }));
  const event = fc.tuple(fc.string({ maxLength: 8 }), junkString, junkString).map(([eid, type, value]) => sentryEvent(eid, type, value));
  const itemType = fc.constantFrom('event', 'transaction', 'session', 'client_report', 'attachment', 'nonsense', '');
  const envelopeText = fc.oneof(
    event.map((e) => envelope(e)),
    event.map((e) => envelope(e, { withLength: true, dsn: `https://${key}@localhost/errortracking/api/v1/projects/${id}` })),
    fc.tuple(itemType, fc.integer({ min: -2, max: 300 }), json).map(([type, length, payload]) => `{"event_id":"f"}\n${JSON.stringify({ type, length })}\n${JSON.stringify(payload)}\n`),
    fc.array(fc.tuple(itemType, fc.string({ maxLength: 60 })), { maxLength: 4 }).map((items) => `{}\n${items.map(([t, p]) => `{"type":"${t}"}\n${p}`).join('\n')}`),
  );
  const body = fc.oneof(
    fc.constant(Buffer.alloc(0)),
    json.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
    envelopeText.map((t) => Buffer.from(t)),
    envelopeText.map((t) => gzipSync(t)),
    fc.tuple(envelopeText, fc.nat()).map(([t, cut]) => {
      const gz = gzipSync(t);
      return gz.subarray(0, cut % gz.length); // truncated gzip
    }),
    fc.constant(GZIP_BOMB),
    fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)),
    fc.array(fc.tuple(junkString, junkString), { maxLength: 4 }).map((f) => Buffer.from(`${f.map(([n, v]) => `--b\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`).join('')}--b--\r\n`)),
    fc.array(fc.tuple(junkString, junkString), { maxLength: 4 }).map((f) => Buffer.from(f.map(([n, v]) => `${percentEncodeRaw(n)}=${percentEncodeRaw(v)}`).join('&'))),
  );
  const method = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD') }, { weight: 1, arbitrary: fc.constantFrom('TRACE', 'PROPFIND', 'FOO', 'get') });
  const wild = fc.record({ method, route, query, headers, body }).map(({ method: m, route: r, query: q, headers: h, body: b }): FuzzRequest => ({ method: m, target: r + q, headers: h, body: b }));
  // Well-formed requests with real credentials and a body of the declared type reach the
  // handlers and the database; wild ones test everything before them.
  const goodToken = fc.constantFrom(w.tokens.maintainer, w.tokens.owner, w.tokens.admin, w.tokens.reporter);
  const typedBody = typedBodies(json);
  const rest = fc
    .record({
      method: fc.constantFrom('GET', 'PUT', 'PATCH', 'POST', 'DELETE'),
      path: fc.constantFrom('settings', 'client_keys', 'errors', 'client_keys/1', 'client_keys/999'),
      pid: fc.constantFrom(String(id), encodeURIComponent(w.project.path), String(w.publicProject.id), String(w.otherProject.id)),
      query,
      token: goodToken,
      body: typedBody,
      origin: fc.option(fc.constant('https://app.example'), { nil: undefined }),
    })
    .map(
      ({ method: m, path, pid: p, query: q, token: t, body: typed, origin }): FuzzRequest => ({
        method: m,
        target: `/api/v4/projects/${p}/error_tracking/${path}${q}`,
        headers: [['PRIVATE-TOKEN', t], ['Content-Type', typed[0]], ...(origin ? [['Origin', origin] as [string, string]] : [])],
        body: typed[1],
      }),
    );
  const ingest = fc
    .record({
      kind: fc.constantFrom('envelope', 'store'),
      body: fc.oneof(
        envelopeText.map((t) => Buffer.from(t)),
        json.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
        event.map((e) => Buffer.from(JSON.stringify(e))),
      ),
      encoding: fc.constantFrom('identity', 'identity', 'gzip', 'deflate', 'br'),
      keyIn: fc.constantFrom('query', 'header'),
    })
    .map(({ kind, body: b, encoding, keyIn }): FuzzRequest => {
      const encoded = encoding === 'gzip' ? gzipSync(b) : encoding === 'deflate' ? deflateSync(b) : encoding === 'br' ? brotliCompressSync(b) : b;
      return {
        method: 'POST',
        target: `/errortracking/api/v1/projects/api/${id}/${kind}/${keyIn === 'query' ? `?sentry_key=${key}` : ''}`,
        headers: [['Content-Encoding', encoding], ...(keyIn === 'header' ? [['X-Sentry-Auth', `Sentry sentry_version=7, sentry_key=${key}`] as [string, string]] : [])],
        body: encoded,
      };
    });
  return fc.oneof({ weight: 2, arbitrary: wild }, { weight: 2, arbitrary: rest }, { weight: 2, arbitrary: ingest });
}

/** The generator of requests against `world`. */
function fuzzRequests(world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  return arbitraries(world);
}

/** Sends one request over a fresh connection; resolves with the status line's code (0: closed without an answer). */
function sendRaw(url: string, req: FuzzRequest): Promise<number> {
  const { hostname, port } = new URL(url);
  const head = [`${req.method} ${req.target} HTTP/1.1`, `Host: ${hostname}:${port}`];
  for (const [n, v] of req.headers) if (n.toLowerCase() !== 'content-length' && n.toLowerCase() !== 'host') head.push(`${n}: ${v}`);
  head.push(`Content-Length: ${req.body.length}`, 'Connection: close');
  const bytes = Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), req.body]);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${ANSWER_DEADLINE_MS} ms`));
    }, ANSWER_DEADLINE_MS);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => {}); // a reset after the answer (the server closes early) is fine
    socket.on('close', () => {
      clearTimeout(timer);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(Buffer.concat(chunks).subarray(0, 20).toString('latin1'));
      resolve(m ? Number(m[1]) : 0);
    });
    socket.end(bytes);
  });
}

/** A line the API logs for an internal error (`api: METHOD path: message`). */
const INTERNAL = /^api: [A-Z]+ \//;

/** Checks one request against the property: its status (0: none) and the failure reason, if any. */
async function checkRequest(world: FuzzWorld, req: FuzzRequest): Promise<{ status: number; reason?: string }> {
  const logged = world.api.logs.length;
  let status: number;
  try {
    status = await sendRaw(world.api.url, req);
  } catch (err) {
    return { status: 0, reason: (err as Error).message };
  }
  const internal = world.api.logs.slice(logged).filter((l) => INTERNAL.test(l));
  if (internal.length > 0) return { status, reason: `internal error logged: ${internal[0]}` };
  if (status === 0) return { status, reason: 'connection closed without an answer' };
  if (status >= 500) return { status, reason: `status ${status}` };
  return { status };
}

/** True when the server still answers a plain authenticated request with 200. */
export async function stillServing(world: FuzzWorld): Promise<boolean> {
  const res = await world.api.call('GET', `/api/v4/projects/${world.id}/error_tracking/client_keys`, { headers: world.w.auth('maintainer') });
  return res.status === 200;
}

/** The outcome of a run: cases tried, how many got each status, the failures. */
export interface FuzzResult {
  tried: number;
  statuses: Record<string, number>;
  failures: FuzzFailure[];
}

async function restoreIngestion({ api, id, key }: FuzzWorld): Promise<void> {
  await upsertSetting(api.db, id, true, true);
  await api.db.query('INSERT INTO error_tracking_client_keys (project_id, public_key) VALUES ($1, $2) ON CONFLICT (public_key) DO NOTHING', [id, key]);
}

/** Runs the property for `numRuns` requests (or until `timeLimitMs`). */
export async function fuzzApi(world: FuzzWorld, opts: { seed: number; numRuns: number; timeLimitMs: number }): Promise<FuzzResult> {
  const result: FuzzResult = { tried: 0, statuses: {}, failures: [] };
  const started = Date.now();
  // fc.sample, not fc.assert: every failing case is reported, none is shrunk away or stops the run
  const cases = fc.sample(fuzzRequests(world), { seed: opts.seed, numRuns: opts.numRuns });
  for (const req of cases) {
    if (Date.now() - started > opts.timeLimitMs) break;
    // Generated PUTs, PATCHes and DELETEs turn ingestion off or delete its key; restoring both
    // every few requests keeps the ingestion cases reaching the parsers and the database.
    if (result.tried % 10 === 0) await restoreIngestion(world);
    result.tried++;
    const { status, reason } = await checkRequest(world, req);
    result.statuses[status] = (result.statuses[status] ?? 0) + 1;
    if (reason) result.failures.push({ request: { method: req.method, target: req.target.slice(0, 300), headers: req.headers, bodyBytes: req.body.length }, reason });
  }
  return result;
}
