// A local process must not blind the audit webhook (issue 25 item 1). The API server and every
// process on the node share 127.0.0.1, so bounds per address alone let anyone lock the API server
// out. Here, while 200 plain TCP connections that never start TLS and 200 slowloris clients
// (TLS without a client certificate, then a header byte every 500 ms) hammer the real webhook
// from 127.0.0.1 (another process), each reopened 1 s after it is closed, a client holding the API server's
// certificate (client.crt of the engine's CA, as `rae webhook-config` gives it) posts batches:
// every batch is answered 200 and its alert raised by the real DetectionEngine. The attackers are
// capped meanwhile (counted closes); webhook.requireClientCert is false there, as the attackers
// must get as far as a server without client authentication lets them. By default
// (requireClientCert true) a client without the certificate, or with one from another CA, fails
// the handshake while the API server's posts; with requireClientCert false the one without is served.
// No timed assertion: each batch waits for its answer and the engine's idle queue, with deadlines
// far above what a busy 2-core machine needs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'undici';
import { alertJson } from '../../../host/output/alert.js';
import { DetectionEngine } from '../../../host/runtime/detection-engine.js';
import { ensureWebhookTls } from '../../../host/sources/audit/index.js';
import { corpusPath } from '../../../support/corpus.js';
import { eventList, metricValue, startTestWebhook, type TestWebhook } from './webhook-helpers.js';

const EXEC_EVENT = JSON.parse(readFileSync(new URL('../../fixtures/k8saudit-samples/exec_pod.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const BATCHES = 12;
const ATTACKERS = 200;
/** Generous: undici's own defaults, far above a loaded machine's handshake and answer times. */
const CLIENT_TIMEOUTS = { connect: { timeout: 60_000 }, headersTimeout: 120_000, bodyTimeout: 120_000 };

/**
 * The attackers, in a process of their own (as a local attacker is): `count` plain TCP
 * connections that never send a byte and `count` TLS clients without a certificate that send
 * their request headers one byte every 500 ms, each reopened 1 s after the server closes it.
 */
const ATTACK = `
const net = require('node:net'), tls = require('node:tls'), fs = require('node:fs');
const [port, caFile, count] = process.argv.slice(1);
const ca = fs.readFileSync(caFile, 'utf8');
const reopened = { idle: 0, slow: 0 };
const text = 'POST /orchestrator-audit HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nX-Slow: ' + 'a'.repeat(1000);
function keep(kind, open) {
  const sock = open();
  sock.on('error', () => {});
  sock.on('close', () => { reopened[kind]++; setTimeout(() => keep(kind, open), 1000); });
}
for (let i = 0; i < Number(count); i++) {
  keep('idle', () => net.connect(Number(port), '127.0.0.1'));
  keep('slow', () => {
    const sock = tls.connect({ host: '127.0.0.1', port: Number(port), ca });
    let at = 0;
    const timer = setInterval(() => { if (sock.writable && at < text.length) sock.write(text[at++]); }, 500);
    sock.once('close', () => clearInterval(timer));
    return sock;
  });
}
setInterval(() => process.stdout.write(JSON.stringify(reopened) + '\\n'), 200);
`;

function startAttack(port: number, caFile: string) {
  const child = spawn(process.execPath, ['-e', ATTACK, String(port), caFile, String(ATTACKERS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let last = { idle: 0, slow: 0 };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    const line = d.trim().split('\n').pop();
    if (line) last = JSON.parse(line) as typeof last;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    get reopened() {
      return last;
    },
    async stop() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

async function withEngine(run: (engine: DetectionEngine, alerts: string[]) => Promise<void>) {
  const alerts: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'test-node', onAlert: (a) => alerts.push(alertJson(a)) });
  try {
    const loaded = await engine.load([{ name: 'k8s_audit_rules.yaml', text: readFileSync(corpusPath('k8s_audit_rules.yaml'), 'utf8') }]);
    assert.ok(loaded.swapped);
    await run(engine, alerts);
  } finally {
    await engine.close();
  }
}

/** An undici agent presenting the API server's client certificate (none when `client` is undefined). */
function apiServer(wh: TestWebhook, client: { cert?: string; key?: string } = { cert: wh.tls.clientCertPem, key: wh.tls.clientKeyPem }) {
  return new Agent({ ...CLIENT_TIMEOUTS, connect: { ...CLIENT_TIMEOUTS.connect, ca: wh.tls.caPem, ...client } });
}

async function postWith(agent: Agent, wh: TestWebhook, doc: unknown): Promise<{ status: number; text: string }> {
  const res = await request(wh.webhook.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(doc), dispatcher: agent });
  return { status: res.statusCode, text: await res.body.text() };
}

test('webhook: 200 idle TCP connections and 200 slowloris clients from 127.0.0.1 never starve the client with the API server certificate', async () => {
  await withEngine(async (engine, alerts) => {
    const wh = await startTestWebhook((events) => engine.evaluate(events), { requireClientCert: false });
    const port = wh.webhook.port;
    const attack = startAttack(port, join(wh.tls.dir, 'ca.crt'));
    const agent = apiServer(wh);
    try {
      // the attack is in place: the server has turned connections of 127.0.0.1 away
      while (!wh.logs.some((l) => l.startsWith('webhook: closed a connection from 127.0.0.1'))) await new Promise((r) => setTimeout(r, 100));
      for (let i = 0; i < BATCHES; i++) {
        const before = alerts.length;
        // a new connection each time, as an API server that reconnects
        const fresh = apiServer(wh);
        try {
          const answer = await postWith(i % 2 === 0 ? fresh : agent, wh, eventList([{ ...EXEC_EVENT, auditID: `starvation-${i}` }]));
          assert.is(answer.status, 200, `batch ${i}: ${answer.text}`);
          assert.equal(JSON.parse(answer.text), { accepted: 1, skipped: [] });
        } finally {
          await fresh.destroy();
        }
        await wh.webhook.idle();
        assert.is(alerts.length, before + 1, `batch ${i} alerted`);
        assert.match(alerts[alerts.length - 1]!, 'Attach/Exec Pod');
      }
      // the slowloris clients were capped (maxConnectionsPerClient) and kept coming back
      assert.ok((await metricValue(wh.metrics, 'enginesecurity_engine_webhook_connections_closed_total', { reason: 'client_limit' })) >= 1);
      // the attacker process reports its closes every 200 ms and the batches may end first: wait for its report (wide deadline)
      const deadline = Date.now() + 60_000;
      while (attack.reopened.slow === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.ok(attack.reopened.slow > 0, JSON.stringify(attack.reopened));
    } finally {
      await attack.stop();
      await agent.close();
      await wh.close();
    }
  });
});

test('webhook: by default (requireClientCert), clients without the certificate (or with one of another CA) fail the handshake; the API server posts', async () => {
  const otherDir = mkdtempSync(join(tmpdir(), 'rae-webhook-other-ca-'));
  const wh = await startTestWebhook(() => 0);
  try {
    const other = ensureWebhookTls({ stateDir: otherDir, webhook: { address: '127.0.0.1', sysPrefix: 'd8', tlsCertFile: '', tlsKeyFile: '', tlsCaFile: '' } });
    if (!other.ok) throw new Error(other.error);
    for (const [what, client] of [
      ['no certificate', {}],
      ['a certificate of another CA', { cert: other.tls.clientCertPem, key: other.tls.clientKeyPem }],
    ] as const) {
      const agent = apiServer(wh, client);
      const outcome = await postWith(agent, wh, eventList([EXEC_EVENT])).then(
        (a) => `answered ${a.status}`,
        (err: Error & { code?: string }) => `failed: ${err.code ?? err.message}`,
      );
      await agent.close();
      assert.match(outcome, /^failed:/, what);
    }
    // the server counts both refusals (its side of the handshake may end after the client's: wait for it, within a wide deadline)
    const deadline = Date.now() + 60_000;
    const refused = () => metricValue(wh.metrics, 'enginesecurity_engine_webhook_connections_closed_total', { reason: 'handshake' });
    while ((await refused()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok((await refused()) >= 2, `${await refused()} handshakes refused`);
    const agent = apiServer(wh);
    try {
      assert.is((await postWith(agent, wh, eventList([EXEC_EVENT]))).status, 200);
    } finally {
      await agent.close();
    }
  } finally {
    await wh.close();
    rmSync(otherDir, { recursive: true, force: true });
  }
});

test('webhook: with requireClientCert false, a client without a certificate is served, as an unauthenticated connection', async () => {
  const wh = await startTestWebhook(() => 0, { requireClientCert: false, maxConnectionsPerClient: 1 });
  const agent = apiServer(wh, {});
  try {
    const answer = await postWith(agent, wh, eventList([EXEC_EVENT]));
    assert.is(answer.status, 200, answer.text);
    // capped as unauthenticated: a second connection of the same address while the first is open is closed
    const second = apiServer(wh, {});
    try {
      const outcome = await postWith(second, wh, eventList([EXEC_EVENT])).then(
        (a) => `answered ${a.status}`,
        (err: Error & { code?: string }) => `failed: ${err.code ?? err.message}`,
      );
      assert.match(outcome, /^failed:/);
    } finally {
      await second.destroy();
    }
    assert.ok((await metricValue(wh.metrics, 'enginesecurity_engine_webhook_connections_closed_total', { reason: 'client_limit' })) >= 1);
  } finally {
    await agent.close();
    await wh.close();
  }
});

test.run();
