// The console's calls to the server that serves it: JSON over fetch with the signed-in token
// (`Authorization: Bearer`, kept in sessionStorage: it lasts as long as the tab and is sent to
// this origin only), and the live stream of new alerts, read from the Server-Sent Events route
// with fetch (EventSource cannot send the header). A 401 signs out (the token was revoked or
// expired) and shows the sign-in page.

const KEY = 'rae-console-token';
const USER = 'rae-console-user';

/** One stored alert (docs/console.md): Falco's JSON with the store's id first. */
export interface Alert {
  id: number;
  time: string;
  priority: string;
  rule: string;
  source: string;
  hostname?: string;
  output: string;
  output_fields: Record<string, unknown>;
  tags?: string[];
}

/** A failed call: its HTTP status and the server's message. */
class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The token of this tab's session ('' when signed out). */
export function token(): string {
  return sessionStorage.getItem(KEY) ?? '';
}

let signedOut: () => void = () => {};

/** What a 401 does (main.ts: show the sign-in page). */
export function onSignedOut(f: () => void): void {
  signedOut = f;
}

/** The signed-in user's name ('' when signed out). */
export function userName(): string {
  return sessionStorage.getItem(USER) ?? '';
}

/** Forgets the token. */
export function signOut(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(USER);
}

/** `?a=1&b=2` of the parameters that have a value. */
export function queryOf(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

async function problemOf(res: Response): Promise<string> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const m = body.message ?? body.error;
    if (m !== undefined) return typeof m === 'string' ? m : JSON.stringify(m);
  } catch {
    // not JSON: the text itself
  }
  return text.trim() || res.statusText;
}

async function answer<T>(res: Response): Promise<T> {
  if (res.status === 401) {
    signOut();
    signedOut();
  }
  if (!res.ok) throw new ApiFailure(res.status, `HTTP ${res.status}: ${await problemOf(res)}`);
  return (await res.json()) as T;
}

/** GET `path` with the parameters that have a value. */
export async function getJson<T>(path: string, params: Record<string, string | undefined> = {}): Promise<T> {
  return answer<T>(await fetch(path + queryOf(params), { headers: { authorization: `Bearer ${token()}`, accept: 'application/json' } }));
}

/** PUT a JSON body to `path`. */
export async function putJson<T>(path: string, body: unknown): Promise<T> {
  return answer<T>(await fetch(path, { method: 'PUT', headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }));
}

/** Checks a candidate token with the server and keeps it when valid; else the reason it was refused. */
export async function signIn(candidate: string): Promise<{ username: string } | { problem: string }> {
  const res = await fetch('/console/api/whoami', { headers: { authorization: `Bearer ${candidate}` } });
  if (!res.ok) return { problem: `Sign-in refused (HTTP ${res.status}): ${await problemOf(res)}` };
  const user = (await res.json()) as { username: string };
  sessionStorage.setItem(KEY, candidate);
  sessionStorage.setItem(USER, user.username);
  return user;
}

/**
 * Reads new alerts matching `params` from the stream (after `lastId`, the newest the caller has,
 * when given) until `signal` aborts or the server ends it (then it resolves: the caller reconnects
 * from the last alert it saw); `open` runs once the server has answered.
 */
export async function streamAlerts(params: Record<string, string | undefined>, lastId: number | undefined, on: { open(): void; alert(a: Alert): void }, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { authorization: `Bearer ${token()}`, accept: 'text/event-stream' };
  if (lastId !== undefined) headers['last-event-id'] = String(lastId);
  const res = await fetch(`/api/v1/events/stream${queryOf(params)}`, { headers, signal });
  if (!res.ok || !res.body) return void (await answer(res));
  on.open();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const data = block
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      if (block.includes('event: alert') && data !== '') on.alert(JSON.parse(data) as Alert);
    }
  }
}
