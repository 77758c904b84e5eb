// The HTTP transport of the webhook and chat outputs: one undici Agent per output (TLS from the
// output's checkcert / mutualtls / mtls* settings), a request per attempt with the output's
// timeout. Any 2xx is a delivery; another status, a connection error or the timeout is the
// reason of a failed attempt. Mutual TLS files are read at start: a missing file stops the start.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { Agent } from 'undici';
import type { OutputSettings } from './settings.js';
import type { AttemptResult } from './types.js';

const USER_AGENT = 'runtime-audit-engine';

/** One HTTP endpoint. */
export interface HttpPoster {
  post(body: string, signal: AbortSignal, extraHeaders?: Record<string, string>): Promise<AttemptResult>;
  close(): Promise<void>;
}

function readPem(s: OutputSettings, key: string): Buffer | undefined {
  const file = s.string(key);
  if (file === '') return undefined;
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`forwarder.outputs.${s.name}.${key}: cannot read ${file}: ${(err as Error).message}`);
  }
}

function hasSetting(s: OutputSettings, key: string): boolean {
  try {
    s.string(key);
    return true;
  } catch {
    return false;
  }
}

/**
 * undici, imported by the first poster made: a start without HTTP outputs never loads it (about
 * 1.3 s of a start's module loading, profiled under load; issue #33).
 */
let undici: Promise<typeof import('undici')> | undefined;

/** A poster to `url` with the output's TLS, timeout, method and headers. */
export function createHttpPoster(s: OutputSettings, url: string, opts: { method?: string; headers?: Record<string, string>; gzip?: boolean; contentType?: string } = {}): HttpPoster {
  const timeoutMs = s.number('timeoutms');
  const tls = hasSetting(s, 'mtlscacert');
  const mutual = tls && s.bool('mutualtls');
  if (mutual && (s.string('mtlsclientcert') === '' || s.string('mtlsclientkey') === '')) throw new Error(`forwarder.outputs.${s.name}.mutualtls: needs mtlsclientcert and mtlsclientkey`);
  const connect = tls
    ? {
        ca: readPem(s, 'mtlscacert'),
        cert: mutual ? readPem(s, 'mtlsclientcert') : undefined,
        key: mutual ? readPem(s, 'mtlsclientkey') : undefined,
        // falcosidekick: with mutualtls the server certificate is always checked.
        rejectUnauthorized: mutual || s.bool('checkcert'),
      }
    : undefined;
  undici ??= import('undici');
  // Once loaded, a post takes the library and the agent as values, without awaiting them.
  let ready: { request: typeof import('undici').request; agent: Agent } | undefined;
  const loading = undici.then(({ Agent, request }) => {
    ready = { request, agent: new Agent({ connections: 4, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connect }) };
    return ready;
  });
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json', 'user-agent': USER_AGENT, ...opts.headers };
  if (opts.gzip) headers['content-encoding'] = 'gzip';
  return {
    async post(body, closing, extraHeaders) {
      try {
        const { request, agent } = ready ?? (await loading);
        const res = await request(url, {
          method: (opts.method ?? 'POST') as 'POST',
          body: opts.gzip ? gzipSync(body) : body,
          headers: extraHeaders ? { ...headers, ...extraHeaders } : headers,
          dispatcher: agent,
          signal: AbortSignal.any([closing, AbortSignal.timeout(timeoutMs)]),
        });
        await res.body.dump();
        return res.statusCode >= 200 && res.statusCode < 300 ? undefined : `HTTP ${res.statusCode}`;
      } catch (err) {
        const e = err as Error & { code?: string; cause?: { code?: string } };
        if (e.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
        return e.cause?.code ?? e.code ?? e.message;
      }
    },
    close: async () => (await loading).agent.close(),
  };
}
