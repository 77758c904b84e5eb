// The Loki output against a local receiver. Debian 12 has no Grafana Loki (its `loki` package is
// a genetic linkage analysis program), so no real Loki runs here: the receiver checks the
// request against the push API's contract (POST /loki/api/v1/push, application/json,
// {"streams":[{"stream":{label:string},"values":[[ns-string, line-string]]}]}, label names
// [a-zA-Z_][a-zA-Z0-9_]*) and the exact bytes falcosidekick would send, tenant and basic auth
// headers included.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../../../support/real-servers.js';
import { SAMPLE, outcomes, startWithOutput } from './sample.js';
import { startTestForwarder } from '../../../support/forwarder.js';
import { lokiBody } from '../../../host/output/destinations/loki.js';
import { alertText } from '../../../host/output/alert.js';

interface Push {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

async function receiver(): Promise<{ url: string; pushes: Push[]; close(): Promise<void> }> {
  const pushes: Push[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      pushes.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(204).end(); // Loki answers a push with 204 No Content
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pushes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The push API's JSON contract, as Loki's distributor decodes it. */
function assertPushShape(body: string): void {
  const doc = JSON.parse(body);
  assert.equal(Object.keys(doc), ['streams']);
  for (const s of doc.streams) {
    assert.equal(Object.keys(s).sort(), ['stream', 'values']);
    for (const [k, v] of Object.entries(s.stream)) {
      assert.match(k, /^[a-zA-Z_][a-zA-Z0-9_]*$/);
      assert.type(v, 'string');
    }
    for (const entry of s.values) {
      assert.is(entry.length, 2);
      assert.match(entry[0], /^\d+$/, 'the timestamp is a string of ns');
      assert.type(entry[1], 'string');
    }
  }
}

test('POST /loki/api/v1/push: falcosidekick labels, the output line, tenant header and basic auth', async () => {
  const rx = await receiver();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('loki', { hostport: rx.url, tenant: 'team-a', user: 'u1', apikey: 'k1', extralabels: 'k8s.ns.name,container.id', customheaders: { 'X-Extra': 'yes' } }));
    fwd.fwd.submit(SAMPLE);
    await waitFor(async () => (await outcomes(fwd, 'loki', 'ok')) === 1, 'the delivery');
    const [p] = rx.pushes as [Push];
    assert.equal([p.method, p.url, p.headers['content-type'], p.headers['x-scope-orgid'], p.headers['x-extra']], ['POST', '/loki/api/v1/push', 'application/json', 'team-a', 'yes']);
    assert.is(p.headers.authorization, `Basic ${Buffer.from('u1:k1').toString('base64')}`);
    assertPushShape(p.body);
    const doc = JSON.parse(p.body);
    assert.equal(doc.streams[0].stream, {
      container_id: 'abc123',
      hostname: 'node-1',
      k8s_ns_name: 'prod',
      priority: 'Critical',
      rule: SAMPLE.rule,
      source: 'syscall',
      tags: 'container,mitre_execution,shell',
    });
    assert.equal(doc.streams[0].values, [['1749208721382570000', alertText(SAMPLE)]]);
    assert.is(p.body, lokiBody(SAMPLE, { labelFields: ['k8s.ns.name', 'container.id'], format: 'text' }, 'unused'));
  } finally {
    await t?.fwd.close();
    await rx.close();
  }
});

test('format json carries the falcosidekick payload as the line; no tenant or auth headers unless set', async () => {
  const rx = await receiver();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('loki', { hostport: rx.url, format: 'json', endpoint: '/custom/push' }));
    fwd.fwd.submit(SAMPLE);
    await waitFor(async () => (await outcomes(fwd, 'loki', 'ok')) === 1, 'the delivery');
    const [p] = rx.pushes as [Push];
    assert.is(p.url, '/custom/push');
    assert.equal([p.headers['x-scope-orgid'], p.headers.authorization], [undefined, undefined]);
    assertPushShape(p.body);
    const line = JSON.parse(JSON.parse(p.body).streams[0].values[0][1]);
    assert.equal([line.rule, line.priority, line.hostname, line.output], [SAMPLE.rule, 'Critical', 'node-1', alertText(SAMPLE)]);
  } finally {
    await t?.fwd.close();
    await rx.close();
  }
});

test("customfields and templatedfields (global and the output's own) become stream labels", async () => {
  const rx = await receiver();
  let t: Awaited<ReturnType<typeof startTestForwarder>> | undefined;
  try {
    const fwd = (t = await startTestForwarder({
      stdout: false,
      customfields: { cluster: 'c1' },
      templatedfields: { 'ns.copy': '{{ index . "k8s.ns.name" }}' },
      outputs: { loki: { hostport: rx.url, customfields: { 'team.name': 'sec' } } },
    }));
    fwd.fwd.submit(SAMPLE);
    await waitFor(async () => (await outcomes(fwd, 'loki', 'ok')) === 1, 'the delivery');
    const stream = JSON.parse((rx.pushes[0] as Push).body).streams[0].stream;
    assert.equal([stream.cluster, stream.ns_copy, stream.team_name], ['c1', 'prod', 'sec']);
    assertPushShape((rx.pushes[0] as Push).body);
  } finally {
    await t?.fwd.close();
    await rx.close();
  }
});

test.run();
