// A minimal X.509 v3 certificate builder (RFC 5280) for the webhook's own CA, server certificate
// and the API server's client certificate: DER encoding of the few ASN.1 types a certificate needs, ECDSA P-256 keys and
// ecdsa-with-SHA256 signatures from node:crypto. Node can parse and verify certificates
// (X509Certificate) but cannot build them; this file is the builder, so TLS set-up needs neither
// an npm package nor the openssl binary. Consumes key objects and names; produces PEM text.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

// --- DER ---------------------------------------------------------------------------------------

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}

const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));

/** A non-negative INTEGER from big-endian bytes (minimal, with a 0 byte before a set high bit). */
function uint(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const b = bytes.subarray(i);
  return tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  const year = d.getUTCFullYear();
  return year >= 1950 && year < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}

// --- certificate -------------------------------------------------------------------------------

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyId: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyId: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

/** Subject or issuer: common name and optional organization. */
export interface DistinguishedName {
  commonName: string;
  organization?: string;
}

/** What to put in one certificate. */
export interface CertificateSpec {
  subject: DistinguishedName;
  /** The certified public key. */
  publicKey: KeyObject;
  issuer: DistinguishedName;
  /** The issuer's private key (the subject's own for a self-signed CA). */
  issuerKey: KeyObject;
  /** The issuer's public key (for the authority key identifier). */
  issuerPublicKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  /** A CA certificate (basicConstraints CA, keyCertSign), a TLS server or a TLS client certificate (extended key usage serverAuth or clientAuth). */
  purpose: 'ca' | 'server' | 'client';
  /** Subject alternative names of a server certificate: IP addresses or DNS names. */
  altNames?: string[];
}

function name(dn: DistinguishedName): Buffer {
  const rdns = [];
  if (dn.organization) rdns.push(set(seq(oid(OID.organization), utf8(dn.organization))));
  rdns.push(set(seq(oid(OID.commonName), utf8(dn.commonName))));
  return seq(...rdns);
}

/** Key identifier: SHA-1 of the subjectPublicKey bits (RFC 5280 4.2.1.2, method 1). */
function keyId(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // For a P-256 key the SPKI ends with the BIT STRING: 0x03 0x42 0x00 + 65 bytes of point.
  return createHash('sha1')
    .update(spki.subarray(spki.length - 65))
    .digest();
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

/** The 16 bytes of an IPv6 address (no embedded IPv4 form). */
function ipv6Bytes(text: string): Buffer {
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

function altName(n: string): Buffer {
  if (isIPv4(n)) return tlv(0x87, Buffer.from(n.split('.').map(Number)));
  if (isIPv6(n) && !n.includes('.')) return tlv(0x87, ipv6Bytes(n));
  return tlv(0x82, Buffer.from(n, 'ascii'));
}

function extensions(spec: CertificateSpec): Buffer {
  const ca = spec.purpose === 'ca';
  const list = [
    // CA: keyCertSign + cRLSign + digitalSignature (0x86, one unused bit); server, client: digitalSignature (0x80, seven).
    extension(OID.keyUsage, true, ca ? bits(Buffer.from([0x86]), 1) : bits(Buffer.from([0x80]), 7)),
    extension(OID.basicConstraints, true, ca ? seq(bool(true), uint(Buffer.from([0]))) : seq()),
    extension(OID.subjectKeyId, false, octets(keyId(spec.publicKey))),
  ];
  if (!ca) {
    list.push(extension(OID.extKeyUsage, false, seq(oid(spec.purpose === 'server' ? OID.serverAuth : OID.clientAuth))));
    list.push(extension(OID.authorityKeyId, false, seq(tlv(0x80, keyId(spec.issuerPublicKey)))));
    if (spec.altNames?.length) list.push(extension(OID.subjectAltName, false, seq(...spec.altNames.map(altName))));
  }
  return explicit(3, seq(...list));
}

/** Builds and signs one certificate; returns it as PEM. */
export function buildCertificate(spec: CertificateSpec): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and never shortened
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const tbs = seq(
    explicit(0, uint(Buffer.from([2]))), // v3
    uint(serial),
    algorithm,
    name(spec.issuer),
    seq(time(spec.notBefore), time(spec.notAfter)),
    name(spec.subject),
    spec.publicKey.export({ type: 'spki', format: 'der' }),
    extensions(spec),
  );
  const signature = sign('sha256', tbs, { key: spec.issuerKey, dsaEncoding: 'der' });
  const der = seq(tbs, algorithm, bits(signature));
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`;
}

/** A new ECDSA P-256 key pair. */
export function newEcKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}
