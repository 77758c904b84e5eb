// The audit webhook as a user meets it: `rae webhook-config` prints the API server's kubeconfig
// (exact shape, CA data = the generated ca.crt, client certificate and key = client.crt and
// client.key), then `rae run` serves the webhook and curl, with that CA and the kubeconfig's
// client certificate, posts the whole audit corpus as one EventList as docs/webhook.md shows; the
// alert lines on stdout equal `rae replay`'s for the same events; curl without the client
// certificate is refused (webhook.requireClientCert is true by default), and SIGTERM stops the
// engine cleanly.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse as parseYaml } from 'yaml';
import { replayAlerts } from '../../host/cli/replay.js';
import { builtinRulesFiles } from '../../host/engine/builtin.js';
import { loadRules } from '../../host/engine/index.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { K8SAUDIT_SAMPLES } from '../../support/corpus.js';

const SAMPLES = K8SAUDIT_SAMPLES;
const tmp = mkdtempSync(join(tmpdir(), 'rae-webhook-cli-'));
const stateDir = join(tmp, 'state');
const env = { ...process.env, TZ: 'UTC' };

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

async function curl(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('curl', ['-sS', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test('webhook cli: webhook-config, rae run, curl with the CA, alerts equal rae replay, clean stop', async () => {
  const port = await freePort();
  const cfg = join(tmp, 'run.yaml');
  writeFileSync(cfg, `hostname: test-node\nrules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  enabled: false\napi:\n  enabled: false\nwebhook:\n  port: ${port}\n`);

  // 1. The kubeconfig for --audit-webhook-config-file.
  const wc = spawnSync(process.execPath, ['bin/rae.js', 'webhook-config', '--config', cfg, '--state-dir', stateDir], { encoding: 'utf8', env });
  assert.is(wc.status, 0, wc.stderr);
  const caPem = readFileSync(join(stateDir, 'webhook-tls', 'ca.crt'), 'utf8');
  const b64File = (name: string) => readFileSync(join(stateDir, 'webhook-tls', name)).toString('base64');
  const server = `https://127.0.0.1:${port}/orchestrator-audit`;
  assert.equal(parseYaml(wc.stdout), {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'webhook', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'webhook', user: { 'client-certificate-data': b64File('client.crt'), 'client-key-data': b64File('client.key') } }],
    contexts: [{ name: 'webhook', context: { cluster: 'webhook', user: 'webhook' } }],
    'current-context': 'webhook',
  });
  const kubeconfig = parseYaml(wc.stdout) as {
    clusters: Array<{ cluster: { server: string; 'certificate-authority-data': string } }>;
    users: Array<{ user: { 'client-certificate-data': string; 'client-key-data': string } }>;
  };
  const caFile = join(tmp, 'ca-from-kubeconfig.crt');
  writeFileSync(caFile, Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64'));
  const certFile = join(tmp, 'client-from-kubeconfig.crt');
  const keyFile = join(tmp, 'client-from-kubeconfig.key');
  writeFileSync(certFile, Buffer.from(kubeconfig.users[0]!.user['client-certificate-data'], 'base64'));
  writeFileSync(keyFile, Buffer.from(kubeconfig.users[0]!.user['client-key-data'], 'base64'), { mode: 0o600 });

  // 2. The engine.
  const child = spawn(process.execPath, ['bin/rae.js', 'run', '--config', cfg, '--state-dir', stateDir], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line in 300 s:\n${err}`)), 300_000);
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (/\bready\b/.test(err)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', () => reject(new Error(`rae run exited:\n${err}`)));
    });
    assert.match(err, `run: webhook listening on ${server}`);

    // 3. curl as docs/webhook.md shows, with the whole corpus as one EventList.
    const files = readdirSync(SAMPLES)
      .filter((f) => f.endsWith('.json'))
      .sort();
    const texts = files.map((f) => readFileSync(join(SAMPLES, f), 'utf8'));
    const events = texts.flatMap((t) => readReplayInput(t, 'audit').events);
    const items = texts.flatMap((t) => {
      try {
        return [JSON.parse(t) as unknown];
      } catch {
        return t
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as unknown);
      }
    });
    const listFile = join(tmp, 'eventlist.json');
    writeFileSync(listFile, JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items }));
    const posted = await curl(['--cacert', caFile, '--cert', certFile, '--key', keyFile, '-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', `@${listFile}`, kubeconfig.clusters[0]!.cluster.server]);
    assert.is(posted.code, 0, posted.stderr);
    const answer = JSON.parse(posted.stdout) as { accepted: number; skipped: unknown[] };
    assert.is(answer.accepted, events.length);

    const rules = loadRules(builtinRulesFiles(['orchestrator-audit']).files);
    const expected = replayAlerts(rules.ruleset, events, { ruleMatching: 'first', minPriority: 'Debug', hostname: 'test-node' }).lines;
    assert.ok(expected.length >= 20, `${expected.length} expected alerts`);
    const deadline = Date.now() + 300_000;
    while (out.split('\n').length - 1 < expected.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(out.split('\n').slice(0, -1), expected);

    // Without the kubeconfig's client certificate, the CA alone is not enough: the handshake is refused.
    const emptyList = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: [] });
    const caOnly = await curl(['--cacert', caFile, '-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', emptyList, server]);
    assert.is.not(caOnly.code, 0, caOnly.stdout);
    assert.match(caOnly.stderr, 'certificate required');

    // Without the CA, curl refuses the server (exit 60: peer certificate cannot be authenticated).
    const bare = await curl(['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', '{}', server]);
    assert.is(bare.code, 60, bare.stderr);
  } finally {
    child.kill('SIGTERM');
  }
  assert.is(await exited, 0, err);
  assert.match(err, 'run: stopped');
});

test("webhook cli: with a configured client CA, webhook-config prints the configured pair (deploy/configure.sh's webhook-config.yaml); without the pair, or with a bad path, exit 1 naming the key", () => {
  const conf = spawnSync('bash', ['deploy/configure.sh', 'registry.example/rae:1', '--out', join(tmp, 'site')], { encoding: 'utf8' });
  assert.is(conf.status, 0, conf.stderr);
  const tls = join(tmp, 'site', 'tls');
  const wc = spawnSync(process.execPath, ['bin/rae.js', 'webhook-config', '--config', join(tmp, 'site', 'webhook-config.yaml')], { encoding: 'utf8', env });
  assert.is(wc.status, 0, wc.stderr);
  const b64File = (name: string) => readFileSync(join(tls, name)).toString('base64');
  assert.equal(parseYaml(wc.stdout), {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'webhook', cluster: { server: 'https://runtime-audit-engine-webhook.d8-runtime-audit-engine.svc:9765/orchestrator-audit', 'certificate-authority-data': b64File('ca.crt') } }],
    users: [{ name: 'webhook', user: { 'client-certificate-data': b64File('client.crt'), 'client-key-data': b64File('client.key') } }],
    contexts: [{ name: 'webhook', context: { cluster: 'webhook', user: 'webhook' } }],
    'current-context': 'webhook',
  });
  const run = (yaml: string) => {
    const cfg = join(tmp, 'client-ca.yaml');
    writeFileSync(cfg, yaml);
    return spawnSync(process.execPath, ['bin/rae.js', 'webhook-config', '--config', cfg, '--state-dir', join(tmp, 'client-ca-state')], { encoding: 'utf8', env });
  };
  const caOnly = run(`webhook:\n  clientCaFile: ${tls}/ca.crt\n`);
  assert.is(caOnly.status, 1);
  assert.is(caOnly.stdout, '');
  assert.match(caOnly.stderr, `webhook-config: webhook.clientCaFile ${tls}/ca.crt is set without webhook.clientCertFile and webhook.clientKeyFile`);
  const badPath = run(`webhook:\n  clientCaFile: ${tls}/ca.crt\n  clientCertFile: ${tls}/missing.crt\n  clientKeyFile: ${tls}/client.key\n`);
  assert.is(badPath.status, 1);
  assert.match(badPath.stderr, `webhook-config: cannot use webhook.clientCertFile with webhook.clientKeyFile: cannot read ${tls}/missing.crt: ENOENT`);
});

test('webhook cli: a bad sysPrefix is reported, exit 1', () => {
  const cfg = join(tmp, 'bad.yaml');
  writeFileSync(cfg, 'webhook:\n  sysPrefix: "Not_OK"\n');
  const r = spawnSync(process.execPath, ['bin/rae.js', 'webhook-config', '--config', cfg, '--state-dir', join(tmp, 'bad-state')], { encoding: 'utf8', env });
  assert.is(r.status, 1);
  assert.is(r.stdout, '');
  assert.match(r.stderr, "webhook-config: webhook.sysPrefix 'Not_OK' is not a DNS label prefix");
});

test.run();
