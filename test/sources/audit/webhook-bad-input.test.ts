// Bad input to the audit webhook, as a table: each request gets its status, its {"code"} body and
// exactly one count in enginesecurity_engine_webhook_requests_total{status,reason}, skipped items
// are reported and counted as dropped events, and after every case the server still accepts a
// good batch. The full-queue cases hold the evaluator on a gate so the queue stays full; the
// stopping case (503) sends a request pipelined behind one in flight when close() begins.
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { connect } from 'node:tls';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SourceEvent } from '../../../host/engine/source-event.js';
import { eventList, metricValue, startTestWebhook, type Answer, type TestWebhook } from '../../../support/audit-webhook.js';

const REQUESTS = 'enginesecurity_engine_webhook_requests_total';
const DROPPED = 'enginesecurity_engine_events_dropped_total';
const MiB = 1024 * 1024;

const event = (id: string, extra: Record<string, unknown> = {}) => ({
  auditID: id,
  stage: 'ResponseComplete',
  verb: 'get',
  requestURI: '/api/v1/namespaces/default/pods',
  user: { username: 'alice' },
  stageTimestamp: '2024-05-01T10:00:00.123456Z',
  ...extra,
});
const GOOD = JSON.stringify(eventList([event('good')]));

let evaluated: SourceEvent[] = [];
let wh: TestWebhook;

test.before(async () => {
  wh = await startTestWebhook((events) => {
    evaluated.push(...events);
    return 0;
  });
});
test.after(async () => {
  await wh.close();
});

/** A body of `total` bytes sent in 1 MiB pieces without a Content-Length (chunked). */
function chunks(total: number): Readable {
  const piece = Buffer.alloc(MiB, 0x20);
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < total; sent += MiB) yield piece.subarray(0, Math.min(MiB, total - sent));
    })(),
  );
}

type Case = [name: string, request: Parameters<TestWebhook['send']>[0], status: number, reason: string, check?: (a: Answer) => void];
const cases: Case[] = [
  ['GET', { method: 'GET', contentType: null }, 405, 'method_not_allowed', (a) => assert.is(a.headers.allow, 'POST')],
  ['PUT with a good body', { method: 'PUT', body: GOOD }, 405, 'method_not_allowed'],
  ['DELETE', { method: 'DELETE', contentType: null }, 405, 'method_not_allowed'],
  ['text/plain', { contentType: 'text/plain', body: GOOD }, 415, 'unsupported_media_type'],
  ['no Content-Type', { contentType: null, body: GOOD }, 415, 'unsupported_media_type'],
  ['application/jsonx', { contentType: 'application/jsonx', body: GOOD }, 415, 'unsupported_media_type'],
  ['body over 12 MiB (Content-Length)', { body: Buffer.alloc(12 * MiB + 1, 0x20) }, 413, 'body_too_large'],
  ['body over 12 MiB (chunked)', { body: chunks(12 * MiB + 1) }, 413, 'body_too_large'],
  ['invalid JSON', { body: '{"kind": "EventList", "items": [' }, 400, 'invalid_json', (a) => assert.match(a.text, 'invalid JSON: ')],
  ['invalid UTF-8 in a string', { body: Buffer.concat([Buffer.from(GOOD.slice(0, 40)), Buffer.from([0xc3, 0x28]), Buffer.from(GOOD.slice(40))]) }, 400, 'invalid_json', (a) => assert.match(a.text, 'invalid JSON: not UTF-8 (byte 40)')],
  ['empty body', { body: '' }, 400, 'invalid_json', (a) => assert.match(a.text, 'empty body')],
  ['a JSON array', { body: JSON.stringify([event('a')]) }, 400, 'not_audit_events'],
  ['a JSON string', { body: '"EventList"' }, 400, 'not_audit_events'],
  ['an EventList without items', { body: '{"kind":"EventList","apiVersion":"audit.k8s.io/v1"}' }, 400, 'not_audit_events', (a) => assert.match(a.text, "no 'items' array")],
  ['a Pod', { body: '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}' }, 400, 'not_audit_events'],
  ['another path', { path: '/k8s-audit', body: GOOD }, 404, 'not_found'],
];

for (const [name, req, status, reason, check] of cases) {
  test(`bad input: ${name} -> ${status} ${reason}; the server keeps serving`, async () => {
    const before = await metricValue(wh.metrics, REQUESTS, { status: String(status), reason });
    const a = await wh.send(req);
    assert.is(a.status, status, a.text);
    assert.is((JSON.parse(a.text) as { code: string }).code, reason);
    check?.(a);
    assert.is(await metricValue(wh.metrics, REQUESTS, { status: String(status), reason }), before + 1);
    const ok = await wh.send({ body: GOOD });
    assert.is(ok.status, 200, ok.text);
  });
}

test('bad input: application/json with parameters is JSON', async () => {
  const a = await wh.send({ contentType: 'Application/JSON; charset=utf-8', body: GOOD });
  assert.is(a.status, 200, a.text);
});

test('bad input: an event over 256 KiB is skipped, reported and counted; the others are evaluated', async () => {
  evaluated = [];
  const big = event('big', { annotations: { note: 'x'.repeat(256 * 1024) } });
  const before = await metricValue(wh.metrics, DROPPED, { source: 'k8s_audit', reason: 'too_large' });
  const a = await wh.post(eventList([event('one'), big, event('three')]));
  assert.is(a.status, 200);
  const body = JSON.parse(a.text) as { accepted: number; skipped: Array<{ index: number; code: string; reason: string }> };
  assert.is(body.accepted, 2);
  assert.is(body.skipped.length, 1);
  assert.is(body.skipped[0]!.index, 1);
  assert.is(body.skipped[0]!.code, 'too_large');
  assert.is(body.skipped[0]!.reason, `event larger than maxEventSize: size=${JSON.stringify(big).length}`);
  assert.is(await metricValue(wh.metrics, DROPPED, { source: 'k8s_audit', reason: 'too_large' }), before + 1);
  await wh.webhook.idle();
  assert.is(evaluated.length, 2);
  assert.match(wh.logs.join('\n'), '#1 event larger than maxEventSize');
});

test('bad input: a single Event over 256 KiB is skipped and reported (200, nothing to evaluate)', async () => {
  const a = await wh.post(event('big', { annotations: { note: 'y'.repeat(300 * 1024) } }));
  assert.is(a.status, 200);
  const body = JSON.parse(a.text) as { accepted: number; skipped: Array<{ code: string }> };
  assert.is(body.accepted, 0);
  assert.equal(
    body.skipped.map((s) => s.code),
    ['too_large'],
  );
});

test('bad input: items that are not audit events are skipped, reported and counted as decode errors', async () => {
  const before = await metricValue(wh.metrics, DROPPED, { source: 'k8s_audit', reason: 'decode_error' });
  const a = await wh.post(eventList([1, event('ok'), { kind: 0 }, null]));
  assert.is(a.status, 200);
  const body = JSON.parse(a.text) as { accepted: number; skipped: Array<{ index: number; code: string }> };
  assert.is(body.accepted, 1);
  assert.equal(
    body.skipped.map((s) => [s.index, s.code]),
    [
      [0, 'not_an_event'],
      [2, 'not_an_event'],
      [3, 'not_an_event'],
    ],
  );
  assert.is(await metricValue(wh.metrics, DROPPED, { source: 'k8s_audit', reason: 'decode_error' }), before + 3);
});

test('bad input: a full queue answers 429 with Retry-After, nothing is dropped, and it recovers', async () => {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const got: string[] = [];
  const q = await startTestWebhook(
    async (events) => {
      await gate;
      for (const e of events) got.push(String(e.fields.field({ def: { name: 'ka.auditid' } } as never)));
      return 0;
    },
    { queueSize: 3 },
  );
  try {
    const post = (ids: string[]) => q.post(eventList(ids.map((id) => event(id))));
    assert.is((await post(['a', 'b'])).status, 200); // held at the gate: 2 of 3
    const noRoom = await post(['c', 'd']); // 2 more do not fit
    assert.is(noRoom.status, 429);
    assert.is(noRoom.headers['retry-after'], '1');
    assert.is((JSON.parse(noRoom.text) as { code: string }).code, 'queue_full');
    assert.is((await post(['c'])).status, 200); // exactly full now
    const full = await post(['d']); // refused before the body is read
    assert.is(full.status, 429);
    assert.is(await metricValue(q.metrics, REQUESTS, { status: '429', reason: 'queue_full' }), 2);
    assert.is(await metricValue(q.metrics, 'enginesecurity_engine_source_queue_length', { source: 'k8s_audit' }), 3);
    release();
    await q.webhook.idle();
    assert.is((await post(['d'])).status, 200); // the API server's retry succeeds
    await q.webhook.idle();
    assert.equal(got, ['a', 'b', 'c', 'd']);
    assert.is(await metricValue(q.metrics, 'enginesecurity_engine_events_evaluated_total', { source: 'k8s_audit' }), 4);
    assert.is(await metricValue(q.metrics, 'enginesecurity_engine_source_queue_length', { source: 'k8s_audit' }), 0);
  } finally {
    release();
    await q.close();
  }
});

/** Parses HTTP/1.1 responses written back to back on one connection: status, headers, body. */
function responses(raw: string): Array<{ status: number; headers: Record<string, string>; body: string }> {
  const out: Array<{ status: number; headers: Record<string, string>; body: string }> = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const [statusLine, ...lines] = raw.slice(at, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: raw.slice(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

test('bad input: while the engine is stopping a new request gets 503 with Retry-After (counted); the one in flight is taken and evaluated', async () => {
  const got: string[] = [];
  const q = await startTestWebhook((events) => {
    for (const e of events) got.push(String(e.fields.field({ def: { name: 'ka.auditid' } } as never)));
    return 0;
  });
  const u = new URL(q.webhook.url);
  const body = JSON.stringify(eventList([event('in-flight')]));
  const late = JSON.stringify(eventList([event('late')]));
  const head = (b: string, expect: boolean) => `POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n${expect ? 'Expect: 100-continue\r\n' : ''}\r\n`;
  // One verified TLS connection; the first request's headers ask for 100 Continue, so its answer
  // proves the server has taken the request before close() starts.
  const sock = connect({ host: u.hostname, port: Number(u.port), ca: q.tls.caPem, cert: q.tls.clientCertPem, key: q.tls.clientKeyPem });
  let raw = '';
  let wake: (() => void) | undefined;
  sock.on('data', (d: Buffer) => {
    raw += d.toString();
    wake?.();
  });
  const ended = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  sock.on('error', () => {});
  const until = (ok: () => boolean) =>
    new Promise<void>((resolve) => {
      wake = () => ok() && resolve();
      wake();
    });
  try {
    await new Promise((resolve) => sock.once('secureConnect', resolve));
    sock.write(head(body, true));
    await until(() => raw.includes('100 Continue'));
    const closing = q.webhook.close();
    // The first body, then a second request on the same connection (pipelined) after close() began.
    sock.write(body + head(late, false) + late);
    await ended; // the server ends the connection after answering the late request
    await closing;
    const [cont, first, second] = responses(raw);
    assert.is(cont!.status, 100);
    assert.is(first!.status, 200, first!.body);
    assert.is(second!.status, 503, second!.body);
    assert.is(second!.headers['retry-after'], '1');
    assert.is((JSON.parse(second!.body) as { code: string }).code, 'stopping');
    assert.is(await metricValue(q.metrics, REQUESTS, { status: '503', reason: 'stopping' }), 1);
    assert.equal(got, ['in-flight']); // evaluated before close() resolved; the refused batch is the sender's to resend
  } finally {
    sock.destroy();
    await q.close();
  }
});

test('bad input: a batch larger than the whole queue is still taken into an empty queue', async () => {
  const q = await startTestWebhook(() => 0, { queueSize: 2 });
  try {
    const a = await q.post(eventList(['a', 'b', 'c', 'd', 'e'].map((id) => event(id))));
    assert.is(a.status, 200);
    assert.is((JSON.parse(a.text) as { accepted: number }).accepted, 5);
  } finally {
    await q.close();
  }
});

test('bad input: an evaluator failure drops and counts only that batch', async () => {
  let calls = 0;
  const q = await startTestWebhook(() => {
    if (++calls === 1) throw new Error('trap in batch');
    return 0;
  });
  try {
    assert.is((await q.post(eventList([event('a'), event('b')]))).status, 200);
    await q.webhook.idle();
    assert.is((await q.post(eventList([event('c')]))).status, 200);
    await q.webhook.idle();
    assert.is(await metricValue(q.metrics, DROPPED, { source: 'k8s_audit', reason: 'trap' }), 2);
    assert.is(await metricValue(q.metrics, 'enginesecurity_engine_events_evaluated_total', { source: 'k8s_audit' }), 1);
    assert.match(q.logs.join('\n'), 'evaluation of 2 audit events failed: trap in batch');
  } finally {
    await q.close();
  }
});

test('close: accepted events are evaluated before it resolves; past drainMs the rest is dropped and counted', async () => {
  // Evaluation waits for the test: the first batch is held, so the second stays queued.
  const held: Array<() => void> = [];
  const seen: number[] = [];
  const t = await startTestWebhook((events) => {
    seen.push(events.length);
    return new Promise<number>((resolve) => held.push(() => resolve(events.length)));
  });
  const ev = (name: string) => ({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: name,
    stage: 'ResponseComplete',
    verb: 'get',
    requestURI: '/api/v1/namespaces/d/configmaps/' + name,
    objectRef: { resource: 'configmaps', namespace: 'd', name },
  });
  assert.is((await t.post(eventList([ev('a1'), ev('a2')]))).status, 200);
  assert.is((await t.post(eventList([ev('b1')]))).status, 200);
  while (held.length === 0) await new Promise((r) => setTimeout(r, 1));
  // Unbounded: the close waits for both batches.
  const closing = t.webhook.close();
  held.shift()!();
  while (held.length === 0) await new Promise((r) => setTimeout(r, 1));
  held.shift()!();
  assert.equal(await closing.then((d) => [d.drained, d.abandoned]), [3, 0]);
  assert.equal(seen, [2, 1]);
  await t.close();

  // Bounded: the first batch never ends, so the close gives up after drainMs and drops the second.
  const u = await startTestWebhook(() => new Promise<number>(() => {}));
  assert.is((await u.post(eventList([ev('c1')]))).status, 200);
  assert.is((await u.post(eventList([ev('d1'), ev('d2')]))).status, 200);
  const d = await u.webhook.close(50);
  assert.equal([d.drained, d.abandoned], [0, 2]);
  assert.is(u.webhook.queueLength, 1);
  rmSync(dirname(u.tls.dir), { recursive: true, force: true }); // its helper close() would wait for the endless batch
});

test.run();
