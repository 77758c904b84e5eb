// The API's HTTP limits (config `api.*`, docs/security-api.md): body sizes, URL and header bytes,
// connections per client address, and how long a client may take to send its headers and its
// whole request. Consumes the `api` configuration; produces checked limits, the node server
// options that enforce them, a per-address connection cap and the answer to requests node's
// parser refuses (too long, too slow, malformed) — each a clear 4xx, never a stack.
import type { Server, Socket } from 'node:net';
import type { ApiConfig } from './config.js';

/** The checked limits. */
export interface ApiLimits {
  /** REST bodies (JSON, form, multipart): more is 413. */
  maxBodyBytes: number;
  /** Sentry ingestion bodies, as sent and decompressed: more is 413 (GitLab's 200 KiB). */
  maxEventBytes: number;
  /** The request target (path and query): more is 414. */
  maxUrlBytes: number;
  /** The request line and headers together: more is 431 (414 when the request line alone is over). */
  maxHeaderBytes: number;
  /** Open connections from one client address: more are closed at once. */
  maxConnectionsPerClient: number;
  /** A client must have sent its headers within this (else 408 and the connection closes). */
  headersTimeoutMs: number;
  /** ... and its whole request, body included. */
  requestTimeoutMs: number;
}

type LimitKey = 'maxBodyBytes' | 'maxEventBytes' | 'maxUrlBytes' | 'maxHeaderBytes' | 'maxConnectionsPerClient' | 'headersTimeoutSeconds' | 'requestTimeoutSeconds';
const LIMIT_KEYS: readonly LimitKey[] = ['maxBodyBytes', 'maxEventBytes', 'maxUrlBytes', 'maxHeaderBytes', 'maxConnectionsPerClient', 'headersTimeoutSeconds', 'requestTimeoutSeconds'];

/** The limits of an `api` configuration, or the problem naming the key (every limit is a positive integer). */
export function apiLimitsOf(api: ApiConfig): ApiLimits | { problem: string } {
  for (const key of LIMIT_KEYS) {
    const v = api[key];
    if (!Number.isSafeInteger(v) || v <= 0) return { problem: `api.${key}: expected a positive integer, got ${JSON.stringify(v)}` };
  }
  if (api.headersTimeoutSeconds > api.requestTimeoutSeconds) {
    return { problem: `api.headersTimeoutSeconds (${api.headersTimeoutSeconds}) must not exceed api.requestTimeoutSeconds (${api.requestTimeoutSeconds})` };
  }
  return {
    maxBodyBytes: api.maxBodyBytes,
    maxEventBytes: api.maxEventBytes,
    maxUrlBytes: api.maxUrlBytes,
    maxHeaderBytes: api.maxHeaderBytes,
    maxConnectionsPerClient: api.maxConnectionsPerClient,
    headersTimeoutMs: api.headersTimeoutSeconds * 1000,
    requestTimeoutMs: api.requestTimeoutSeconds * 1000,
  };
}

/**
 * Options for node's http(s).createServer. Node checks the timeouts every
 * `connectionsCheckingInterval` (30 s by default), so a slow client could hold a connection for
 * up to that much longer; a fifth of the header timeout keeps the overshoot small.
 */
export function serverOptionsOf(limits: ApiLimits): { maxHeaderSize: number; headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } {
  return {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(limits.headersTimeoutMs / 5))),
  };
}

/**
 * Caps open connections per remote address: a connection over the cap is destroyed before any
 * byte is read (on TLS too, before the handshake). Returns a function reading the open count of
 * an address (for tests and logs).
 */
export function limitConnectionsPerClient(server: Server, max: number, onRefused: (address: string) => void): (address: string) => number {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const n = (open.get(address) ?? 0) + 1;
    if (n > max) {
      socket.destroy();
      onRefused(address);
      return;
    }
    open.set(address, n);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return (address) => open.get(address) ?? 0;
}

const ANSWERS = {
  // GitLab behind nginx: a request line longer than its buffers is 414 (large_client_header_buffers)
  URI_TOO_LONG: [414, 'URI Too Long', '{"message":"414 URI Too Long"}'],
  HEADERS_TOO_LARGE: [431, 'Request Header Fields Too Large', '{"message":"431 Request Header Fields Too Large"}'],
  TIMEOUT: [408, 'Request Timeout', '{"message":"408 Request Timeout"}'],
  BAD_REQUEST: [400, 'Bad Request', '{"message":"400 Bad request"}'],
} as const;

/** Which answer a request node's parser refused gets; the raw bytes tell a long request line from many headers. */
function clientErrorAnswer(err: { code?: string; rawPacket?: unknown }, maxUrlBytes: number): keyof typeof ANSWERS {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'TIMEOUT';
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const raw = err.rawPacket;
    // The packet the overflow happened in starts at the request (one write from the client):
    // the request line is over when it has no end within the packet or ends past the URL limit.
    if (Buffer.isBuffer(raw) && /^[A-Z]+ /.test(raw.subarray(0, 16).toString('latin1'))) {
      const end = raw.indexOf('\r\n');
      if (end === -1 || end > maxUrlBytes) return 'URI_TOO_LONG';
    }
    return 'HEADERS_TOO_LARGE';
  }
  return 'BAD_REQUEST';
}

/** The server's `clientError` handler: a JSON 4xx when the socket can still take it, then close. */
export function clientErrorHandler(maxUrlBytes: number): (err: Error & { code?: string; rawPacket?: unknown }, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, text, body] = ANSWERS[clientErrorAnswer(err, maxUrlBytes)];
    if (socket.writable) {
      socket.write(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${body.length}\r\n` + 'X-Content-Type-Options: nosniff\r\nX-Frame-Options: SAMEORIGIN\r\nConnection: close\r\n\r\n' + body);
    }
    socket.destroy();
  };
}
