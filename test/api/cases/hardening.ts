// The last differences from GitLab's API (issue 18, item 3), one table row each, asserting status,
// exact body and that nothing was written: pagination links from the configured external host
// (never the request's Host) and no previous page past the end; CORS on /api/* as GitLab's
// rack-cors set-up; the security headers on every answer; invalid UTF-8 in bodies and escapes;
// multipart and form bodies; a 40 KB query string; private_token before the header; a Sentry-mode
// setting without api_url; an envelope item of a type Sentry does not define.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultExternalHost } from '../../../host/api/index.js';
import type { Res } from '../../../support/api/http.js';
import type { Storage } from '../../../support/api/storage.js';
import { expectRes } from './access.js';
import { envelope, sentryEvent, startIngestionApi, type IngestionCtx as Ctx } from '../../../support/api/ingestion.js';

const EXTERNAL = 'errors.example.com:8443';
const B = {
  badRequest: 'Bad Request',
  invalidBody: { error: 'message body does not match declared format' },
  uriTooLong: { message: '414 URI Too Long' },
  headersTooLarge: { message: '431 Request Header Fields Too Large' },
  unknownItem: { message: '400 Bad Request' },
  unparsable: { message: '400 Bad request - Failed to parse sentry request' },
  sentryModeWithoutUrl: { message: '400 Bad request - Api url is a required field' },
  unauthorized: { message: '401 Unauthorized' },
  route: { error: '404 Not Found' },
};
const settingsUrl = (id: number) => `/api/v4/projects/${id}/error_tracking/settings`;
const keysUrl = (id: number) => `/api/v4/projects/${id}/error_tracking/client_keys`;
const ingestUrl = (id: number, kind = 'envelope') => `/errortracking/api/v1/projects/api/${id}/${kind}/`;

function multipart(fields: Record<string, string>, boundary = 'rae-test-boundary'): { body: string; headers: Record<string, string> } {
  const parts = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  return { body: `${parts.join('')}--${boundary}--\r\n`, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** What a row expects: status and exact body (a string is a text/plain body), plus extra checks. */
type Row = [name: string, run: (c: Ctx) => Promise<Res>, status: number, body: unknown, check?: (res: Res, c: Ctx) => Promise<void> | void];

const count = async ({ api }: Ctx, table: string, where = 'true', params: unknown[] = []) => (await api.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params))[0]!.n;

const ROWS: Row[] = [
  // pagination (lib/gitlab/pagination/offset_header_builder.rb, Kaminari)
  [
    'Link points at api.externalHost, not the request Host',
    (c) => c.api.call('GET', `${keysUrl(c.id)}?per_page=1`, { headers: { ...c.w.auth('maintainer'), host: 'evil.example' } }),
    200,
    undefined,
    (res) => {
      const link = String(res.headers.link);
      assert.not.match(link, /evil\.example/);
      assert.match(link, new RegExp(`^<https://${EXTERNAL}/api/v4/projects/\\d+/error_tracking/client_keys\\?page=1&per_page=1>; rel="first"`));
    },
  ],
  [
    'a page past the end has no previous or next page',
    (c) => c.api.call('GET', `${keysUrl(c.id)}?per_page=1&page=9`, { headers: c.w.auth('maintainer') }),
    200,
    [],
    (res) => {
      assert.equal([res.headers['x-page'], res.headers['x-prev-page'], res.headers['x-next-page'], res.headers['x-total-pages']], ['9', '', '', '1']);
      assert.not.match(String(res.headers.link), /rel="prev"|rel="next"/);
    },
  ],
  // CORS (config/application.rb: rack-cors, origins '*', credentials false, expose pagination headers)
  [
    'a cross-origin REST answer allows any origin, no credentials, exposes the pagination headers',
    (c) => c.api.call('GET', keysUrl(c.id), { headers: { ...c.w.auth('maintainer'), origin: 'https://app.example' } }),
    200,
    undefined,
    (res) => {
      assert.is(res.headers['access-control-allow-origin'], '*');
      assert.is(res.headers['access-control-allow-credentials'], undefined);
      assert.is(res.headers['access-control-expose-headers'], 'Link, X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page');
    },
  ],
  [
    'a cross-origin error answer carries CORS too',
    (c) => c.api.call('GET', settingsUrl(c.id), { headers: { origin: 'https://app.example' } }),
    401,
    B.unauthorized,
    (res) => {
      assert.is(res.headers['access-control-allow-origin'], '*');
    },
  ],
  [
    'a preflight is 200 with an empty body, before authentication',
    (c) => c.api.call('OPTIONS', settingsUrl(c.id), { headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'private-token, content-type' } }),
    200,
    '',
    (res) => {
      assert.equal(
        [res.headers['access-control-allow-origin'], res.headers['access-control-allow-methods'], res.headers['access-control-allow-headers'], res.headers['access-control-max-age']],
        ['*', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS', 'private-token, content-type', '7200'],
      );
    },
  ],
  [
    'OPTIONS that is not a preflight is the catch-all 404',
    (c) => c.api.call('OPTIONS', settingsUrl(c.id)),
    404,
    B.route,
    (res) => {
      assert.is(res.headers['access-control-allow-origin'], undefined, 'no Origin, no CORS');
    },
  ],
  // invalid UTF-8 and malformed escapes (Gitlab::Middleware::HandleMalformedStrings, Grape's JSON parser)
  [
    'invalid UTF-8 in a JSON body',
    (c) =>
      c.api.call('PUT', settingsUrl(c.w.publicProject.id), {
        headers: { ...c.w.auth('maintainer'), 'content-type': 'application/json' },
        body: Buffer.concat([Buffer.from('{"active":true,"integrated":true,"note":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
      }),
    400,
    B.invalidBody,
    async (_res, c) => assert.is(await count(c, 'error_tracking_settings', 'project_id = $1', [c.w.publicProject.id]), 0),
  ],
  ['an escape that is not UTF-8 in the query', (c) => c.api.call('GET', `/api/v4/projects/${c.id}/error_tracking/errors?search=%FF`, { headers: c.w.auth('reporter') }), 400, B.badRequest],
  [
    'an escape that is not UTF-8 in a form body',
    (c) =>
      c.api.call('PUT', settingsUrl(c.w.publicProject.id), {
        headers: { ...c.w.auth('maintainer'), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'active=true&integrated=true&note=%C3%28',
      }),
    400,
    B.badRequest,
    async (_res, c) => assert.is(await count(c, 'error_tracking_settings', 'project_id = $1', [c.w.publicProject.id]), 0),
  ],
  [
    'invalid UTF-8 in a Sentry store body',
    (c) =>
      c.api.call('POST', `${ingestUrl(c.id, 'store')}?sentry_key=${c.key}`, {
        body: Buffer.concat([Buffer.from('{"message":"bad '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
      }),
    400,
    B.unparsable,
  ],
  // form data (doc/api/rest: parameters as form-urlencoded or multipart)
  [
    'multipart/form-data is accepted',
    (c) => {
      const m = multipart({ active: 'true', integrated: 'true' });
      return c.api.call('PUT', settingsUrl(c.w.otherProject.id), { headers: { ...c.w.auth('admin'), ...m.headers }, body: m.body });
    },
    200,
    { active: true, project_name: null, errtrack_external_url: null, api_url: null, integrated: true },
  ],
  [
    'a multipart body without its closing delimiter',
    (c) => {
      const m = multipart({ active: 'false' });
      return c.api.call('PATCH', settingsUrl(c.w.otherProject.id), { headers: { ...c.w.auth('admin'), ...m.headers }, body: m.body.slice(0, -8) });
    },
    400,
    B.invalidBody,
  ],
  // sizes (nginx in front of GitLab: a request line over its buffers is 414)
  ['a 40 KB query string', (c) => c.api.call('GET', `${settingsUrl(c.id)}?search=${'a'.repeat(40 * 1024)}`, { headers: c.w.auth('maintainer') }), 414, B.uriTooLong],
  ['a 10 KB query string (over api.maxUrlBytes, within the header bytes)', (c) => c.api.call('GET', `${settingsUrl(c.id)}?search=${'a'.repeat(10 * 1024)}`, { headers: c.w.auth('maintainer') }), 414, B.uriTooLong],
  ['20 KB of headers with a short URL', (c) => c.api.call('GET', settingsUrl(c.id), { headers: { ...c.w.auth('maintainer'), 'x-filler': 'f'.repeat(20 * 1024) } }), 431, B.headersTooLarge],
  // tokens (AuthFinders#find_personal_access_token: the parameter first)
  ['private_token wins over a wrong PRIVATE-TOKEN header', (c) => c.api.call('GET', `${settingsUrl(c.id)}?private_token=${c.w.tokens.maintainer}`, { headers: c.w.auth('wrong') }), 200, undefined],
  ['a wrong private_token is 401 even with a good header', (c) => c.api.call('GET', `${settingsUrl(c.id)}?private_token=glpat-thisIsNotAValidToken0`, { headers: c.w.auth('maintainer') }), 401, B.unauthorized],
  // settings the model refuses (validates :api_url, presence, when enabled and not integrated)
  [
    'PUT active, not integrated, on a project with no setting',
    (c) => c.api.call('PUT', settingsUrl(c.w.publicProject.id), { headers: c.w.auth('maintainer'), json: { active: true, integrated: false } }),
    400,
    B.sentryModeWithoutUrl,
    async (_res, c) => {
      assert.is(await count(c, 'error_tracking_settings', 'project_id = $1', [c.w.publicProject.id]), 0, 'no setting created');
      assert.is(await count(c, 'error_tracking_client_keys', 'project_id = $1', [c.w.publicProject.id]), 0, 'no key created');
    },
  ],
  [
    'PATCH to Sentry mode without api_url leaves the setting as it was',
    (c) => c.api.call('PATCH', settingsUrl(c.id), { headers: c.w.auth('maintainer'), json: { active: true, integrated: false } }),
    400,
    B.sentryModeWithoutUrl,
    async (_res, c) => {
      assert.equal(await c.api.db.query('SELECT enabled, integrated FROM error_tracking_settings WHERE project_id = $1', [c.id]), [{ enabled: true, integrated: true }]);
    },
  ],
  // envelope items (collector.rb: an unknown request type is 400 "Bad Request")
  ['an envelope item of a type Sentry does not define, empty payload', (c) => c.api.call('POST', `${ingestUrl(c.id)}?sentry_key=${c.key}`, { body: '{"event_id":"u1"}\n{"type":"nonsense"}\n\n' }), 400, B.unknownItem],
  [
    'an envelope item without a type, before an event',
    (c) =>
      c.api.call('POST', `${ingestUrl(c.id)}?sentry_key=${c.key}`, {
        body: `{"event_id":"u2"}\n{"length":0}\n\n${envelope(sentryEvent('u2', 'E', 'v'))
          .split('\n')
          .slice(1)
          .join('\n')}`,
      }),
    400,
    B.unknownItem,
  ],
];

/** Registers the suite for one storage. */
export function hardeningSuite(storage: Storage): void {
  const s = suite<Ctx>(`api GitLab differences, hardening [${storage.name}]`);
  s.before(async (ctx) => {
    Object.assign(ctx, await startIngestionApi(storage, { configure: (c) => (c.api.externalHost = EXTERNAL) }));
  });
  s.after(async (ctx) => ctx.api?.close());
  const events = (c: Ctx) => count(c, 'error_tracking_error_events');

  for (const [name, run, status, body, check] of ROWS) {
    s(name, async (ctx) => {
      const before = await events(ctx);
      const res = await run(ctx);
      if (typeof body === 'string') {
        assert.is(res.status, status, `status (body ${res.text})`);
        assert.is(res.text, body);
      } else {
        expectRes(res, status, body, name);
      }
      // GitLab's lib/api/api.rb headers, on every answer
      assert.equal([res.headers['x-frame-options'], res.headers['x-content-type-options']], ['SAMEORIGIN', 'nosniff'], 'security headers');
      await check?.(res, ctx);
      assert.is(await events(ctx), before, 'no event stored');
      assert.equal(
        ctx.api.logs.filter((l) => /^api: [A-Z]+ \//.test(l)),
        [],
        'no internal error logged',
      );
    });
  }

  s('the security headers are on ingestion answers and events still go in', async (ctx) => {
    const res = await ctx.api.call('POST', `${ingestUrl(ctx.id)}?sentry_key=${ctx.key}`, { body: envelope(sentryEvent('h1', 'Error', 'with headers')) });
    expectRes(res, 200, { id: 'h1' });
    assert.equal([res.headers['x-frame-options'], res.headers['x-content-type-options'], res.headers['access-control-allow-origin']], ['SAMEORIGIN', 'nosniff', '*']);
  });

  s("externalHost's default follows the port and the scheme", () => {
    const table: Array<[string, number, string]> = [
      ['https', 443, 'localhost'],
      ['http', 80, 'localhost'],
      ['https', 8080, 'localhost:8080'],
      ['http', 443, 'localhost:443'],
    ];
    for (const [scheme, port, want] of table) assert.is(defaultExternalHost(scheme, port), want, `${scheme} ${port}`);
  });

  s.run();
}
