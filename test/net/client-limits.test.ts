// Client limits of the engine's HTTP servers as configuration (host/net/connections.ts): the
// connections one client address may hold (the one past the bound is closed, the others keep
// being served, and a freed slot is usable again), the time to finish the TLS handshake (a
// connection that sends nothing, or trickles, is closed), the time to send the headers and
// the whole request (a stalled client is answered 408 and disconnected), the forwarder's body
// limit and its TLS. Real servers on 127.0.0.1 port 0; every wait is for the event itself with a
// 20 s deadline, far above the 1-2 s limits configured and below Node's defaults (60 s / 300 s).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'undici';
import { defaultConfig } from '../../host/config/config.js';
import { startForwarderWithFanout } from '../../support/forwarder.js';
import { createMetrics } from '../../host/metrics/index.js';
import { ensureWebhookTls } from '../../host/sources/audit/index.js';
import { eventList, metricValue, startTestWebhook } from '../../support/audit-webhook.js';

const DEADLINE_MS = 20_000;

/** Resolves with what the server sent once it closes the connection (rejects past the deadline). */
function closedBy(sock: Socket, what: string): Promise<string> {
  let got = '';
  sock.on('data', (d: Buffer) => (got += d.toString('latin1')));
  sock.on('error', () => {});
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: still open after ${DEADLINE_MS} ms`)), DEADLINE_MS);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
  });
}

const opened = (sock: Socket) => new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
const event = { auditID: 'a', stage: 'ResponseComplete', verb: 'get', requestURI: '/api', user: { username: 'u' } };

test('webhook: an unauthenticated client past maxConnectionsPerClient is disconnected after its handshake; its other connections are served; a freed slot is usable', async () => {
  const wh = await startTestWebhook(() => 0, { maxConnectionsPerClient: 2, requireClientCert: false });
  const port = wh.webhook.port;
  const tlsClient = async () => {
    const sock = tlsConnect({ host: '127.0.0.1', port, ca: wh.tls.caPem }); // no client certificate
    await new Promise((resolve, reject) => sock.once('secureConnect', resolve).once('error', reject));
    return sock;
  };
  try {
    const a = await tlsClient();
    const b = await tlsClient();
    const aClosed = closedBy(a, 'first');
    const third = await tlsClient();
    assert.is(await closedBy(third, 'third'), '', 'closed without an HTTP byte');
    assert.match(wh.logs.join('\n'), 'webhook: closed a connection from 127.0.0.1: it already has 2 open (maxConnectionsPerClient)');
    a.destroy();
    await aClosed;
    // a slot is free again: a verified request over a new connection is answered
    const ok = await wh.post(eventList([event]));
    assert.is(ok.status, 200, ok.text);
    b.destroy();
  } finally {
    await wh.close();
  }
});

test('webhook: a connection that does not finish its TLS handshake within handshakeTimeoutSeconds is closed, whether it sends nothing or trickles', async () => {
  const wh = await startTestWebhook(() => 0, { handshakeTimeoutSeconds: 1 });
  try {
    const idle = tcpConnect(wh.webhook.port, '127.0.0.1');
    const trickle = tcpConnect(wh.webhook.port, '127.0.0.1');
    await Promise.all([opened(idle), opened(trickle)]);
    const timer = setInterval(() => trickle.writable && trickle.write(Buffer.from([0x16])), 300); // a TLS record type, one byte at a time
    try {
      await Promise.all([closedBy(idle, 'idle'), closedBy(trickle, 'trickle')]);
    } finally {
      clearInterval(timer);
    }
    assert.ok((await metricValue(wh.metrics, 'enginesecurity_engine_webhook_connections_closed_total', { reason: 'handshake' })) >= 2);
    assert.is((await wh.post(eventList([event]))).status, 200, 'the server keeps serving');
  } finally {
    await wh.close();
  }
});

test('webhook: a client that does not finish its headers within headersTimeoutSeconds is answered 408 and disconnected', async () => {
  const wh = await startTestWebhook(() => 0, { headersTimeoutSeconds: 1 });
  try {
    const sock = tlsConnect({ host: '127.0.0.1', port: wh.webhook.port, ca: wh.tls.caPem, cert: wh.tls.clientCertPem, key: wh.tls.clientKeyPem });
    await new Promise((resolve) => sock.once('secureConnect', resolve));
    sock.write('POST /orchestrator-audit HTTP/1.1\r\nHost: x\r\n'); // and nothing more
    assert.match(await closedBy(sock, 'slow headers'), /^HTTP\/1\.1 408 /);
    assert.is((await wh.post(eventList([event]))).status, 200, 'the server keeps serving');
  } finally {
    await wh.close();
  }
});

test('webhook: a client that does not finish its body within requestTimeoutSeconds is answered 408 and disconnected; nothing of it is evaluated', async () => {
  let evaluated = 0;
  const wh = await startTestWebhook((events) => (evaluated += events.length), { requestTimeoutSeconds: 2 });
  try {
    const body = JSON.stringify(eventList([event]));
    const sock = tlsConnect({ host: '127.0.0.1', port: wh.webhook.port, ca: wh.tls.caPem, cert: wh.tls.clientCertPem, key: wh.tls.clientKeyPem });
    await new Promise((resolve) => sock.once('secureConnect', resolve));
    sock.write(`POST /orchestrator-audit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    assert.match(await closedBy(sock, 'slow body'), /^HTTP\/1\.1 408 /);
    await wh.webhook.idle();
    assert.is(evaluated, 0);
    assert.is((await wh.post(eventList([event]))).status, 200, 'the server keeps serving');
  } finally {
    await wh.close();
  }
});

async function forwarder(patch: Partial<ReturnType<typeof defaultConfig>['forwarder']>) {
  const config = defaultConfig({});
  config.forwarder = { ...config.forwarder, address: '127.0.0.1', port: 0, stdout: false, ...patch };
  const logs: string[] = [];
  const fwd = await startForwarderWithFanout({ config: config.forwarder, metrics: createMetrics({ processMetrics: false }), log: (m) => logs.push(m), hostname: 'h', env: {} });
  return { fwd, logs, port: Number(new URL(fwd.url).port) };
}

test('forwarder: forwarder.maxBodyBytes bounds POST / (413 past it, parsed up to it)', async () => {
  const { fwd } = await forwarder({ maxBodyBytes: 1000 });
  try {
    const over = await request(`${fwd.url}/`, { method: 'POST', body: Buffer.alloc(1001, 0x20) });
    assert.is(over.statusCode, 413);
    await over.body.text();
    const at = await request(`${fwd.url}/`, { method: 'POST', body: Buffer.alloc(1000, 0x20) });
    assert.is(at.statusCode, 400, 'read and refused as not an alert, not as too large');
    assert.match(await at.body.text(), 'Please send a valid request body');
  } finally {
    await fwd.close();
  }
});

test('forwarder: maxConnectionsPerClient and headersTimeoutSeconds as the webhook', async () => {
  const { fwd, logs, port } = await forwarder({ maxConnectionsPerClient: 1, headersTimeoutSeconds: 1 });
  try {
    const a = tcpConnect(port, '127.0.0.1');
    await opened(a);
    const aClosed = closedBy(a, 'slow headers');
    a.write('POST / HTTP/1.1\r\nHost: x\r\n');
    const second = tcpConnect(port, '127.0.0.1');
    assert.is(await closedBy(second, 'second'), '');
    assert.match(logs.join('\n'), 'forwarder: closed a connection from 127.0.0.1: it already has 1 open');
    assert.match(await aClosed, /^HTTP\/1\.1 408 /);
    const ping = await request(`${fwd.url}/ping`);
    assert.is(await ping.body.text(), 'pong\n');
  } finally {
    await fwd.close();
  }
});

test('forwarder: a connection that never sends a byte is closed: on HTTP by headersTimeoutSeconds (408), on HTTPS by handshakeTimeoutSeconds', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-fwd-idle-'));
  try {
    const plain = await forwarder({ headersTimeoutSeconds: 1 });
    try {
      const idle = tcpConnect(plain.port, '127.0.0.1');
      await opened(idle);
      assert.match(await closedBy(idle, 'idle on HTTP'), /^HTTP\/1\.1 408 /);
    } finally {
      await plain.fwd.close();
    }
    const made = ensureWebhookTls({ stateDir: dir, webhook: { address: '127.0.0.1', sysPrefix: 'd8', tlsCertFile: '', tlsKeyFile: '', tlsCaFile: '' } });
    if (!made.ok) throw new Error(made.error);
    const secure = await forwarder({ handshakeTimeoutSeconds: 1, tlsCertFile: join(made.tls.dir, 'tls.crt'), tlsKeyFile: join(made.tls.dir, 'tls.key') });
    try {
      const idle = tcpConnect(secure.port, '127.0.0.1');
      await opened(idle);
      assert.is(await closedBy(idle, 'idle on HTTPS'), '');
    } finally {
      await secure.fwd.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('forwarder: with forwarder.tlsCertFile and tlsKeyFile it serves HTTPS only; one file alone is refused at start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-fwd-tls-'));
  try {
    const made = ensureWebhookTls({ stateDir: dir, webhook: { address: '127.0.0.1', sysPrefix: 'd8', tlsCertFile: '', tlsKeyFile: '', tlsCaFile: '' } });
    if (!made.ok) throw new Error(made.error);
    writeFileSync(join(dir, 'tls.crt'), made.tls.certPem);
    writeFileSync(join(dir, 'tls.key'), made.tls.keyPem);
    const { fwd } = await forwarder({ tlsCertFile: join(dir, 'tls.crt'), tlsKeyFile: join(dir, 'tls.key') });
    const agent = new Agent({ connect: { ca: made.tls.caPem } });
    try {
      assert.match(fwd.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const res = await request(`${fwd.url}/ping`, { dispatcher: agent });
      assert.is(await res.body.text(), 'pong\n');
      const plain = await request(fwd.url.replace('https:', 'http:') + '/ping').then(
        (r) => r.statusCode,
        (err: Error) => err.message,
      );
      assert.not.equal(plain, 200);
    } finally {
      await agent.close();
      await fwd.close();
    }
    const alone = await forwarder({ tlsCertFile: join(dir, 'tls.crt') }).then(
      () => 'started',
      (err: Error) => err.message,
    );
    assert.is(alone, 'forwarder: TLS needs both forwarder.tlsCertFile and forwarder.tlsKeyFile');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
