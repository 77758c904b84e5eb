// TLS material of the audit webhook. Either the configured files (webhook.tlsCertFile,
// tlsKeyFile, optional tlsCaFile), or material generated on first start into
// <stateDir>/webhook-tls/ as Deckhouse's hook makes it (reference/module-and-forwarder.md §5):
// a self-signed CA and a server certificate, ECDSA P-256, CN and IP SAN 127.0.0.1, ten years,
// renewed when less than six months remain (or not valid yet) or the SANs differ (a valid CA is kept, so API
// servers configured with it keep working). The same CA issues the API server's client
// certificate (client.crt/client.key, CN kube-apiserver, extended key usage clientAuth, renewed
// as the server's) that `rae webhook-config` puts in its kubeconfig and the webhook verifies;
// the CA and client certificate are generated even when the server certificate is configured,
// as the client CA is always the engine's own. Also writes the Secret manifest
// `runtime-audit-engine-webhook-tls` (namespace `<sysPrefix>-runtime-audit-engine`) holding
// ca.crt, tls.crt and tls.key. Consumes Config.webhook + stateDir; produces PEM text or an error.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { buildCertificate, newEcKeyPair, type DistinguishedName } from './x509.js';

/** Name of the Secret manifest written next to the material. */
const SECRET_NAME = 'runtime-audit-engine-webhook-tls';
/** Ten years, as Deckhouse's generator (87600h). */
const VALIDITY_MS = 87600 * 3600 * 1000;
/** Renew when less than this remains (Deckhouse: six months). */
const RENEW_BEFORE_MS = 182 * 24 * 3600 * 1000;
const CA_NAME: DistinguishedName = { commonName: 'runtime-audit-engine webhook CA', organization: 'runtime-audit-engine' };
/** The subject of the API server's client certificate. */
const CLIENT_NAME: DistinguishedName = { commonName: 'kube-apiserver', organization: 'runtime-audit-engine' };

/** The webhook's TLS material. */
export interface WebhookTls {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** The engine's own CA (<dir>/ca.crt), which verifies client certificates; caPem when the material is generated. */
  clientCaPem: string;
  /** The API server's client certificate and key, issued by clientCaPem. */
  clientCertPem: string;
  clientKeyPem: string;
  /** Where generated material lives (also for configured files: the Secret manifest is there). */
  dir: string;
  /** Path of the Secret manifest. */
  secretPath: string;
  /** What this call created: nothing, a new server certificate, or a new CA and server certificate. */
  generated: 'none' | 'server' | 'ca+server';
}

/** What ensureWebhookTls needs. */
export interface TlsOptions {
  stateDir: string;
  webhook: { address: string; sysPrefix: string; tlsCertFile: string; tlsKeyFile: string; tlsCaFile: string };
  /** The clock (tests). */
  now?: Date;
}

/** Subject alternative names: 127.0.0.1, plus the listen address when it is a specific host. */
function serverAltNames(address: string): string[] {
  const names = ['127.0.0.1'];
  if (address !== '' && address !== '0.0.0.0' && address !== '::' && !names.includes(address)) names.push(address);
  return names;
}

/** The SAN list of a parsed certificate, as plain addresses and names. */
function certAltNames(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter((s) => s.length > 0)
    .map((s) => s.replace(/^(IP Address|DNS):/, ''));
}

/** A certificate with its key, parsed and as PEM. */
type Pair = { cert: X509Certificate; certPem: string; key: KeyObject; keyPem: string };

function readPair(certPath: string, keyPath: string): Pair | undefined {
  try {
    const certPem = readFileSync(certPath, 'utf8');
    const keyPem = readFileSync(keyPath, 'utf8');
    const cert = new X509Certificate(certPem);
    const key = createPrivateKey(keyPem);
    return cert.checkPrivateKey(key) ? { cert, certPem, key, keyPem } : undefined;
  } catch {
    return undefined;
  }
}

/** Not valid yet (the clock went back) or less than six months left. */
const needsRenewal = (cert: X509Certificate, now: Date) => new Date(cert.validFrom).getTime() > now.getTime() || new Date(cert.validTo).getTime() - now.getTime() < RENEW_BEFORE_MS;

/** Writes a file through a temporary name, so a reader never sees half of it. */
function writeAtomic(path: string, text: string, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** The Secret manifest (kubernetes.io/tls) holding ca.crt, tls.crt and tls.key. */
function secretManifest(sysPrefix: string, tls: { caPem: string; certPem: string; keyPem: string }): string {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  return toYaml({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SECRET_NAME, namespace: `${sysPrefix}-runtime-audit-engine`, labels: { app: 'runtime-audit-engine', module: 'runtime-audit-engine' } },
    type: 'kubernetes.io/tls',
    data: { 'ca.crt': b64(tls.caPem), 'tls.crt': b64(tls.certPem), 'tls.key': b64(tls.keyPem) },
  });
}

/** A valid namespace prefix: lower-case DNS label characters, so `<prefix>-runtime-audit-engine` is a namespace name. */
function checkSysPrefix(prefix: string): string | undefined {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(prefix) || prefix.length > 63 - '-runtime-audit-engine'.length) {
    return `webhook.sysPrefix '${prefix}' is not a DNS label prefix (a-z, 0-9, '-'; at most 42 characters)`;
  }
  return undefined;
}

function configured(opts: TlsOptions, dir: string): { ok: true; tls: Omit<WebhookTls, 'dir' | 'secretPath'> } | { ok: false; error: string } {
  const w = opts.webhook;
  if (w.tlsCertFile === '' || w.tlsKeyFile === '') return { ok: false, error: 'webhook.tlsCertFile and webhook.tlsKeyFile must be set together' };
  const pair = readPair(w.tlsCertFile, w.tlsKeyFile);
  if (!pair) return { ok: false, error: `cannot use ${w.tlsCertFile} with ${w.tlsKeyFile}: unreadable, not PEM, or the key does not match the certificate` };
  let caPem = pair.certPem;
  if (w.tlsCaFile !== '') {
    try {
      caPem = readFileSync(w.tlsCaFile, 'utf8');
      new X509Certificate(caPem);
    } catch (err) {
      return { ok: false, error: `cannot read webhook.tlsCaFile ${w.tlsCaFile}: ${(err as Error).message}` };
    }
  }
  const v = validity(opts);
  return { ok: true, tls: { caPem, certPem: pair.certPem, keyPem: pair.keyPem, ...clientMaterial(dir, ensureCa(dir, v), v), generated: 'none' } };
}

type Validity = { now: Date; notBefore: Date; notAfter: Date };

function validity(opts: TlsOptions): Validity {
  const now = opts.now ?? new Date();
  const notBefore = new Date(now.getTime() - 5 * 60 * 1000); // tolerate a little clock skew
  return { now, notBefore, notAfter: new Date(notBefore.getTime() + VALIDITY_MS) };
}

/** The CA in `dir`, kept while valid, else made anew (`fresh`). */
function ensureCa(dir: string, v: Validity): { ca: Pair; fresh: boolean } {
  const kept = readPair(join(dir, 'ca.crt'), join(dir, 'ca.key'));
  if (kept?.cert.ca && !needsRenewal(kept.cert, v.now)) return { ca: kept, fresh: false };
  const keys = newEcKeyPair();
  const certPem = buildCertificate({ subject: CA_NAME, issuer: CA_NAME, publicKey: keys.publicKey, issuerKey: keys.privateKey, issuerPublicKey: keys.publicKey, notBefore: v.notBefore, notAfter: v.notAfter, purpose: 'ca' });
  const keyPem = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  writeAtomic(join(dir, 'ca.key'), keyPem, 0o600);
  writeAtomic(join(dir, 'ca.crt'), certPem, 0o644);
  return { ca: { cert: new X509Certificate(certPem), certPem, key: keys.privateKey, keyPem }, fresh: true };
}

/**
 * The leaf certificate `<name>.crt`/`<name>.key` in `dir` issued by `ca`: kept unless the CA is
 * fresh, it is not the CA's, it needs renewal, or `matches` says its names are not the wanted ones.
 */
function ensureLeaf(
  dir: string,
  name: string,
  ca: { ca: Pair; fresh: boolean },
  v: Validity,
  spec: { subject: DistinguishedName; purpose: 'server' | 'client'; altNames?: string[] },
  matches: (cert: X509Certificate) => boolean,
): { leaf: Pair; made: boolean } {
  const kept = readPair(join(dir, `${name}.crt`), join(dir, `${name}.key`));
  if (!ca.fresh && kept && kept.cert.verify(ca.ca.cert.publicKey) && !needsRenewal(kept.cert, v.now) && matches(kept.cert)) return { leaf: kept, made: false };
  const keys = newEcKeyPair();
  const certPem = buildCertificate({ ...spec, issuer: CA_NAME, publicKey: keys.publicKey, issuerKey: ca.ca.key, issuerPublicKey: ca.ca.cert.publicKey, notBefore: v.notBefore, notAfter: v.notAfter });
  const keyPem = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  writeAtomic(join(dir, `${name}.key`), keyPem, 0o600);
  writeAtomic(join(dir, `${name}.crt`), certPem, 0o644);
  return { leaf: { cert: new X509Certificate(certPem), certPem, key: keys.privateKey, keyPem }, made: true };
}

/** The API server's client certificate, issued by the engine's CA. */
function clientMaterial(dir: string, ca: { ca: Pair; fresh: boolean }, v: Validity): Pick<WebhookTls, 'clientCaPem' | 'clientCertPem' | 'clientKeyPem'> {
  const { leaf } = ensureLeaf(dir, 'client', ca, v, { subject: CLIENT_NAME, purpose: 'client' }, (c) => c.subject === `O=${CLIENT_NAME.organization}\nCN=${CLIENT_NAME.commonName}`);
  return { clientCaPem: ca.ca.certPem, clientCertPem: leaf.certPem, clientKeyPem: leaf.keyPem };
}

function generated(opts: TlsOptions, dir: string): Omit<WebhookTls, 'dir' | 'secretPath'> {
  const v = validity(opts);
  const altNames = serverAltNames(opts.webhook.address);
  const ca = ensureCa(dir, v);
  const sameNames = (c: X509Certificate) => certAltNames(c).sort().join(',') === [...altNames].sort().join(',');
  const server = ensureLeaf(dir, 'tls', ca, v, { subject: { commonName: '127.0.0.1' }, purpose: 'server', altNames }, sameNames);
  const generatedWhat: WebhookTls['generated'] = ca.fresh ? 'ca+server' : server.made ? 'server' : 'none';
  return { caPem: ca.ca.certPem, certPem: server.leaf.certPem, keyPem: server.leaf.keyPem, ...clientMaterial(dir, ca, v), generated: generatedWhat };
}

/**
 * The webhook's TLS material: the configured files, or generated (and kept) in
 * <stateDir>/webhook-tls/. Writes the Secret manifest there. Problems are values, never thrown.
 */
export function ensureWebhookTls(opts: TlsOptions): { ok: true; tls: WebhookTls } | { ok: false; error: string } {
  const prefixProblem = checkSysPrefix(opts.webhook.sysPrefix);
  if (prefixProblem) return { ok: false, error: prefixProblem };
  const dir = join(opts.stateDir, 'webhook-tls');
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const w = opts.webhook;
    let material: Omit<WebhookTls, 'dir' | 'secretPath'>;
    if (w.tlsCertFile !== '' || w.tlsKeyFile !== '') {
      const r = configured(opts, dir);
      if (!r.ok) return r;
      material = r.tls;
    } else material = generated(opts, dir);
    const secretPath = join(dir, 'secret.yaml');
    const manifest = secretManifest(w.sysPrefix, material);
    if (!existsSync(secretPath) || readFileSync(secretPath, 'utf8') !== manifest) writeAtomic(secretPath, manifest, 0o600);
    return { ok: true, tls: { ...material, dir, secretPath } };
  } catch (err) {
    return { ok: false, error: `webhook TLS material in ${dir}: ${(err as Error).message}` };
  }
}
