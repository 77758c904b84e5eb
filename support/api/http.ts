// A small HTTP client for the API tests (undici), trusting a test CA when one is given.
import { Agent, request } from 'undici';

/** One response, body read. */
export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

/** Request options: headers, a JSON body (`json`) or a raw body. */
export interface Req {
  headers?: Record<string, string>;
  json?: unknown;
  body?: string | Buffer;
}

/** A client bound to a base URL. */
export type Client = (method: string, path: string, req?: Req) => Promise<Res>;

/** Makes a client for `base`; `ca` (PEM) is trusted for https. */
export function client(base: string, ca?: Buffer): Client {
  const dispatcher = ca ? new Agent({ connect: { ca } }) : undefined;
  return async (method, path, req = {}) => {
    const headers: Record<string, string> = { ...req.headers };
    let body = req.body;
    if (req.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(req.json);
    }
    const res = await request(base + path, { method: method as 'GET', headers, body, dispatcher });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers, text, json };
  };
}
