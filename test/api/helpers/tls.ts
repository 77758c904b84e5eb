// A throwaway self-signed certificate for 127.0.0.1 (openssl, from scripts/setup.sh), so tests
// can serve the API over HTTPS, as the spec's https:// DSNs expect, and trust it explicitly.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Certificate and key files (PEM), the certificate's bytes, and a remover. */
export interface TestCert {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  remove(): void;
}

/** Makes a one-day EC certificate with subjectAltName IP:127.0.0.1. */
export function makeTestCert(): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'rae-api-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return { certFile, keyFile, cert: readFileSync(certFile), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
