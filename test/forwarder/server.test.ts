// The forwarder's HTTP server on a real port: /test, POST / with falcosidekick's checks and
// answers, health endpoints, /metrics, and the alerts reaching the stdout output.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'undici';
import { createMetrics } from '../../host/metrics/index.js';
import { startServer, type Readiness } from '../../host/forwarder/server.js';
import { metricLines, startTestForwarder } from '../../support/forwarder.js';

const EVENTS = 'enginesecurity_enginesidekick_engine_events_total';

async function call(url: string, method: string, body?: string, headers: Record<string, string> = {}) {
  const res = await request(url, { method: method as 'POST', body, headers });
  return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), text: await res.body.text() };
}

const GOOD = {
  hostname: 'falco-host',
  output: '12:00:00.000000001: Critical Shell in container (user=root)',
  output_fields: { 'evt.time': 1704196800000000001n, 'user.name': 'root', 'proc.pid': 42 },
  priority: 'Critical',
  rule: 'Terminal shell in container',
  source: 'syscall',
  tags: ['shell', 'container'],
  time: '2024-01-02T12:00:00.000000001Z',
};
const goodBody = (patch: Record<string, unknown> = {}) => JSON.stringify({ ...GOOD, ...patch }, (_k, v) => (typeof v === 'bigint' ? `@@${v}@@` : v)).replace(/"@@(\d+)@@"/g, '$1');

test('POST /test: 200 empty; one Test rule alert on stdout and in the events counter', async () => {
  const t = await startTestForwarder();
  try {
    const r = await call(`${t.fwd.url}/test`, 'POST', undefined, { 'content-type': 'application/json', accept: 'application/json' });
    assert.equal([r.status, r.text], [200, '']);
    const [line] = await t.waitForLines(1);
    const alert = JSON.parse(line as string);
    assert.equal([alert.rule, alert.priority, alert.source, alert.hostname, alert.tags, alert.output_fields['proc.name']], ['Test rule', 'Debug', 'internal', 'node-test-1', ['example', 'test'], 'enginesidekick']);
    assert.match(alert.output, /^\d{2}:\d{2}:\d{2}\.\d{9}: Debug This is a test from the runtime-audit-engine event forwarder$/);
    const m = await call(`${t.fwd.url}/metrics`, 'GET');
    assert.equal(metricLines(m.text, EVENTS), [`${EVENTS}{hostname="node-test-1",priority="1",priority_raw="debug",rule="Test rule",source="internal"} 1`]);
    assert.equal(metricLines(m.text, 'enginesecurity_enginesidekick_inputs_total'), ['enginesecurity_enginesidekick_inputs_total{source="requests",status="accepted"} 1']);
  } finally {
    await t.fwd.close();
  }
});

test('POST /: a Falco alert is accepted (any or no Content-Type) and written to stdout as the same line', async () => {
  const t = await startTestForwarder();
  const savedTz = process.env.TZ;
  process.env.TZ = 'UTC';
  try {
    const body = goodBody();
    for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'text/plain' }, {}] as Array<Record<string, string>>) {
      const r = await call(`${t.fwd.url}/`, 'POST', body, headers);
      assert.equal([r.status, r.text], [200, ''], JSON.stringify(headers));
    }
    const lines = await t.waitForLines(3);
    const want =
      '{"hostname":"falco-host","output":"12:00:00.000000001: Critical Shell in container (user=root)","output_fields":{"evt.time":1704196800000000001,"proc.pid":42,"user.name":"root"},"priority":"Critical","rule":"Terminal shell in container","source":"syscall","tags":["container","shell"],"time":"2024-01-02T12:00:00.000000001Z"}';
    assert.equal(lines, [want, want, want]);
  } finally {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
    await t.fwd.close();
  }
});

const BAD: Array<[string, string, string]> = [
  ['not JSON', 'hello', 'invalid JSON: unexpected character "h" at offset 0'],
  ['empty body', '', 'empty body'],
  ['JSON array', `[${goodBody()}]`, 'body must be a JSON object'],
  ['missing priority', goodBody({ priority: undefined }), 'priority is missing'],
  ['unknown priority', goodBody({ priority: 'severe' }), 'priority "severe" is not one of Emergency, Alert, Critical, Error, Warning, Notice, Informational, Debug'],
  ['missing rule', goodBody({ rule: undefined }), 'rule is missing'],
  ['missing time', goodBody({ time: undefined }), 'time is missing'],
  ['time without zone', goodBody({ time: '2024-01-02 12:00:00' }), 'time "2024-01-02 12:00:00" is not an RFC 3339 date-time with a zone'],
  ['missing output_fields', goodBody({ output_fields: undefined }), 'output_fields is missing or empty'],
  ['empty output_fields', goodBody({ output_fields: {} }), 'output_fields is missing or empty'],
];

test('POST / with bad bodies: 400 with the reason, plain text, nothing forwarded, rejections counted', async () => {
  const t = await startTestForwarder();
  try {
    for (const [name, body, reason] of BAD) {
      const r = await call(`${t.fwd.url}/`, 'POST', body, { 'content-type': 'application/json' });
      assert.equal([r.status, r.text], [400, `Please send a valid request body: ${reason}\n`], name);
      assert.is(r.type, 'text/plain; charset=utf-8', name);
    }
    const m = await call(`${t.fwd.url}/metrics`, 'GET');
    assert.equal(metricLines(m.text, 'enginesecurity_enginesidekick_inputs_total'), [`enginesecurity_enginesidekick_inputs_total{source="requests",status="rejected"} ${BAD.length}`]);
    assert.equal(metricLines(m.text, EVENTS), []);
    assert.equal(t.lines(), []);
  } finally {
    await t.fwd.close();
  }
});

test('wrong method on / and /test: 400 "Please send with post http method"; unknown paths fall into /', async () => {
  const t = await startTestForwarder();
  try {
    for (const [method, path] of [
      ['GET', '/'],
      ['PUT', '/'],
      ['GET', '/test'],
      ['DELETE', '/test'],
      ['GET', '/no/such/path'],
    ]) {
      const r = await call(`${t.fwd.url}${path}`, method as string);
      assert.equal([r.status, r.text], [400, 'Please send with post http method\n'], `${method} ${path}`);
    }
    const r = await call(`${t.fwd.url}/no/such/path`, 'POST', goodBody());
    assert.equal([r.status, r.text], [200, '']);
    await t.waitForLines(1);
  } finally {
    await t.fwd.close();
  }
});

test('/healthz and /ping answer any method exactly as falcosidekick', async () => {
  const t = await startTestForwarder();
  try {
    for (const method of ['GET', 'POST']) {
      const h = await call(`${t.fwd.url}/healthz`, method);
      assert.equal([h.status, h.type, h.text], [200, 'application/json', '{"status": "ok"}']);
      const p = await call(`${t.fwd.url}/ping`, method);
      assert.equal([p.status, p.type, p.text], [200, 'text/plain; charset=utf-8', 'pong\n']);
    }
  } finally {
    await t.fwd.close();
  }
});

test('/healthz answers 503 with the components while one is not up; /readyz always has them', async () => {
  let readiness: Readiness = {
    ready: false,
    components: [
      { name: 'forwarder', state: 'up' },
      { name: 'webhook', state: 'failed', error: 'listen EADDRINUSE: address already in use 127.0.0.1:9765', attempts: 2, retryInMs: 2000 },
      { name: 'syscall', state: 'off', reason: 'EPERM: needs root' },
    ],
  };
  const srv = await startServer({ metrics: createMetrics({ processMetrics: false }), accept: () => {}, hostname: 'h', log: () => {}, readiness: () => readiness }, '127.0.0.1', 0);
  try {
    const notReady = JSON.stringify({ status: 'not ready', components: readiness.components });
    for (const method of ['GET', 'POST']) {
      for (const path of ['/healthz', '/readyz']) {
        const r = await call(`${srv.url}${path}`, method);
        assert.equal([r.status, r.type, r.text], [503, 'application/json', notReady], `${method} ${path}`);
      }
    }
    readiness = {
      ready: true,
      components: [
        { name: 'forwarder', state: 'up' },
        { name: 'webhook', state: 'up' },
      ],
    };
    const h = await call(`${srv.url}/healthz`, 'GET');
    assert.equal([h.status, h.text], [200, '{"status": "ok"}']);
    const r = await call(`${srv.url}/readyz`, 'GET');
    assert.equal([r.status, r.text], [200, JSON.stringify({ status: 'ok', components: readiness.components })]);
  } finally {
    await srv.close();
  }
});

test('normalisation: "Test rule" from a client becomes source internal; a missing source becomes "syscalls"', async () => {
  const t = await startTestForwarder();
  try {
    await call(`${t.fwd.url}/`, 'POST', goodBody({ rule: 'Test rule', priority: 'Debug' }));
    await call(`${t.fwd.url}/`, 'POST', goodBody({ source: undefined }));
    const lines = (await t.waitForLines(2)).map((l) => JSON.parse(l).source);
    assert.equal(lines, ['internal', 'syscalls']);
    const m = await call(`${t.fwd.url}/metrics`, 'GET');
    assert.equal(metricLines(m.text, EVENTS).sort(), [
      `${EVENTS}{hostname="falco-host",priority="1",priority_raw="debug",rule="Test rule",source="internal"} 1`,
      `${EVENTS}{hostname="falco-host",priority="6",priority_raw="critical",rule="Terminal shell in container",source="syscalls"} 1`,
    ]);
  } finally {
    await t.fwd.close();
  }
});

test('a payload over 4096 characters has string fields over 512 characters cut to 507 + "[...]"', async () => {
  const t = await startTestForwarder();
  try {
    const long = 'A'.repeat(5000);
    await call(`${t.fwd.url}/`, 'POST', goodBody({ output: `12:00:00.000000001: Critical cmd=${long}`, output_fields: { 'proc.cmdline': long, short: 'x' } }));
    const alert = JSON.parse((await t.waitForLines(1))[0] as string);
    assert.is(alert.output_fields['proc.cmdline'], `${'A'.repeat(507)}[...]`);
    assert.is(alert.output_fields.short, 'x');
    assert.ok(alert.output.endsWith(`cmd=${'A'.repeat(507)}[...]`));
  } finally {
    await t.fwd.close();
  }
});

test('a body over the limit is refused with 413 and a one-line reason, no stack', async () => {
  const t = await startTestForwarder();
  try {
    const r = await call(`${t.fwd.url}/`, 'POST', 'x'.repeat(5 * 1024 * 1024), { 'content-type': 'application/json' });
    assert.is(r.status, 413);
    assert.is(r.text, 'Request body is too large\n');
  } finally {
    await t.fwd.close();
  }
});

test('debugLogging logs each payload (never on stdout); forwarder.enabled=false keeps the outputs without a server', async () => {
  const t = await startTestForwarder({ debugLogging: true });
  try {
    await call(`${t.fwd.url}/test`, 'POST');
    const [line] = await t.waitForLines(1);
    assert.equal(t.logs, [`[DEBUG] : forwarder payload : ${line}`]);
  } finally {
    await t.fwd.close();
  }
  const off = await startTestForwarder({ enabled: false });
  try {
    assert.is(off.fwd.url, '');
    off.fwd.submit({ timeNs: 1n, rule: 'r', priority: 'Alert', source: 'syscall', tags: [], hostname: 'h', message: 'm', outputFields: { a: 1 } });
    const [line] = await off.waitForLines(1);
    assert.is(JSON.parse(line as string).rule, 'r');
  } finally {
    await off.fwd.close();
  }
});

test.run();
