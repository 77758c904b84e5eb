// A real HTTP(S) receiver on 127.0.0.1 port 0 for the output tests: records each request
// (method, path, headers, body bytes, the client certificate's CN under mutual TLS) and answers
// through a replaceable behaviour (status, hang, ...). Also a throwaway CA with a server and a
// client certificate (openssl, installed by scripts/setup.sh --for test).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One request as received. */
interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** CN of the client certificate (mutual TLS), else ''. */
  clientCn: string;
}

export type Behaviour = (req: Received, res: ServerResponse) => void;

export interface Receiver {
  url: string;
  requests: Received[];
  /** Responses held open by a hanging behaviour. */
  held: ServerResponse[];
  behave: Behaviour;
  close(): Promise<void>;
}

const answer =
  (status: number): Behaviour =>
  (_req, res) =>
    res.writeHead(status).end();
const hang: Behaviour = () => {};

/** TLS material for an HTTPS receiver. */
export interface ReceiverTls {
  cert: Buffer;
  key: Buffer;
  /** Ask for and verify a client certificate against this CA. */
  clientCa?: Buffer;
}

/** Starts a receiver (HTTPS when `tls` is given) answering 200 unless told otherwise. */
export async function startReceiver(opts: { tls?: ReceiverTls; behave?: Behaviour; port?: number } = {}): Promise<Receiver> {
  const r: Receiver = { url: '', requests: [], held: [], behave: opts.behave ?? answer(200), close: async () => {} };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as TLSSocket).getPeerCertificate?.();
      const got: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), clientCn: String(peer?.subject?.CN ?? '') };
      r.requests.push(got);
      if (r.behave === hang) r.held.push(res);
      else r.behave(got, res);
    });
  };
  const server: Server = opts.tls ? createHttps({ cert: opts.tls.cert, key: opts.tls.key, ca: opts.tls.clientCa, requestCert: !!opts.tls.clientCa, rejectUnauthorized: !!opts.tls.clientCa }, handler) : createHttp(handler);
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  r.url = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () =>
    new Promise<void>((resolve) => {
      for (const res of r.held.splice(0)) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate (CN=rae-client), as files and bytes. */
export interface TestPki {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  read(file: string): Buffer;
  remove(): void;
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'rae-fwd-pki-'));
  const f = (n: string) => join(dir, n);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '1', '-subj', '/CN=rae-test-ca');
  for (const [name, cn, ext] of [
    ['server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1'],
    ['client', 'rae-client', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    openssl('req', ...ec, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${cn}`);
    writeFileSync(f(`${name}.ext`), `${ext}\n`);
    openssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f(`${name}.pem`), '-days', '1', '-extfile', f(`${name}.ext`));
  }
  return {
    dir,
    caFile: f('ca.pem'),
    serverCertFile: f('server.pem'),
    serverKeyFile: f('server.key'),
    clientCertFile: f('client.pem'),
    clientKeyFile: f('client.key'),
    read: (file) => readFileSync(file),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Polls `cond` every 5 ms until true; fails after `ms` (wide: these wait for events, not time). */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
