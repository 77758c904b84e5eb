// Fuzz target: the forwarder's HTTP server (POST /, /test, /healthz, /readyz, /ping, /metrics and
// any other path, which falls into POST /), started whole with its stdout output. Each case is one
// request: Falco JSON alerts with random members, random JSON, random bytes, invalid UTF-8 and
// NUL spliced into an alert, bodies a few bytes either side of the body limit, every method on
// every route. Property: the answer is a documented status (200, 400, 413; 503 only from the
// readiness routes, 413 on them only for a body over the limit, never 500), and every accepted
// alert reaches the stdout output (its line count,
// enginesecurity_enginesidekick_inputs_total{status="accepted"} and the 200s agree).
import fc from 'fast-check';
import { request } from 'undici';
import { BODY_LIMIT_BYTES } from '../../host/forwarder/server.js';
import { startTestForwarder } from '../forwarder.js';
import { INVALID_UTF8, runFuzz, type FuzzBounds, type FuzzReport } from './run.js';

interface Req {
  what: string;
  method: string;
  path: string;
  body?: Buffer;
}

const OTHER_ROUTES = ['/healthz', '/readyz', '/ping', '/metrics'];
const alert = fc.record(
  {
    output: fc.string({ maxLength: 40 }),
    priority: fc.constantFrom('Emergency', 'Alert', 'Critical', 'Error', 'Warning', 'Notice', 'Informational', 'Debug', 'warning', 'bogus', ''),
    rule: fc.string({ maxLength: 20 }),
    time: fc.constantFrom('2024-01-02T12:00:00.000000001Z', '2024-01-02T12:00:00+02:00', 'yesterday', '0001-01-01T00:00:00Z'),
    output_fields: fc.dictionary(fc.string({ maxLength: 10 }), fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null), fc.jsonValue({ maxDepth: 2 })), { maxKeys: 5 }),
    source: fc.constantFrom('syscall', 'k8s_audit', ''),
    tags: fc.oneof(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
  },
  { requiredKeys: ['priority', 'rule', 'time', 'output_fields'] },
);
const path = fc.oneof({ weight: 6, arbitrary: fc.constant('/') }, { weight: 1, arbitrary: fc.constantFrom('/test', ...OTHER_ROUTES, '/x', '/%00', '/?a=%ff', '//') });
const method = fc.oneof({ weight: 8, arbitrary: fc.constant('POST') }, { weight: 2, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS') });

const body = fc.oneof(
  { weight: 5, arbitrary: alert.map((a) => ({ what: 'alert', body: Buffer.from(JSON.stringify(a)) })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => ({ what: 'JSON value', body: Buffer.from(JSON.stringify(v) ?? '') })) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((b) => ({ what: 'random bytes', body: Buffer.from(b) })) },
  {
    weight: 3,
    arbitrary: fc.tuple(alert, fc.nat(), fc.constantFrom(...INVALID_UTF8, [0x00], [...Buffer.from('\\u0000')])).map(([a, at, junk]) => {
      const text = Buffer.from(JSON.stringify(a));
      const i = at % (text.length + 1);
      return { what: `alert with bytes ${junk.map((b) => b.toString(16)).join(' ')} at ${i}`, body: Buffer.concat([text.subarray(0, i), Buffer.from(junk), text.subarray(i)]) };
    }),
  },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 1, max: 20000 }).map((d) => ({ what: `nesting ${d}`, body: Buffer.from(`{"priority":"Warning","rule":"r","time":"2024-01-02T12:00:00Z","output_fields":{"a":${'['.repeat(d)}${']'.repeat(d)}}}`) })),
  },
  { weight: 1, arbitrary: fc.integer({ min: -8, max: 8 }).map((delta) => ({ what: `body of BODY_LIMIT${delta >= 0 ? '+' : ''}${delta} bytes`, body: Buffer.alloc(BODY_LIMIT_BYTES + delta, 0x20) })) },
);

/** Every request shape the forwarder's server can be sent. */
const forwarderRequest: fc.Arbitrary<Req> = fc.tuple(method, path, body).map(([m, p, b]) => ({ what: `${m} ${p} ${b.what}`, method: m, path: p, body: m === 'GET' || m === 'HEAD' ? undefined : b.body }));

/** Fuzzes one forwarder within `bounds`. */
export async function fuzzForwarder(bounds: FuzzBounds): Promise<FuzzReport> {
  const t = await startTestForwarder();
  let accepted = 0;
  try {
    const report = await runFuzz(
      'forwarder',
      forwarderRequest,
      async (req) => {
        const res = await request(`${t.fwd.url}${req.path}`, { method: req.method as 'POST', body: req.body, headers: { 'content-type': 'application/json' } });
        const text = await res.body.text();
        const where = `${req.what}: ${res.statusCode} ${text.slice(0, 200)}`;
        const route = req.path.split('?')[0]!;
        const readiness = route === '/healthz' || route === '/readyz';
        // a body over the limit is refused (413) before any route reads it, the readiness routes included
        const tooLarge = (req.body?.length ?? 0) > BODY_LIMIT_BYTES;
        const allowed = readiness ? (tooLarge ? [413] : [200, 503]) : [200, 400, 413];
        if (!allowed.includes(res.statusCode)) throw new Error(`undocumented status; ${where}`);
        const input = !OTHER_ROUTES.includes(route);
        if (input && res.statusCode === 200) {
          if (req.method !== 'POST') throw new Error(`a ${req.method} accepted as an alert; ${where}`);
          accepted++;
        }
        if (input && res.statusCode === 400 && text === '' && req.method !== 'HEAD') throw new Error(`a 400 without a reason; ${where}`);
        // Invalid UTF-8 inside a string is accepted as U+FFFD, as falcosidekick (Go's encoding/json) does.
        await t.waitForLines(accepted, 30_000);
        if (t.lines().length !== accepted) throw new Error(`${accepted} alerts accepted, ${t.lines().length} stdout lines; ${where}`);
      },
      bounds,
    );
    const counted = Number(/enginesecurity_enginesidekick_inputs_total\{[^}]*status="accepted"[^}]*\} (\d+)/.exec((await t.metrics.exposition()).body)?.[1] ?? 0);
    if (report.failures === 0 && counted !== accepted) return { ...report, failures: 1, counterexample: `metrics: ${counted} inputs accepted, ${accepted} answered 200` };
    return { ...report, accepted };
  } finally {
    await t.fwd.close();
  }
}
