// The webhook output's falcosidekick settings against real local receivers: method, customheaders
// (file and WEBHOOK_CUSTOMHEADERS), gzip, checkcert against a self-signed HTTPS receiver, mutual
// TLS with a client certificate the receiver verifies; customfields and templatedfields in the body.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gunzipSync } from 'node:zlib';
import type { Alert } from '../../../host/output/alert.js';
import { startTestForwarder } from '../../../support/forwarder.js';
import { makeTestPki, startReceiver, until } from '../receiver.js';

const ALERT: Alert = { timeNs: 1_700_000_000_000_000_000n, rule: 'R', priority: 'Error', source: 'syscall', tags: [], hostname: 'h', message: 'm', outputFields: { 'k8s.ns.name': 'prod', 'proc.name': 'sh' } };

test('PUT with custom headers from the file and WEBHOOK_CUSTOMHEADERS, gzipped body, custom and templated fields', async () => {
  const rx = await startReceiver();
  const t = await startTestForwarder(
    {
      stdout: false,
      customfields: { cluster: 'c1' },
      outputs: { webhook: { address: rx.url, method: 'PUT', customHeaders: { 'X-Team': 'sec' }, gzip: true, templatedfields: { ns: '{{ or (index . "k8s.ns.name") "none" }}', missing: '{{ .nope }}' } } },
    },
    'node-test-1',
    { WEBHOOK_CUSTOMHEADERS: 'Authorization:Bearer abc:def,X-Other:1' },
  );
  try {
    t.fwd.submit(ALERT);
    await until(() => rx.requests.length === 1, 'the request');
  } finally {
    await t.fwd.close();
    await rx.close();
  }
  const r = rx.requests[0]!;
  assert.is(r.method, 'PUT');
  assert.equal([r.headers['x-team'], r.headers.authorization, r.headers['x-other'], r.headers['content-encoding'], r.headers['content-type']], ['sec', 'Bearer abc:def', '1', 'gzip', 'application/json']);
  const body = JSON.parse(gunzipSync(r.body).toString('utf8'));
  assert.equal(body.output_fields, { 'evt.time': 1_700_000_000_000_000_000, cluster: 'c1', 'k8s.ns.name': 'prod', missing: '<no value>', ns: 'prod', 'proc.name': 'sh' });
});

test('HTTPS: a self-signed receiver is refused with checkcert true and accepted with checkcert false', async () => {
  const pki = makeTestPki();
  const rx = await startReceiver({ tls: { cert: pki.read(pki.serverCertFile), key: pki.read(pki.serverKeyFile) } });
  try {
    const strict = await startTestForwarder({ stdout: false, outputs: { webhook: { address: rx.url, retries: 0 } } });
    strict.fwd.submit(ALERT);
    await until(() => strict.logs.length === 1, 'the TLS failure');
    await strict.fwd.close();
    assert.match(strict.logs[0]!, /webhook output failing: .*(CERT|certificate|SELF_SIGNED|UNABLE)/i);
    assert.is(rx.requests.length, 0);
    const lax = await startTestForwarder({ stdout: false, outputs: { webhook: { address: rx.url, checkcert: false } } });
    lax.fwd.submit(ALERT);
    await until(() => rx.requests.length === 1, 'the request');
    await lax.fwd.close();
  } finally {
    await rx.close();
    pki.remove();
  }
});

test('mutual TLS: the receiver requires a client certificate; sent with mutualtls, refused without', async () => {
  const pki = makeTestPki();
  const rx = await startReceiver({ tls: { cert: pki.read(pki.serverCertFile), key: pki.read(pki.serverKeyFile), clientCa: pki.read(pki.caFile) } });
  try {
    const without = await startTestForwarder({ stdout: false, outputs: { webhook: { address: rx.url, retries: 0, mtlscacert: pki.caFile } } });
    without.fwd.submit(ALERT);
    await until(() => without.logs.length === 1, 'the refusal');
    await without.fwd.close();
    assert.is(rx.requests.length, 0);
    const mutual = await startTestForwarder({ stdout: false, outputs: { webhook: { address: rx.url, mutualtls: true } } }, 'node-test-1', {
      MUTUALTLSCLIENT_CERTFILE: pki.clientCertFile,
      MUTUALTLSCLIENT_KEYFILE: pki.clientKeyFile,
      MUTUALTLSCLIENT_CACERTFILE: pki.caFile,
    });
    mutual.fwd.submit(ALERT);
    await until(() => rx.requests.length === 1, 'the request');
    await mutual.fwd.close();
    assert.is(rx.requests[0]!.clientCn, 'rae-client');
  } finally {
    await rx.close();
    pki.remove();
  }
});

test('bad settings are refused at start with the key named', async () => {
  for (const [patch, env, message] of [
    [{ webhook: { address: 'http://x/', method: 'GET' } }, {}, 'config forwarder.outputs.webhook.method: expected one of POST, PUT'],
    [{ webhook: { address: 'http://x/', colour: 1 } }, {}, 'config forwarder.outputs.webhook.colour: unknown key'],
    [{}, { WEBHOOK_ADDRESS: 'http://x/', WEBHOOK_CHECKCERT: 'maybe' }, 'config forwarder.outputs.webhook.checkcert (from WEBHOOK_CHECKCERT): expected true or false'],
    [{ webhook: { address: 'http://x/', mutualtls: true, mtlsclientcert: '/nonexistent/c.pem', mtlsclientkey: '/nonexistent/k.pem' } }, {}, 'forwarder.outputs.webhook.mtlsclientcert: cannot read /nonexistent/c.pem'],
    [{ slack: { webhookurl: 'http://x/', messageformat: '{{ .Rule | upper }}' } }, {}, 'config forwarder.outputs.slack.messageformat: unexpected'],
  ] as const) {
    try {
      const t = await startTestForwarder({ outputs: patch }, 'h', env);
      await t.fwd.close();
      assert.unreachable(`should have been refused: ${JSON.stringify(patch)}`);
    } catch (err) {
      assert.ok((err as Error).message.startsWith(message), (err as Error).message);
    }
  }
});

test.run();
