// Fuzz target: the audit webhook over its real TLS server (default limits: 12 MiB bodies, 256 KiB
// events, depth 300). Each case is one request: EventLists of events with random members, random
// JSON, random bytes, JSON with invalid UTF-8 or NUL spliced in, deep nesting, events and bodies
// a few bytes either side of the caps, other methods, paths and media types. Property: the
// answer is one of the documented statuses (never 500; a body that is not UTF-8 is not JSON) with a {"code"} or {"accepted"} body that
// accounts for every item; once the queue is idle every accepted event has been evaluated (the
// evaluate callback and enginesecurity_engine_events_evaluated_total agree with the sum of
// `accepted`), and no request was counted as status 500.
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { eventList, metricValue, startTestWebhook } from '../audit-webhook.js';
import { INVALID_UTF8, runFuzz, type FuzzBounds, type FuzzReport } from './run.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const MAX_BODY = 12 * MiB;
const MAX_EVENT = 256 * KiB;
/** The statuses docs/webhook.md documents (500 is not among them). */
const DOCUMENTED = new Set([200, 400, 404, 405, 413, 415, 429]);

interface Req {
  what: string;
  method?: string;
  path?: string;
  contentType?: string | null;
  body: Buffer;
  /** Items of the EventList sent, when the body is one (each is accepted or skipped). */
  items?: number;
}

const event = (id: string, extra: Record<string, unknown>) => ({ auditID: id, stage: 'ResponseComplete', verb: 'get', requestURI: '/api/v1/pods', user: { username: 'u' }, ...extra });
const member = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
const anEvent = fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), member).map(([id, extra]) => event(id, extra));
const item = fc.oneof({ weight: 5, arbitrary: anEvent }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });

const list = fc.array(item, { maxLength: 12 }).map((items): Req => ({ what: 'EventList', body: Buffer.from(JSON.stringify(eventList(items))), items: items.length }));
const single = anEvent.map((e): Req => ({ what: 'Event', body: Buffer.from(JSON.stringify({ kind: 'Event', apiVersion: 'audit.k8s.io/v1', ...e })), items: 1 }));
const json = fc.jsonValue({ maxDepth: 4 }).map((v): Req => ({ what: 'JSON value', body: Buffer.from(JSON.stringify(v) ?? 'null') }));
const bytes = fc.uint8Array({ maxLength: 4096 }).map((b): Req => ({ what: 'random bytes', body: Buffer.from(b) }));
/** A valid EventList with invalid UTF-8, a NUL byte or an escaped NUL spliced in at a random place. */
const spliced = fc.tuple(fc.array(anEvent, { minLength: 1, maxLength: 4 }), fc.nat(), fc.constantFrom(...INVALID_UTF8, [0x00], [...Buffer.from('\\u0000')])).map(([items, at, junk]): Req => {
  const text = Buffer.from(JSON.stringify(eventList(items)));
  const i = at % (text.length + 1);
  return { what: `EventList with bytes ${junk.map((b) => b.toString(16)).join(' ')} at ${i}`, body: Buffer.concat([text.subarray(0, i), Buffer.from(junk), text.subarray(i)]) };
});
/** An event holding `depth` nested arrays or objects, or a bare document of brackets. */
const deep = fc.tuple(fc.integer({ min: 1, max: 5000 }), fc.boolean(), fc.boolean()).map(([depth, arrays, bare]): Req => {
  const [open, close] = arrays ? ['[', ']'] : ['{"a":', '}'];
  const nested = `${open.repeat(depth)}1${close.repeat(depth)}`;
  if (bare) return { what: `bare nesting ${depth}`, body: Buffer.from(nested) };
  return { what: `event nested ${depth}`, body: Buffer.from(`{"kind":"EventList","items":[{"auditID":"d","stage":"ResponseComplete","deep":${nested}}]}`), items: 1 };
});
/** One event of exactly MAX_EVENT + delta bytes between two small ones. */
const nearEventCap = fc.integer({ min: -48, max: 48 }).map((delta): Req => {
  const shell = JSON.stringify(event('big', { pad: '' }));
  const big = shell.replace('"pad":""', `"pad":"${'x'.repeat(MAX_EVENT + delta - shell.length)}"`);
  const body = `{"kind":"EventList","items":[${JSON.stringify(event('a', {}))},${big},${JSON.stringify(event('b', {}))}]}`;
  return { what: `event of MAX_EVENT${delta >= 0 ? '+' : ''}${delta} bytes`, body: Buffer.from(body), items: 3 };
});
/** A body of exactly MAX_BODY + delta bytes: events of 200 KiB plus padding whitespace. */
const nearBodyCap = fc.integer({ min: -8, max: 8 }).map((delta): Req => {
  const one = JSON.stringify(event('p', { pad: 'y'.repeat(200 * KiB) }));
  const n = Math.floor((MAX_BODY - 64) / (one.length + 1));
  const text = `{"kind":"EventList","items":[${Array(n).fill(one).join(',')}]}`;
  const body = Buffer.alloc(MAX_BODY + delta, 0x20);
  body.write(text);
  return { what: `body of MAX_BODY${delta >= 0 ? '+' : ''}${delta} bytes`, body, items: n };
});
const otherRequest = fc
  .tuple(
    fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'POST'),
    fc.constantFrom('/orchestrator-audit', '/', '/orchestrator-audit/x', '/%00', '/orchestrator-audit?x=%ff'),
    fc.constantFrom('application/json', 'text/plain', null, 'application/json; charset=latin1', 'multipart/form-data'),
    fc.uint8Array({ maxLength: 64 }),
  )
  .map(([method, path, contentType, b]): Req => ({ what: `${method} ${path} ${contentType}`, method, path, contentType, body: Buffer.from(b) }));

/** Every request shape, the expensive ones (bodies near 12 MiB) rarely. */
const webhookRequest: fc.Arbitrary<Req> = fc.oneof(
  { weight: 6, arbitrary: list },
  { weight: 2, arbitrary: single },
  { weight: 2, arbitrary: json },
  { weight: 3, arbitrary: bytes },
  { weight: 4, arbitrary: spliced },
  { weight: 3, arbitrary: deep },
  { weight: 2, arbitrary: nearEventCap },
  { weight: 1, arbitrary: nearBodyCap },
  { weight: 3, arbitrary: otherRequest },
);

/** Fuzzes one webhook within `bounds`. */
export async function fuzzWebhook(bounds: FuzzBounds): Promise<FuzzReport> {
  let evaluated = 0;
  const wh = await startTestWebhook((events) => {
    evaluated += events.length;
    return 0;
  });
  let accepted = 0;
  try {
    const report = await runFuzz(
      'webhook',
      webhookRequest,
      async (req) => {
        const a = await wh.send({ method: req.method, path: req.path, contentType: req.contentType === undefined ? 'application/json' : req.contentType, body: req.method === 'GET' ? undefined : req.body });
        const where = `${req.what}: ${a.status} ${a.text.slice(0, 200)}`;
        if (!DOCUMENTED.has(a.status)) throw new Error(`undocumented status; ${where}`);
        const body = JSON.parse(a.text) as { code?: string; accepted?: number; skipped?: unknown[] };
        if (a.status === 200) {
          if (!isUtf8(req.body)) throw new Error(`a body that is not UTF-8 (so not JSON, RFC 8259 §8.1) accepted; ${where}`);
          if (typeof body.accepted !== 'number' || !Array.isArray(body.skipped)) throw new Error(`a 200 without accepted/skipped; ${where}`);
          if (req.items !== undefined && body.accepted + body.skipped.length !== req.items) throw new Error(`${req.items} items sent, ${body.accepted} accepted + ${body.skipped.length} skipped; ${where}`);
          accepted += body.accepted;
        } else if (typeof body.code !== 'string') throw new Error(`a refusal without a code; ${where}`);
        await wh.webhook.idle();
        if (evaluated !== accepted) throw new Error(`${accepted} events accepted, ${evaluated} evaluated; ${where}`);
      },
      bounds,
    );
    const counted = await metricValue(wh.metrics, 'enginesecurity_engine_events_evaluated_total', { source: 'k8s_audit' });
    const internal = await metricValue(wh.metrics, 'enginesecurity_engine_webhook_requests_total', { status: '500', reason: 'internal' });
    if (report.failures === 0 && (counted !== accepted || internal !== 0)) {
      return { ...report, failures: 1, counterexample: `metrics: ${counted} evaluated for ${accepted} accepted, ${internal} answered 500` };
    }
    return { ...report, accepted };
  } finally {
    await wh.close();
  }
}
