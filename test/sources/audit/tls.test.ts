// The webhook's TLS material: what is generated (checked with Node's X509Certificate and with
// `openssl verify`), when it is kept and when renewed, configured files, the Secret manifest, file
// modes, and the problems reported as values.
import { spawnSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse as parseYaml } from 'yaml';
import { clientCredentials, ensureWebhookTls, type TlsOptions } from '../../../host/sources/audit/tls.js';

const dirs: string[] = [];
function opts(patch: Partial<TlsOptions['webhook']> = {}, stateDir?: string, now?: Date): TlsOptions {
  const dir = stateDir ?? mkdtempSync(join(tmpdir(), 'rae-tls-'));
  dirs.push(dir);
  return { stateDir: dir, webhook: { address: '127.0.0.1', sysPrefix: 'd8', tlsCertFile: '', tlsKeyFile: '', tlsCaFile: '', ...patch }, now };
}
function ensure(o: TlsOptions) {
  const r = ensureWebhookTls(o);
  if (!r.ok) throw new Error(r.error);
  return r.tls;
}
const YEAR_MS = 365 * 24 * 3600 * 1000;

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('tls: first start generates a CA and an ECDSA P-256 server certificate for 127.0.0.1, valid ten years', () => {
  const o = opts();
  const tls = ensure(o);
  assert.is(tls.generated, 'ca+server');
  assert.is(tls.dir, join(o.stateDir, 'webhook-tls'));
  const ca = new X509Certificate(tls.caPem);
  const cert = new X509Certificate(tls.certPem);
  assert.ok(ca.ca);
  assert.not.ok(cert.ca);
  assert.is(cert.subject, 'CN=127.0.0.1');
  assert.is(cert.subjectAltName, 'IP Address:127.0.0.1');
  assert.is(cert.checkIP('127.0.0.1'), '127.0.0.1');
  assert.is(cert.issuer, ca.subject);
  assert.ok(cert.checkIssued(ca));
  assert.ok(cert.verify(ca.publicKey));
  assert.ok(ca.verify(ca.publicKey));
  assert.ok(cert.checkPrivateKey(createPrivateKey(tls.keyPem)));
  assert.equal(cert.publicKey.asymmetricKeyDetails, { namedCurve: 'prime256v1' });
  assert.equal(ca.publicKey.asymmetricKeyDetails, { namedCurve: 'prime256v1' });
  const years = (new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime()) / YEAR_MS;
  assert.ok(years > 9.99 && years < 10.01, `${years} years`);
  assert.ok(new Date(cert.validFrom).getTime() <= Date.now());
  for (const f of ['ca.crt', 'tls.crt']) assert.is(readFileSync(join(tls.dir, f), 'utf8'), f === 'ca.crt' ? tls.caPem : tls.certPem);
  for (const f of ['ca.key', 'tls.key', 'secret.yaml']) assert.is(statSync(join(tls.dir, f)).mode & 0o777, 0o600, f);
});

test('tls: openssl verifies the server certificate for TLS server use at 127.0.0.1 against ca.crt', () => {
  const tls = ensure(opts());
  const r = spawnSync('openssl', ['verify', '-CAfile', join(tls.dir, 'ca.crt'), '-purpose', 'sslserver', '-verify_ip', '127.0.0.1', join(tls.dir, 'tls.crt')], { encoding: 'utf8' });
  assert.is(r.error, undefined, 'openssl is installed by scripts/setup.sh');
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, 'tls.crt: OK');
  const wrongIp = spawnSync('openssl', ['verify', '-CAfile', join(tls.dir, 'ca.crt'), '-verify_ip', '10.0.0.1', join(tls.dir, 'tls.crt')], { encoding: 'utf8' });
  assert.is.not(wrongIp.status, 0);
});

test('tls: a second start keeps the material', () => {
  const o = opts();
  const first = ensure(o);
  const second = ensure(o);
  assert.is(second.generated, 'none');
  assert.is(second.caPem, first.caPem);
  assert.is(second.certPem, first.certPem);
  assert.is(second.keyPem, first.keyPem);
});

test('tls: another listen address renews only the server certificate (the CA stays, so API servers keep trusting it)', () => {
  const o = opts();
  const first = ensure(o);
  const moved = ensure({ ...o, webhook: { ...o.webhook, address: '10.1.2.3' } });
  assert.is(moved.generated, 'server');
  assert.is(moved.caPem, first.caPem);
  const cert = new X509Certificate(moved.certPem);
  assert.is(cert.subjectAltName, 'IP Address:127.0.0.1, IP Address:10.1.2.3');
  assert.ok(cert.verify(new X509Certificate(first.caPem).publicKey));
  assert.is(ensure({ ...o, webhook: { ...o.webhook, address: '0.0.0.0' } }).generated, 'server'); // back to 127.0.0.1 only
});

test('tls: a damaged server certificate is replaced; less than six months left, or not valid yet, renews everything', () => {
  const o = opts();
  const first = ensure(o);
  writeFileSync(join(first.dir, 'tls.crt'), 'not a certificate');
  const repaired = ensure(o);
  assert.is(repaired.generated, 'server');
  assert.is(repaired.caPem, first.caPem);
  assert.is(ensure({ ...o, now: new Date(Date.now() + 9 * YEAR_MS) }).generated, 'none');
  const late = ensure({ ...o, now: new Date(Date.now() + 9.7 * YEAR_MS) });
  assert.is(late.generated, 'ca+server');
  assert.is.not(late.caPem, first.caPem);
  assert.is(ensure(o).generated, 'ca+server'); // back in the present: the new material is not valid yet
});

test('tls: the API server gets a client certificate of the CA (CN kube-apiserver, clientAuth), kept on a second start and re-issued with a new CA', () => {
  const o = opts();
  const tls = ensure(o);
  const ca = new X509Certificate(tls.caPem);
  const client = new X509Certificate(tls.clientCertPem);
  assert.is(tls.clientCaPem, tls.caPem);
  assert.is(client.subject, 'O=runtime-audit-engine\nCN=kube-apiserver');
  assert.not.ok(client.ca);
  assert.ok(client.checkIssued(ca) && client.verify(ca.publicKey));
  assert.ok(client.checkPrivateKey(createPrivateKey(tls.clientKeyPem)));
  assert.is(statSync(join(tls.dir, 'client.key')).mode & 0o777, 0o600);
  for (const [purpose, ok] of [
    ['sslclient', true],
    ['sslserver', false],
  ] as const) {
    const r = spawnSync('openssl', ['verify', '-CAfile', join(tls.dir, 'ca.crt'), '-purpose', purpose, join(tls.dir, 'client.crt')], { encoding: 'utf8' });
    assert.is(r.status === 0, ok, `${purpose}: ${r.stdout}${r.stderr}`);
  }
  assert.is(ensure(opts({}, o.stateDir)).clientCertPem, tls.clientCertPem, 'kept');
  const renewed = ensure(opts({}, o.stateDir, new Date(Date.now() + 10 * YEAR_MS)));
  assert.not.equal(renewed.clientCertPem, tls.clientCertPem);
  assert.ok(new X509Certificate(renewed.clientCertPem).checkIssued(new X509Certificate(renewed.caPem)));
});

test('tls: configured files are used as they are, with the CA from tlsCaFile or the certificate itself', () => {
  const made = ensure(opts());
  const files = mkdtempSync(join(tmpdir(), 'rae-tls-files-'));
  dirs.push(files);
  for (const f of ['ca.crt', 'tls.crt', 'tls.key']) copyFileSync(join(made.dir, f), join(files, f));
  const o = opts({ tlsCertFile: join(files, 'tls.crt'), tlsKeyFile: join(files, 'tls.key'), tlsCaFile: join(files, 'ca.crt') });
  const used = ensure(o);
  assert.is(used.generated, 'none');
  assert.is(used.certPem, made.certPem);
  assert.is(used.caPem, made.caPem);
  // no server certificate generated; the client CA and the API server's client certificate are, as they always are the engine's own
  assert.equal(spawnSync('ls', [used.dir]).stdout.toString().trim().split('\n'), ['ca.crt', 'ca.key', 'client.crt', 'client.key', 'secret.yaml']);
  assert.ok(new X509Certificate(used.clientCertPem).checkIssued(new X509Certificate(used.clientCaPem)));
  const noCa = ensure(opts({ tlsCertFile: join(files, 'tls.crt'), tlsKeyFile: join(files, 'tls.key') }));
  assert.is(noCa.caPem, made.certPem);
});

test('tls: problems are values with the reason', () => {
  const made = ensure(opts());
  const other = ensure(opts());
  const cases: Array<[Partial<TlsOptions['webhook']>, string]> = [
    [{ tlsCertFile: join(made.dir, 'tls.crt') }, 'must be set together'],
    [{ tlsCertFile: join(made.dir, 'tls.crt'), tlsKeyFile: join(other.dir, 'tls.key') }, 'the key does not match'],
    [{ tlsCertFile: '/nonexistent/tls.crt', tlsKeyFile: '/nonexistent/tls.key' }, 'unreadable'],
    [{ tlsCertFile: join(made.dir, 'tls.crt'), tlsKeyFile: join(made.dir, 'tls.key'), tlsCaFile: join(made.dir, 'tls.key') }, 'cannot read webhook.tlsCaFile'],
    [{ sysPrefix: 'D8_' }, "webhook.sysPrefix 'D8_' is not a DNS label prefix"],
  ];
  for (const [patch, message] of cases) {
    const r = ensureWebhookTls(opts(patch));
    assert.not.ok(r.ok, message);
    if (!r.ok) assert.match(r.error, message);
  }
});

test("tls: a configured client CA (webhook.clientCaFile) verifies clients; its pair is the API server's; nothing of the client side is generated", () => {
  const shared = ensure(opts()); // a CA and a client pair made elsewhere (configure.sh for a cluster)
  const c = { clientCaFile: join(shared.dir, 'ca.crt'), clientCertFile: join(shared.dir, 'client.crt'), clientKeyFile: join(shared.dir, 'client.key') };
  const node = ensure(opts(c));
  assert.is(node.clientCaPem, shared.caPem);
  assert.is(node.clientCertPem, shared.clientCertPem);
  assert.is(node.clientKeyPem, shared.clientKeyPem);
  assert.is.not(node.caPem, shared.caPem, "the server's material is still the node's own");
  // with the server's files configured as well, the state directory holds only the Secret manifest
  const serverFiles = { tlsCertFile: join(shared.dir, 'tls.crt'), tlsKeyFile: join(shared.dir, 'tls.key'), tlsCaFile: join(shared.dir, 'ca.crt') };
  const all = ensure(opts({ ...serverFiles, ...c }));
  assert.equal(spawnSync('ls', [all.dir]).stdout.toString().trim().split('\n'), ['secret.yaml']);
  // the CA alone (the DaemonSet's engines): clients verified, no pair known here
  const caOnly = ensure(opts({ ...serverFiles, clientCaFile: c.clientCaFile }));
  assert.is(caOnly.clientCaPem, shared.caPem);
  assert.is(caOnly.clientCertPem, '');
  assert.is(clientCredentials(caOnly), undefined);
  assert.equal(clientCredentials(node), { certPem: shared.clientCertPem, keyPem: shared.clientKeyPem });
  // a bundle of two CAs (a new one rolled out beside the old) verifies a pair of either
  const other = ensure(opts());
  const bundle = join(other.dir, 'bundle.crt');
  writeFileSync(bundle, other.caPem + shared.caPem);
  assert.is(ensure(opts({ ...c, clientCaFile: bundle })).clientCertPem, shared.clientCertPem);
});

test('tls: problems of the client keys name the key, the file and the reason', () => {
  const shared = ensure(opts());
  const other = ensure(opts());
  const f = (name: string, dir = shared.dir) => join(dir, name);
  const notPem = f('not-pem.crt');
  writeFileSync(notPem, 'not a certificate\n');
  const cases: Array<[Partial<TlsOptions['webhook']>, string]> = [
    [{ clientCaFile: '/nonexistent/ca.crt' }, "cannot read webhook.clientCaFile /nonexistent/ca.crt: ENOENT: no such file or directory, open '/nonexistent/ca.crt'"],
    [{ clientCaFile: notPem }, `webhook.clientCaFile ${notPem}: no PEM certificate in it`],
    [{ clientCaFile: f('client.crt') }, `webhook.clientCaFile ${f('client.crt')}: not a CA certificate (basicConstraints CA:FALSE), it cannot verify client certificates`],
    [{ clientCertFile: f('client.crt'), clientKeyFile: f('client.key') }, 'webhook.clientCertFile needs webhook.clientCaFile, the CA that issued it (the webhook verifies clients with it)'],
    [{ clientCaFile: f('ca.crt'), clientCertFile: f('client.crt') }, 'webhook.clientCertFile and webhook.clientKeyFile must be set together'],
    [
      { clientCaFile: f('ca.crt'), clientCertFile: '/nonexistent/client.crt', clientKeyFile: f('client.key') },
      "cannot use webhook.clientCertFile with webhook.clientKeyFile: cannot read /nonexistent/client.crt: ENOENT: no such file or directory, open '/nonexistent/client.crt'",
    ],
    [{ clientCaFile: f('ca.crt'), clientCertFile: f('client.crt'), clientKeyFile: f('tls.key') }, `cannot use webhook.clientCertFile with webhook.clientKeyFile: the key ${f('tls.key')} does not match the certificate ${f('client.crt')}`],
    [{ clientCaFile: f('ca.crt'), clientCertFile: f('client.crt', other.dir), clientKeyFile: f('client.key', other.dir) }, `webhook.clientCertFile ${f('client.crt', other.dir)} is not issued by webhook.clientCaFile ${f('ca.crt')}`],
    [{ clientCaFile: f('ca.crt'), clientCertFile: f('tls.crt'), clientKeyFile: f('tls.key') }, `webhook.clientCertFile ${f('tls.crt')} is not for client authentication (its extended key usage lacks clientAuth)`],
  ];
  for (const [patch, message] of cases) {
    const r = ensureWebhookTls(opts(patch));
    assert.is(r.ok ? '(ok)' : r.error, message);
  }
});

test('tls: the Secret manifest holds ca.crt, tls.crt and tls.key in the sysPrefix namespace', () => {
  const tls = ensure(opts({ sysPrefix: 'acme' }));
  const doc = parseYaml(readFileSync(tls.secretPath, 'utf8')) as Record<string, unknown>;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  assert.equal(doc, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'runtime-audit-engine-webhook-tls', namespace: 'acme-runtime-audit-engine', labels: { app: 'runtime-audit-engine', module: 'runtime-audit-engine' } },
    type: 'kubernetes.io/tls',
    data: { 'ca.crt': b64(tls.caPem), 'tls.crt': b64(tls.certPem), 'tls.key': b64(tls.keyPem) },
  });
});

test.run();
