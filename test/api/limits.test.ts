// The API's limits as configuration (issue 18, item 4; docs/security-api.md): each configured
// small, then exceeded by a real client over TCP — connections per client address, a client
// that never finishes its headers or its body, body sizes — and the checks of the keys.
import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { apiLimitsOf } from '../../host/api/index.js';
import { defaultConfig } from '../../host/config/config.js';
import { envelope, sentryEvent, startIngestionApi, type IngestionCtx } from '../../support/api/ingestion.js';
import { pgliteStorage } from '../../support/api/storage.js';

/** Deadline for the server to act on a limit: wide, the event itself is awaited. */
const DEADLINE_MS = 30_000;
const storage = pgliteStorage();
let ctx: IngestionCtx;

/** Opens a connection; resolves once connected. */
function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    s.once('error', reject);
  });
}

/** Everything the server sends until it closes the connection (or the deadline passes). */
function untilClosed(s: Socket): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    s.on('data', (c: Buffer) => (text += c.toString('latin1')));
    s.on('error', () => {});
    const timer = setTimeout(() => resolve({ text, closed: false }), DEADLINE_MS);
    s.once('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
  });
}

/** The status of a GET on a fresh connection, or 0 when the connection is closed without one. */
async function getStatus(url: string, path: string): Promise<number> {
  const s = await open(url);
  const done = untilClosed(s);
  s.end(`GET ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
  const { text } = await done;
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
}

test('start with small limits', async () => {
  ctx = await startIngestionApi(storage, {
    configure: (c) => Object.assign(c.api, { maxConnectionsPerClient: 3, headersTimeoutSeconds: 1, requestTimeoutSeconds: 2, maxBodyBytes: 1000, maxEventBytes: 2000 }),
  });
});

test('a client address over api.maxConnectionsPerClient is closed at once; a slot freed is usable again', async () => {
  const held = [await open(ctx.api.url), await open(ctx.api.url), await open(ctx.api.url)];
  const over = await open(ctx.api.url);
  const refused = await untilClosed(over);
  assert.equal(refused, { text: '', closed: true }, 'the fourth connection is closed without an answer');
  assert.ok(
    ctx.api.logs.some((l) => /refused a connection from 127\.0\.0\.1: over api\.maxConnectionsPerClient \(3\)/.test(l)),
    ctx.api.logs.join('\n'),
  );
  // a held connection still serves
  const answer = untilClosed(held[0]!);
  held[0]!.end('GET /api/v4/projects/1/error_tracking/settings HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');
  assert.match((await answer).text, /^HTTP\/1\.1 401 /);
  // once the server has seen that close, a new connection is accepted (retried until then)
  const until = Date.now() + DEADLINE_MS;
  let status = 0;
  while (status === 0 && Date.now() < until) status = await getStatus(ctx.api.url, '/api/v4/projects/1/error_tracking/settings');
  assert.is(status, 401);
  for (const s of held) s.destroy();
});

test('a client that never finishes its headers gets 408 and the connection closes', async () => {
  const s = await open(ctx.api.url);
  const done = untilClosed(s);
  s.write('GET /api/v4/projects/1/error_tracking/settings HTTP/1.1\r\nHost: t\r\nX-Slow: ');
  const { text, closed } = await done;
  assert.ok(closed, 'closed by the server');
  assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  assert.match(text, /\{"message":"408 Request Timeout"\}$/);
});

test('a client that never finishes its body gets 408 and the connection closes', async () => {
  const s = await open(ctx.api.url);
  const done = untilClosed(s);
  s.write(`PUT /api/v4/projects/${ctx.id}/error_tracking/settings HTTP/1.1\r\nHost: t\r\nPRIVATE-TOKEN: ${ctx.w.tokens.maintainer}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"active":`);
  const { text, closed } = await done;
  assert.ok(closed, 'closed by the server');
  assert.match(text, /^HTTP\/1\.1 408 /);
  const setting = await ctx.api.db.query('SELECT enabled FROM error_tracking_settings WHERE project_id = $1', [ctx.id]);
  assert.equal(setting, [{ enabled: true }], 'nothing written');
});

test('bodies over api.maxBodyBytes and api.maxEventBytes are 413', async () => {
  const rest = await ctx.api.call('PUT', `/api/v4/projects/${ctx.id}/error_tracking/settings`, { headers: ctx.w.auth('maintainer'), json: { active: true, integrated: true, pad: 'x'.repeat(1000) } });
  assert.is(rest.status, 413, rest.text);
  assert.is(rest.text, '{"message":"413 Request Entity Too Large"}');
  const event = await ctx.api.call('POST', `/errortracking/api/v1/projects/api/${ctx.id}/envelope/?sentry_key=${ctx.key}`, { body: envelope({ ...sentryEvent('big', 'E', 'v'), pad: 'x'.repeat(2000) }) });
  assert.is(event.status, 413, event.text);
  assert.is(event.text, 'Payload Too Large');
  const fits = await ctx.api.call('POST', `/errortracking/api/v1/projects/api/${ctx.id}/envelope/?sentry_key=${ctx.key}`, { body: envelope(sentryEvent('small', 'E', 'v')) });
  assert.is(fits.status, 200, fits.text);
});

test('every limit must be a positive integer; the header timeout within the request timeout', () => {
  const table: Array<[Record<string, number>, string]> = [
    [{ maxBodyBytes: 0 }, 'api.maxBodyBytes: expected a positive integer, got 0'],
    [{ maxConnectionsPerClient: -1 }, 'api.maxConnectionsPerClient: expected a positive integer, got -1'],
    [{ maxUrlBytes: 1.5 }, 'api.maxUrlBytes: expected a positive integer, got 1.5'],
    [{ headersTimeoutSeconds: 90 }, 'api.headersTimeoutSeconds (90) must not exceed api.requestTimeoutSeconds (60)'],
  ];
  for (const [change, problem] of table) {
    const api = { ...defaultConfig({}).api, ...change };
    assert.equal(apiLimitsOf(api), { problem }, JSON.stringify(change));
  }
  assert.not.ok('problem' in apiLimitsOf(defaultConfig({}).api), 'the defaults are valid');
});

test('clean-up', async () => {
  await ctx?.api.close();
  await storage.shutdown();
});

test.run();
