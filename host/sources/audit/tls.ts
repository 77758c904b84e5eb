// TLS material of the audit webhook. Either the configured files (webhook.tlsCertFile,
// tlsKeyFile, optional tlsCaFile), or material generated on first start into
// <stateDir>/webhook-tls/ as Deckhouse's hook makes it (reference/module-and-forwarder.md §5):
// a self-signed CA and a server certificate, ECDSA P-256, CN and IP SAN 127.0.0.1, ten years,
// renewed when less than six months remain (or not valid yet) or the SANs differ (a valid CA is kept, so API
// servers configured with it keep working). The same CA issues the API server's client
// certificate (client.crt/client.key, CN kube-apiserver, extended key usage clientAuth, renewed
// as the server's) that `rae webhook-config` puts in its kubeconfig and the webhook verifies;
// the CA and client certificate are generated even when the server certificate is configured,
// unless a client CA is configured (webhook.clientCaFile, with the API server's pair it issued in
// clientCertFile/clientKeyFile when this host needs it): then nothing of the client side is
// generated, so every node of a cluster verifies the one pair its API servers present. Also
// writes the Secret manifest `runtime-audit-engine-webhook-tls` (namespace
// `<sysPrefix>-runtime-audit-engine`) holding ca.crt, tls.crt and tls.key. Consumes
// Config.webhook + stateDir; produces PEM text or an error naming the key and the file.
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
  /** What verifies client certificates: webhook.clientCaFile, else the engine's own CA (<dir>/ca.crt; caPem when the material is generated). */
  clientCaPem: string;
  /** The API server's client certificate and key, issued by clientCaPem; '' when a client CA is configured without them. */
  clientCertPem: string;
  clientKeyPem: string;
  /** Where generated material lives (also for configured files: the Secret manifest is there). */
  dir: string;
  /** Path of the Secret manifest. */
  secretPath: string;
  /** What this call created: nothing, a new server certificate, or a new CA and server certificate. */
  generated: 'none' | 'server' | 'ca+server';
}

/** The API server's client certificate and key of `tls`, undefined when this host does not hold them (a client CA configured without its pair). */
export function clientCredentials(tls: Pick<WebhookTls, 'clientCertPem' | 'clientKeyPem'>): { certPem: string; keyPem: string } | undefined {
  return tls.clientCertPem === '' ? undefined : { certPem: tls.clientCertPem, keyPem: tls.clientKeyPem };
}

/** What ensureWebhookTls needs. */
export interface TlsOptions {
  stateDir: string;
  webhook: { address: string; sysPrefix: string; tlsCertFile: string; tlsKeyFile: string; tlsCaFile: string; clientCaFile?: string; clientCertFile?: string; clientKeyFile?: string };
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

/** A certificate and its key from PEM files, or what is wrong with them. */
function loadPair(certPath: string, keyPath: string): Pair | { problem: string } {
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      return { problem: `cannot read ${path}: ${(err as Error).message}` };
    }
  };
  const certPem = read(certPath);
  if (typeof certPem !== 'string') return certPem;
  const keyPem = read(keyPath);
  if (typeof keyPem !== 'string') return keyPem;
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return { problem: `${certPath} is not a PEM certificate` };
  }
  try {
    key = createPrivateKey(keyPem);
  } catch {
    return { problem: `${keyPath} is not a PEM private key` };
  }
  return cert.checkPrivateKey(key) ? { cert, certPem, key, keyPem } : { problem: `the key ${keyPath} does not match the certificate ${certPath}` };
}

function readPair(certPath: string, keyPath: string): Pair | undefined {
  const pair = loadPair(certPath, keyPath);
  return 'problem' in pair ? undefined : pair;
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

/** The client side of the material: what verifies client certificates and the API server's pair. */
type ClientSide = Pick<WebhookTls, 'clientCaPem' | 'clientCertPem' | 'clientKeyPem'>;

/** Extended key usage clientAuth (RFC 5280 §4.2.1.12): a certificate that lists usages must list it to authenticate a TLS client. */
const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';

/**
 * The configured client side: webhook.clientCaFile (one or more PEM CA certificates; several let a
 * new CA be rolled out beside the old) and, when set, the pair clientCertFile/clientKeyFile, which
 * one of them must have issued for client authentication. Undefined when no client key is set.
 */
function configuredClient(w: TlsOptions['webhook']): { ok: true; client: ClientSide } | { ok: false; error: string } | undefined {
  const caFile = w.clientCaFile ?? '';
  const certFile = w.clientCertFile ?? '';
  const keyFile = w.clientKeyFile ?? '';
  if (caFile === '' && certFile === '' && keyFile === '') return undefined;
  if ((certFile === '') !== (keyFile === '')) return { ok: false, error: 'webhook.clientCertFile and webhook.clientKeyFile must be set together' };
  if (caFile === '') return { ok: false, error: 'webhook.clientCertFile needs webhook.clientCaFile, the CA that issued it (the webhook verifies clients with it)' };
  let caPem: string;
  try {
    caPem = readFileSync(caFile, 'utf8');
  } catch (err) {
    return { ok: false, error: `cannot read webhook.clientCaFile ${caFile}: ${(err as Error).message}` };
  }
  const blocks = caPem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  let cas: X509Certificate[];
  try {
    cas = blocks.map((b) => new X509Certificate(b));
  } catch (err) {
    return { ok: false, error: `webhook.clientCaFile ${caFile}: a certificate that does not parse: ${(err as Error).message}` };
  }
  if (cas.length === 0) return { ok: false, error: `webhook.clientCaFile ${caFile}: no PEM certificate in it` };
  if (!cas.every((c) => c.ca)) return { ok: false, error: `webhook.clientCaFile ${caFile}: not a CA certificate (basicConstraints CA:FALSE), it cannot verify client certificates` };
  if (certFile === '') return { ok: true, client: { clientCaPem: caPem, clientCertPem: '', clientKeyPem: '' } };
  const pair = loadPair(certFile, keyFile);
  if ('problem' in pair) return { ok: false, error: `cannot use webhook.clientCertFile with webhook.clientKeyFile: ${pair.problem}` };
  if (!cas.some((ca) => pair.cert.checkIssued(ca) && pair.cert.verify(ca.publicKey))) return { ok: false, error: `webhook.clientCertFile ${certFile} is not issued by webhook.clientCaFile ${caFile}` };
  const usages = pair.cert.keyUsage;
  if (usages !== undefined && !usages.includes(CLIENT_AUTH_OID)) return { ok: false, error: `webhook.clientCertFile ${certFile} is not for client authentication (its extended key usage lacks clientAuth)` };
  return { ok: true, client: { clientCaPem: caPem, clientCertPem: pair.certPem, clientKeyPem: pair.keyPem } };
}

function configured(opts: TlsOptions, dir: string, client: ClientSide | undefined): { ok: true; tls: Omit<WebhookTls, 'dir' | 'secretPath'> } | { ok: false; error: string } {
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
  return { ok: true, tls: { caPem, certPem: pair.certPem, keyPem: pair.keyPem, ...(client ?? clientMaterial(dir, ensureCa(dir, v), v)), generated: 'none' } };
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
function clientMaterial(dir: string, ca: { ca: Pair; fresh: boolean }, v: Validity): ClientSide {
  const { leaf } = ensureLeaf(dir, 'client', ca, v, { subject: CLIENT_NAME, purpose: 'client' }, (c) => c.subject === `O=${CLIENT_NAME.organization}\nCN=${CLIENT_NAME.commonName}`);
  return { clientCaPem: ca.ca.certPem, clientCertPem: leaf.certPem, clientKeyPem: leaf.keyPem };
}

function generated(opts: TlsOptions, dir: string, client: ClientSide | undefined): Omit<WebhookTls, 'dir' | 'secretPath'> {
  const v = validity(opts);
  const altNames = serverAltNames(opts.webhook.address);
  const ca = ensureCa(dir, v);
  const sameNames = (c: X509Certificate) => certAltNames(c).sort().join(',') === [...altNames].sort().join(',');
  const server = ensureLeaf(dir, 'tls', ca, v, { subject: { commonName: '127.0.0.1' }, purpose: 'server', altNames }, sameNames);
  const generatedWhat: WebhookTls['generated'] = ca.fresh ? 'ca+server' : server.made ? 'server' : 'none';
  return { caPem: ca.ca.certPem, certPem: server.leaf.certPem, keyPem: server.leaf.keyPem, ...(client ?? clientMaterial(dir, ca, v)), generated: generatedWhat };
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
    const client = configuredClient(w);
    if (client && !client.ok) return client;
    let material: Omit<WebhookTls, 'dir' | 'secretPath'>;
    if (w.tlsCertFile !== '' || w.tlsKeyFile !== '') {
      const r = configured(opts, dir, client?.client);
      if (!r.ok) return r;
      material = r.tls;
    } else material = generated(opts, dir, client?.client);
    const secretPath = join(dir, 'secret.yaml');
    const manifest = secretManifest(w.sysPrefix, material);
    if (!existsSync(secretPath) || readFileSync(secretPath, 'utf8') !== manifest) writeAtomic(secretPath, manifest, 0o600);
    return { ok: true, tls: { ...material, dir, secretPath } };
  } catch (err) {
    return { ok: false, error: `webhook TLS material in ${dir}: ${(err as Error).message}` };
  }
}
