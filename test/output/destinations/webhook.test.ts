// The webhook output against a real local HTTP receiver that fails, hangs and recovers:
// retries with backoff, counted failures, a bounded queue that drops and counts, and detections
// that keep flowing to stdout while the receiver is stuck.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestForwarder, metricLines } from '../../../support/forwarder.js';
import type { Alert } from '../../../host/output/alert.js';
import { OUTPUT_DROP_RULE } from '../../../host/output/fanout.js';

type Behaviour = (n: number, req: IncomingMessage, res: ServerResponse) => void;

interface Receiver {
  url: string;
  bodies: string[];
  contentTypes: string[];
  /** Requests held open by a hanging behaviour. */
  held: ServerResponse[];
  behave: Behaviour;
  close(): Promise<void>;
}

async function startReceiver(behave: Behaviour): Promise<Receiver> {
  const r: Receiver = { url: '', bodies: [], contentTypes: [], held: [], behave, close: async () => {} };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      r.bodies.push(body);
      r.contentTypes.push(String(req.headers['content-type']));
      r.behave(r.bodies.length, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/falco`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

const answer = (status: number) => (_n: number, _req: IncomingMessage, res: ServerResponse) => res.writeHead(status).end();

function alert(i: number): Alert {
  return { timeNs: 1_700_000_000_000_000_000n + BigInt(i), rule: `Rule ${i % 3}`, priority: 'Error', source: 'syscall', tags: ['t'], hostname: 'h', message: `event ${i}`, outputFields: { 'proc.pid': i } };
}

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function metric(t: Awaited<ReturnType<typeof startTestForwarder>>, name: string): Promise<string[]> {
  return metricLines((await t.metrics.exposition()).body, name);
}

test('a receiver failing twice then recovering gets the same JSON line three times; retries and one success counted, nothing logged', async () => {
  const rx = await startReceiver((n, req, res) => answer(n <= 2 ? 503 : 200)(n, req, res));
  const t = await startTestForwarder({ webhookUrl: rx.url, webhookRetries: 3, stdout: false });
  try {
    t.fwd.submit(alert(1));
    await until(() => rx.bodies.length === 3, 'three attempts');
    await until(async () => (await metric(t, 'enginesecurity_enginesidekick_outputs_total')).length > 0, 'the outcome');
    assert.equal(new Set(rx.bodies).size, 1);
    assert.is(JSON.parse(rx.bodies[0] as string).output_fields['proc.pid'], 1);
    assert.equal(rx.contentTypes, ['application/json', 'application/json', 'application/json']);
    assert.equal(await metric(t, 'enginesecurity_enginesidekick_output_retries_total'), ['enginesecurity_enginesidekick_output_retries_total{destination="webhook"} 2']);
    assert.equal(await metric(t, 'enginesecurity_enginesidekick_outputs_total'), ['enginesecurity_enginesidekick_outputs_total{destination="webhook",status="ok"} 1']);
    assert.equal(t.logs, [], 'a delivery that succeeded after retries is not a failure');
  } finally {
    await t.fwd.close();
    await rx.close();
  }
});

test('a receiver that keeps failing: every alert counted as an error after its retries, one log line, then recovery', async () => {
  const rx = await startReceiver(answer(500));
  const t = await startTestForwarder({ webhookUrl: rx.url, webhookRetries: 1, stdout: false });
  try {
    t.fwd.submit(alert(1));
    t.fwd.submit(alert(2));
    await until(() => rx.bodies.length === 4, 'two attempts per alert');
    await until(() => t.logs.length === 1, 'the failure log');
    rx.behave = answer(204);
    t.fwd.submit(alert(3));
    await until(() => t.logs.length === 2, 'the recovery log');
    assert.equal((await metric(t, 'enginesecurity_enginesidekick_outputs_total')).sort(), [
      'enginesecurity_enginesidekick_outputs_total{destination="webhook",status="error"} 2',
      'enginesecurity_enginesidekick_outputs_total{destination="webhook",status="ok"} 1',
    ]);
    assert.equal(await metric(t, 'enginesecurity_enginesidekick_output_retries_total'), ['enginesecurity_enginesidekick_output_retries_total{destination="webhook"} 2']);
    assert.equal(t.logs, ['forwarder: webhook output failing: HTTP 500 (alerts are counted in enginesecurity_enginesidekick_outputs_total)', 'forwarder: webhook output recovered']);
  } finally {
    await t.fwd.close();
    await rx.close();
  }
});

test('a stuck receiver never blocks detections: stdout gets every alert, the webhook queue holds its bound and counts drops', async () => {
  const rx = await startReceiver((_n, _req, res) => rx.held.push(res));
  const t = await startTestForwarder({ webhookUrl: rx.url, webhookTimeoutMs: 60_000, webhookRetries: 0, queueSize: 10 });
  try {
    for (let i = 0; i < 100; i++) {
      t.fwd.submit(alert(i));
      await new Promise((r) => setImmediate(r));
    }
    await t.waitForLines(100);
    await until(() => rx.held.length === 1, 'the first request to arrive');
    assert.equal(await metric(t, 'enginesecurity_enginesidekick_output_dropped_total'), ['enginesecurity_enginesidekick_output_dropped_total{destination="webhook"} 89']);
    assert.equal(await metric(t, 'enginesecurity_enginesidekick_output_queue_length'), [
      'enginesecurity_enginesidekick_output_queue_length{destination="stdout"} 0',
      'enginesecurity_enginesidekick_output_queue_length{destination="webhook"} 10',
    ]);
    // The receiver recovers: the held request and the ten queued alerts are delivered in order.
    rx.behave = answer(200);
    for (const res of rx.held.splice(0)) res.writeHead(200).end();
    await until(() => rx.bodies.length === 11, 'the queued alerts');
    assert.equal(
      rx.bodies.map((b) => JSON.parse(b).output_fields['proc.pid']),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
  } finally {
    await t.fwd.close();
    await rx.close();
  }
  // The drops were reported on stdout by the rate-limited internal alert (one now, the rest at close), not sent to the dropping webhook.
  const dropAlerts = t
    .lines()
    .map((l) => JSON.parse(l))
    .filter((a) => a.rule === OUTPUT_DROP_RULE);
  assert.ok(dropAlerts.length >= 1 && dropAlerts.length <= 2, `${dropAlerts.length} drop alerts`);
  assert.is(
    dropAlerts.reduce((n, a) => n + a.output_fields.n_drops, 0),
    89,
  );
  for (const a of dropAlerts) assert.equal([a.source, a.priority, a.output_fields.outputs], ['internal', 'Warning', ['webhook']]);
  assert.equal(await metric(t, 'enginesecurity_enginesidekick_outputs_total'), [
    `enginesecurity_enginesidekick_outputs_total{destination="stdout",status="ok"} ${100 + dropAlerts.length}`,
    'enginesecurity_enginesidekick_outputs_total{destination="webhook",status="ok"} 11',
  ]);
});

test('timeouts and refused connections are failed attempts with a reason', async () => {
  const rx = await startReceiver((_n, _req, res) => rx.held.push(res));
  const t = await startTestForwarder({ webhookUrl: rx.url, webhookTimeoutMs: 200, webhookRetries: 0, stdout: false });
  try {
    t.fwd.submit(alert(1));
    await until(() => t.logs.length === 1, 'the timeout');
    assert.match(t.logs[0] as string, /webhook output failing: no answer within 200 ms/);
  } finally {
    await t.fwd.close();
    await rx.close();
  }
  const closed = await startReceiver(answer(200));
  const url = closed.url;
  await closed.close();
  const t2 = await startTestForwarder({ webhookUrl: url, webhookRetries: 0, stdout: false });
  try {
    t2.fwd.submit(alert(1));
    await until(() => t2.logs.length === 1, 'the refusal');
    assert.match(t2.logs[0] as string, /webhook output failing: ECONNREFUSED/);
    assert.equal(await metric(t2, 'enginesecurity_enginesidekick_outputs_total'), ['enginesecurity_enginesidekick_outputs_total{destination="webhook",status="error"} 1']);
  } finally {
    await t2.fwd.close();
  }
});

test('a webhook URL that is not http(s) is refused at start with the reason', async () => {
  for (const [url, reason] of [
    ['not a url', 'config forwarder.webhookUrl: "not a url" is not a URL'],
    ['ftp://example.org/x', 'config forwarder.webhookUrl: must be http:// or https://, not ftp:'],
  ]) {
    try {
      await startTestForwarder({ webhookUrl: url as string });
      assert.unreachable('should have been refused');
    } catch (err) {
      assert.is((err as Error).message, reason);
    }
  }
});

test.run();
