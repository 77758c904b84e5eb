// Table-driven: every endpoint against every caller (roles, admin, outsider, no token, wrong,
// expired, revoked and read_api tokens), then every bad input, asserting status and exact body.
// GitLab's order: 401, project 404, role 403, parameters 400, the endpoint's own 404.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createKey, recordErrorEvent } from '../../../host/api/db/index.js';
import { seedWorld, startTestApi, type TestApi, type Who, type World } from '../../../support/api/api.js';
import type { Req, Res } from '../../../support/api/http.js';
import type { Storage } from '../../../support/api/storage.js';

const B = {
  unauthorized: { message: '401 Unauthorized' },
  expired: { error: 'invalid_token', error_description: 'Token is expired. You can either do re-authorization or token refresh.' },
  revoked: { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' },
  scope: { error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api' },
  projectNotFound: { message: '404 Project Not Found' },
  forbidden: { message: '403 Forbidden' },
  settingNotFound: { message: '404 Error Tracking Setting Not Found' },
  keyNotFound: { message: '404 Not found' },
  route: { error: '404 Not Found' },
  invalidBody: { error: 'message body does not match declared format' },
};

/** Asserts status and the exact body text (key order included). */
export function expectRes(res: Res, status: number, body?: unknown, what = ''): void {
  assert.is(res.status, status, `${what}: status (body ${res.text})`);
  if (body !== undefined) assert.is(res.text, JSON.stringify(body), `${what}: body`);
  if (body !== undefined) assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: content type`);
}

type Endpoint = { name: string; method: string; path: (w: World, t: TestApi) => Promise<string> | string; req?: Req; ok: number; min: 'maintainer' | 'developer' | 'reporter' };

const settings = (w: World) => `/api/v4/projects/${w.project.id}/error_tracking/settings`;
const keys = (w: World) => `/api/v4/projects/${w.project.id}/error_tracking/client_keys`;
/** An error of the project, stored as the collector would (one event), and its path. */
async function anError(w: World, t: TestApi): Promise<string> {
  const payload = { exception: { values: [{ type: 'AccessError', value: 'v' }] } };
  const at = new Date();
  const id = await recordErrorEvent(t.db, {
    projectId: w.project.id,
    fingerprint: 'access',
    name: 'AccessError',
    description: 'v',
    actor: 'a',
    platform: '',
    userKey: null,
    eventId: null,
    environment: null,
    level: null,
    occurredAt: at,
    payload,
  });
  return `/api/v4/projects/${w.project.id}/error_tracking/errors/${id}`;
}
const ENDPOINTS: Endpoint[] = [
  { name: 'PUT settings', method: 'PUT', path: settings, req: { json: { active: true, integrated: true } }, ok: 200, min: 'maintainer' },
  { name: 'GET settings', method: 'GET', path: settings, ok: 200, min: 'maintainer' },
  { name: 'PATCH settings', method: 'PATCH', path: settings, req: { json: { active: true } }, ok: 200, min: 'maintainer' },
  { name: 'GET client_keys', method: 'GET', path: keys, ok: 200, min: 'maintainer' },
  { name: 'POST client_keys', method: 'POST', path: keys, ok: 201, min: 'maintainer' },
  {
    name: 'DELETE client_keys/:key_id',
    method: 'DELETE',
    path: async (w, t) => `${keys(w)}/${(await createKey(t.db, w.project.id)).id}`,
    ok: 200,
    min: 'maintainer',
  },
  { name: 'GET errors', method: 'GET', path: (w) => `/api/v4/projects/${w.project.id}/error_tracking/errors`, ok: 200, min: 'reporter' },
  { name: 'GET errors/:error_id', method: 'GET', path: anError, ok: 200, min: 'reporter' },
  { name: 'GET errors/:error_id/latest_event', method: 'GET', path: async (w, t) => `${await anError(w, t)}/latest_event`, ok: 200, min: 'reporter' },
  { name: 'GET errors/:error_id/events', method: 'GET', path: async (w, t) => `${await anError(w, t)}/events`, ok: 200, min: 'reporter' },
  { name: 'PUT errors/:error_id', method: 'PUT', path: anError, req: { json: { status: 'resolved' } }, ok: 200, min: 'developer' },
];

const CALLERS: Who[] = ['none', 'wrong', 'expired', 'revoked', 'outsider', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin', 'readonly'];
const LEVEL: Record<string, number> = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50, admin: 60, readonly: 40 };

function expected(e: Endpoint, who: Who): { status: number; body?: unknown } {
  if (who === 'none' || who === 'wrong') return { status: 401, body: B.unauthorized };
  if (who === 'expired') return { status: 401, body: B.expired };
  if (who === 'revoked') return { status: 401, body: B.revoked };
  if (who === 'readonly' && e.method !== 'GET') return { status: 403, body: B.scope };
  if (who === 'outsider') return { status: 404, body: B.projectNotFound };
  const need = { maintainer: 40, developer: 30, reporter: 20 }[e.min];
  return LEVEL[who]! >= need ? { status: e.ok } : { status: 403, body: B.forbidden };
}

/** Registers the access and bad-input suites for one storage. */
export function accessSuites(storage: Storage): void {
  const s = suite<{ api: TestApi; w: World }>(`api access [${storage.name}]`);
  s.before(async (ctx) => {
    ctx.api = await startTestApi(storage);
    ctx.w = await seedWorld(ctx.api.db);
  });
  s.after(async (ctx) => ctx.api?.close());

  s('no setting yet: GET and PATCH answer the endpoint 404 after the checks', async ({ api, w }) => {
    expectRes(await api.call('GET', settings(w), { headers: w.auth('maintainer') }), 404, B.settingNotFound, 'GET');
    expectRes(await api.call('PATCH', settings(w), { headers: w.auth('maintainer'), json: { active: true } }), 404, B.settingNotFound, 'PATCH');
    expectRes(await api.call('GET', settings(w), { headers: w.auth('developer') }), 403, B.forbidden, 'developer');
  });

  for (const e of ENDPOINTS) {
    s(`${e.name}: every caller`, async ({ api, w }) => {
      for (const who of CALLERS) {
        const want = expected(e, who);
        const res = await api.call(e.method, await e.path(w, api), { ...e.req, headers: w.auth(who) });
        expectRes(res, want.status, want.body, `${e.name} as ${who}`);
      }
    });
  }

  s('Authorization: Bearer and the private_token parameter authenticate too', async ({ api, w }) => {
    const t = w.tokens.maintainer;
    expectRes(await api.call('GET', keys(w), { headers: { authorization: `Bearer ${t}` } }), 200);
    expectRes(await api.call('GET', `${keys(w)}?private_token=${t}`), 200);
    expectRes(await api.call('GET', `${keys(w)}?access_token=${t}`), 200);
    expectRes(await api.call('GET', keys(w), { headers: { authorization: `Basic ${t}` } }), 401, B.unauthorized, 'Basic is not a token');
    expectRes(await api.call('GET', keys(w), { headers: { 'job-token': t } }), 401, B.unauthorized, 'JOB-TOKEN is ignored');
  });

  s('project ids: id, URL-encoded path in any case; others 404', async ({ api, w }) => {
    const h = { headers: w.auth('maintainer') };
    const at = (id: string) => `/api/v4/projects/${id}/error_tracking/client_keys`;
    expectRes(await api.call('GET', at(encodeURIComponent(w.project.path)), h), 200, undefined, 'path');
    expectRes(await api.call('GET', at(encodeURIComponent(w.project.path.toUpperCase())), h), 200, undefined, 'upper case');
    expectRes(await api.call('GET', at('aCmE%2fwEb-sHoP'), h), 200, undefined, 'lower-case %2f');
    expectRes(await api.call('GET', at('acme/web-shop'), h), 404, B.route, 'unencoded slash matches no route');
    for (const id of ['999999', '99999999999999', 'Web-Shop', '-1', 'acme%2Fmissing', '0']) {
      expectRes(await api.call('GET', at(id), h), 404, B.projectNotFound, id);
    }
    expectRes(await api.call('GET', at('999999'), { headers: w.auth('none') }), 401, B.unauthorized, '401 before 404');
  });

  s('public project: an outsider sees it, so gets 403, not 404', async ({ api, w }) => {
    const res = await api.call('GET', `/api/v4/projects/${w.publicProject.id}/error_tracking/client_keys`, { headers: w.auth('outsider') });
    expectRes(res, 403, B.forbidden);
    expectRes(await api.call('GET', `/api/v4/projects/${w.otherProject.id}/error_tracking/client_keys`, { headers: w.auth('admin') }), 200, undefined, 'admin');
  });

  s('bad inputs: exact Grape messages, after the role check', async ({ api, w }) => {
    const h = w.auth('maintainer');
    const cases: Array<[string, Req, number, unknown]> = [
      ['PUT', { json: {} }, 400, { error: 'active is missing, active is empty, integrated is missing' }],
      ['PUT', { json: { active: true } }, 400, { error: 'integrated is missing' }],
      ['PUT', { json: { integrated: true } }, 400, { error: 'active is missing, active is empty' }],
      ['PUT', { json: { active: '', integrated: true } }, 400, { error: 'active is empty' }],
      ['PUT', { json: { active: null, integrated: true } }, 400, { error: 'active is empty' }],
      ['PUT', { json: { active: 'randomstring', integrated: true } }, 400, { error: 'active is invalid' }],
      ['PUT', { json: { active: true, integrated: 'invalid_string' } }, 400, { error: 'integrated is invalid' }],
      ['PUT', { json: { active: [true], integrated: {} } }, 400, { error: 'active is invalid, integrated is invalid' }],
      ['PUT', { json: { active: true, integrated: null } }, 400, { error: 'integrated is empty' }],
      ['PATCH', { json: {} }, 400, { error: 'active is missing, active is empty' }],
      ['PATCH', { json: { active: '' } }, 400, { error: 'active is empty' }],
      ['PATCH', { json: { active: 'randomstring' } }, 400, { error: 'active is invalid' }],
      ['PATCH', { json: { active: true, integrated: 'nope' } }, 400, { error: 'integrated is invalid' }],
      ['PATCH', { body: '{"active": tru', headers: { 'content-type': 'application/json' } }, 400, B.invalidBody],
      ['PUT', { body: 'active=true', headers: { 'content-type': 'text/plain' } }, 415, { message: '415 Unsupported Media Type' }],
    ];
    for (const [method, req, status, body] of cases) {
      const res = await api.call(method, settings(w), { ...req, headers: { ...h, ...req.headers } });
      expectRes(res, status, body, `${method} ${req.body ?? JSON.stringify(req.json)}`);
    }
  });

  s('order: a developer with a bad body gets 403; no token with a bad body and a missing project gets 401', async ({ api, w }) => {
    const bad = { body: '{not json', headers: { 'content-type': 'application/json' } };
    expectRes(await api.call('PUT', settings(w), { ...bad, headers: { ...bad.headers, ...w.auth('developer') } }), 403, B.forbidden, 'developer');
    expectRes(await api.call('PUT', '/api/v4/projects/424242/error_tracking/settings', bad), 401, B.unauthorized, 'anonymous');
    expectRes(await api.call('PUT', '/api/v4/projects/424242/error_tracking/settings', { ...bad, headers: { ...bad.headers, ...w.auth('owner') } }), 404, B.projectNotFound, 'owner, missing project');
    expectRes(await api.call('PATCH', settings(w), { json: {}, headers: w.auth('guest') }), 403, B.forbidden, 'guest, empty PATCH');
  });

  s('lists: bad page and filter values are 400', async ({ api, w }) => {
    const h = { headers: w.auth('maintainer') };
    expectRes(await api.call('GET', `${keys(w)}?page=abc`, h), 400, { error: 'page is invalid' });
    expectRes(await api.call('GET', `${keys(w)}?per_page=1.5&page=x`, h), 400, { error: 'page is invalid, per_page is invalid' });
    const errors = `/api/v4/projects/${w.project.id}/error_tracking/errors`;
    expectRes(await api.call('GET', `${errors}?status=bogus&sort=worst`, h), 400, { error: 'status does not have a valid value, sort does not have a valid value' });
  });

  s('client key deletion: unknown, foreign and non-numeric ids are 404 "Not found"', async ({ api, w }) => {
    const h = { headers: w.auth('maintainer') };
    const foreign = await createKey(api.db, w.otherProject.id);
    for (const id of ['abc', '999999', String(foreign.id), '99999999999', '1e3', '-1']) {
      expectRes(await api.call('DELETE', `${keys(w)}/${id}`, h), 404, B.keyNotFound, id);
    }
    const mine = (await api.call('POST', keys(w), h)).json as { id: number };
    expectRes(await api.call('DELETE', `${keys(w)}/${mine.id}`, h), 200, undefined, 'first delete');
    expectRes(await api.call('DELETE', `${keys(w)}/${mine.id}`, h), 404, B.keyNotFound, 'second delete');
  });

  s('unknown routes and verbs: the catch-all 404 with key "error"', async ({ api, w }) => {
    const h = { headers: w.auth('maintainer') };
    expectRes(await api.call('GET', `${keys(w)}/1`, h), 404, B.route, 'GET one key');
    expectRes(await api.call('POST', settings(w), h), 404, B.route, 'POST settings');
    expectRes(await api.call('GET', '/api/v4/nothing', {}), 404, B.route, 'unknown path');
    expectRes(await api.call('GET', '/api/v4/projects/a%2F%ZZ/error_tracking/settings', h), 400, { message: '400 Bad request - malformed URL' }, 'bad escape');
    expectRes(await api.call('GET', `/api/v4/projects/${'x'.repeat(1001)}/error_tracking/settings`, h), 414, { message: '414 URI Too Long' }, 'long id');
  });

  s.run();
}
