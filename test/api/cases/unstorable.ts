// Strings PostgreSQL cannot store (issue 19, item 8): a null byte or a lone surrogate in a path,
// a query parameter, a REST body, an envelope header or the key it names, and a lone surrogate in
// an event payload are refused with GitLab's 400 "Bad Request" (Gitlab::Middleware::
// HandleNullBytes) instead of failing a query with a 500; nothing is stored, and the server keeps
// serving. A null byte in an event payload stays accepted (GitLab's collector specs), and well-formed
// astral characters pass.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { World } from '../../../support/api/api.js';
import type { Req } from '../../../support/api/http.js';
import type { Storage } from '../../../support/api/storage.js';
import { envelope, sentryEvent, startIngestionApi, type IngestionCtx as Ctx } from '../../../support/api/ingestion.js';

const LONE = '\ud800';
const envelopeUrl = (id: number | string, kind = 'envelope') => `/errortracking/api/v1/projects/api/${id}/${kind}/`;
const errorsUrl = (w: World) => `/api/v4/projects/${w.project.id}/error_tracking/errors`;
const settingsUrl = (w: World) => `/api/v4/projects/${w.project.id}/error_tracking/settings`;
/** A line the API's error handlers log for a 500 (`api: METHOD path: message`). */
const INTERNAL = /^api: [A-Z]+ \//;

type Case = [name: string, request: (c: Ctx) => { method: string; path: string; req?: Req }];
const REFUSED: Case[] = [
  ['NUL in the collector path (no credential)', () => ({ method: 'POST', path: envelopeUrl('%00'), req: { body: '{}' } })],
  ['NUL in sentry_key (no credential)', (c) => ({ method: 'POST', path: `${envelopeUrl(c.id)}?sentry_key=%00`, req: { body: envelope(sentryEvent('n1', 'E', 'v')) } })],
  [
    'NUL in the envelope dsn, escaped in its user (no credential)',
    (c) => ({ method: 'POST', path: envelopeUrl(c.id), req: { body: envelope(sentryEvent('n2', 'E', 'v'), { dsn: `https://${c.key}%00@localhost/errortracking/api/v1/projects/${c.id}` }) } }),
  ],
  [
    'NUL in the envelope dsn, as a JSON escape (no credential)',
    (c) => ({ method: 'POST', path: envelopeUrl(c.id), req: { body: envelope(sentryEvent('n3', 'E', 'v'), { dsn: `https://\u0000@localhost/errortracking/api/v1/projects/${c.id}` }) } }),
  ],
  ['a lone surrogate in an envelope event', (c) => ({ method: 'POST', path: `${envelopeUrl(c.id)}?sentry_key=${c.key}`, req: { body: envelope(sentryEvent('s1', 'TypeError', `bad ${LONE} value`)) } })],
  ['a lone surrogate in a store event', (c) => ({ method: 'POST', path: `${envelopeUrl(c.id, 'store')}?sentry_key=${c.key}`, req: { json: { ...sentryEvent('s2', 'TypeError', 'v'), extra: { [`k${LONE}`]: 1 } } } })],
  ['NUL in errors?search=', (c) => ({ method: 'GET', path: `${errorsUrl(c.w)}?search=%00`, req: { headers: c.w.auth('reporter') } })],
  ['NUL in the REST path', (c) => ({ method: 'GET', path: `/api/v4/projects/${c.w.project.id}%00/error_tracking/errors`, req: { headers: c.w.auth('reporter') } })],
  ['NUL in a JSON body', (c) => ({ method: 'PUT', path: settingsUrl(c.w), req: { headers: c.w.auth('maintainer'), json: { active: true, integrated: true, note: 'a\u0000' } } })],
  ['a lone surrogate in a JSON body key', (c) => ({ method: 'PUT', path: settingsUrl(c.w), req: { headers: c.w.auth('maintainer'), json: { active: true, integrated: true, [LONE]: 1 } } })],
  ['NUL in a form body', (c) => ({ method: 'PUT', path: settingsUrl(c.w), req: { headers: { ...c.w.auth('maintainer'), 'content-type': 'application/x-www-form-urlencoded' }, body: 'active=true&integrated=true&note=%00' } })],
];

/** Registers the suite for one storage. */
export function unstorableSuite(storage: Storage): void {
  const s = suite<Ctx>(`api unstorable strings [${storage.name}]`);
  s.before(async (ctx) => {
    Object.assign(ctx, await startIngestionApi(storage));
  });
  s.after(async (ctx) => ctx.api?.close());
  const stored = async ({ api, id }: Ctx) => (await api.db.query<{ n: number }>('SELECT count(*)::int AS n FROM error_tracking_error_events e JOIN error_tracking_errors g ON g.id = e.error_id WHERE g.project_id = $1', [id]))[0]!.n;

  for (const [name, make] of REFUSED) {
    s(`400 Bad Request: ${name}; nothing stored, the server keeps serving`, async (ctx) => {
      const before = await stored(ctx);
      const { method, path, req } = make(ctx);
      const res = await ctx.api.call(method, path, req);
      assert.is(res.status, 400, `body ${res.text}`);
      assert.is(res.text, 'Bad Request');
      assert.match(String(res.headers['content-type']), /^text\/plain/);
      assert.is(await stored(ctx), before);
      const list = await ctx.api.call('GET', `${errorsUrl(ctx.w)}?search=ok`, { headers: ctx.w.auth('reporter') });
      assert.is(list.status, 200, list.text);
      assert.equal(
        ctx.api.logs.filter((l) => INTERNAL.test(l)),
        [],
        'no internal error logged',
      );
    });
  }

  s('accepted: a null byte in an event payload (dropped), astral characters anywhere', async (ctx) => {
    const { api, key, id, w } = ctx;
    const before = await stored(ctx);
    const nul = await api.call('POST', `${envelopeUrl(id)}?sentry_key=${key}`, { body: envelope(sentryEvent('ok1', 'TypeError', 'nul\u0000here')) });
    assert.is(nul.status, 200, nul.text);
    const emoji = await api.call('POST', `${envelopeUrl(id, 'store')}?sentry_key=${key}`, { json: sentryEvent('ok2', 'RangeError', 'rocket \u{1F680}') });
    assert.is(emoji.status, 200, emoji.text);
    assert.is(await stored(ctx), before + 2);
    const found = await api.call('GET', `${errorsUrl(w)}?search=${encodeURIComponent('\u{1F680}')}`, { headers: w.auth('reporter') });
    assert.is(found.status, 200, found.text);
    assert.equal(
      (found.json as Array<{ description: string }>).map((e) => e.description),
      ['rocket \u{1F680}'],
    );
    const nulRow = await api.call('GET', `${errorsUrl(w)}?search=nulhere`, { headers: w.auth('reporter') });
    assert.equal(
      (nulRow.json as Array<{ description: string }>).map((e) => e.description),
      ['nulhere'],
    );
  });
  s.run();
}
