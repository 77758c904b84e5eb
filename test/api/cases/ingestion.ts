// Sentry ingestion over raw HTTP: envelopes and store bodies, key sources, GitLab's collector
// checks and bodies, gzip and the 200 KiB cap, grouping, and the error list.
import { gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createKey, upsertSetting } from '../../../host/api/db/index.js';
import { envelope, sentryEvent, startIngestionApi, type IngestionCtx } from '../../../support/api/ingestion.js';
import type { Storage } from '../../../support/api/storage.js';
import { expectRes } from './access.js';

const B = {
  notFound: { message: '404 Not Found' },
  projectNotFound: { message: '404 Project Not Found' },
  unparsable: { message: '400 Bad request - Failed to parse sentry request' },
  unsupported: { message: '400 Bad request - Unsupported sentry payload' },
};

type Ctx = IngestionCtx;

/** Registers the ingestion suite for one storage. */
export function ingestionSuites(storage: Storage): void {
  const s = suite<Ctx>(`api sentry ingestion [${storage.name}]`);
  s.before(async (ctx) => {
    Object.assign(ctx, await startIngestionApi(storage));
  });
  s.after(async (ctx) => ctx.api?.close());
  const url = (id: number | string, kind = 'envelope', slash = '/') => `/errortracking/api/v1/projects/api/${id}/${kind}${slash}`;
  const list = async ({ api, w }: Ctx, query = '') => (await api.call('GET', `/api/v4/projects/${w.project.id}/error_tracking/errors${query}`, { headers: w.auth('reporter') })).json as Array<Record<string, unknown>>;

  s('an envelope is stored and listed; the answer carries the event id', async (ctx) => {
    const { api, key, id } = ctx;
    const res = await api.call('POST', `${url(id)}?sentry_key=${key}&sentry_version=7`, { body: envelope(sentryEvent('a1', 'TypeError', 'x is undefined')), headers: { 'content-type': 'application/x-sentry-envelope' } });
    expectRes(res, 200, { id: 'a1' });
    assert.is(res.headers['access-control-allow-origin'], '*');
    const errors = await list(ctx);
    assert.equal(
      errors.map((e) => [e.name, e.description, e.actor, e.platform, e.status, e.event_count]),
      [['TypeError', 'x is undefined', 'handler(app)', 'node', 'unresolved', 1]],
    );
    assert.is(errors[0]!.first_seen_at, '2023-11-14T22:13:20.500Z');
  });

  s('keys from X-Sentry-Auth and from the envelope dsn; lengths; gzip; store; grouping', async (ctx) => {
    const { api, key, id } = ctx;
    const auth = { 'x-sentry-auth': `Sentry sentry_version=7, sentry_client=test/1.0, sentry_key=${key}, sentry_secret=ignored` };
    expectRes(await api.call('POST', url(id), { body: envelope(sentryEvent('a2', 'TypeError', 'y is undefined'), { withLength: true }), headers: auth }), 200, { id: 'a2' });
    const dsn = `https://${key}@localhost:8080/errortracking/api/v1/projects/${id}`;
    expectRes(await api.call('POST', url(id, 'envelope', ''), { body: envelope(sentryEvent('a3', 'TypeError', 'z is undefined'), { dsn }) }), 200, { id: 'a3' });
    const gz = gzipSync(envelope(sentryEvent('a4', 'RangeError', 'too far', 'walk', 'geo')));
    expectRes(await api.call('POST', url(id), { body: gz, headers: { ...auth, 'content-encoding': 'gzip', 'content-type': 'application/x-sentry-envelope' } }), 200, { id: 'a4' });
    const store = { ...sentryEvent('a5', 'RangeError', 'too far again', 'walk', 'geo'), transaction: 'GET /map' };
    expectRes(await api.call('POST', url(id, 'store'), { json: store, headers: auth }), 200, { id: 'a5' });
    // grouped by type and frames (docs/api.md): the transaction names the group, never splits it
    const errors = await list(ctx, '?sort=frequency_desc');
    assert.equal(
      errors.map((e) => [e.name, e.actor, e.event_count, e.description]),
      [
        ['TypeError', 'handler(app)', 3, 'z is undefined'],
        ['RangeError', 'GET /map', 2, 'too far again'],
      ],
    );
    assert.equal(
      (await list(ctx, '?search=AGAIN')).map((e) => e.actor),
      ['GET /map'],
    );
    assert.equal(await list(ctx, '?status=resolved'), []);
    const rows = await api.db.query<{ n: number }>('SELECT count(*)::int AS n FROM error_tracking_error_events e JOIN error_tracking_errors g ON g.id = e.error_id WHERE g.project_id = $1', [id]);
    assert.is(rows[0]!.n, 5, 'every event stored');
  });

  s('transactions and other items are accepted and not stored; message events are', async (ctx) => {
    const { api, key, id } = ctx;
    const before = (await list(ctx)).length;
    const tx = `{"event_id":"t1"}\n{"type":"transaction"}\n{"type":"transaction","spans":[]}\n{"type":"client_report"}\n{}\n`;
    expectRes(await api.call('POST', `${url(id)}?sentry_key=${key}`, { body: tx }), 200, { id: 't1' });
    assert.is((await list(ctx)).length, before);
    const msg = { event_id: 'm1', message: { formatted: 'disk almost full\nsecond line' }, level: 'warning', platform: 'node', x: 'nul\u0000byte' };
    expectRes(await api.call('POST', `${url(id, 'store')}?sentry_key=${key}`, { json: msg }), 200, { id: 'm1' });
    const found = (await list(ctx)).find((e) => e.name === 'disk almost full');
    assert.ok(found, 'message event listed');
  });

  s("checks in GitLab's collector order, with its bodies", async (ctx) => {
    const { api, key, id, w } = ctx;
    const body = envelope(sentryEvent('c1', 'Error', 'boom'));
    const q = `?sentry_key=${key}`;
    expectRes(await api.call('POST', `${url(999999)}${q}`, { body }), 404, B.projectNotFound, 'unknown project');
    expectRes(await api.call('POST', `${url(w.otherProject.id)}${q}`, { body }), 404, B.notFound, 'no setting');
    await upsertSetting(api.db, w.publicProject.id, true, false);
    const pubKey = (await createKey(api.db, w.publicProject.id)).public_key;
    expectRes(await api.call('POST', `${url(w.publicProject.id)}?sentry_key=${pubKey}`, { body }), 404, B.notFound, 'not integrated');
    expectRes(await api.call('POST', url(id), { body: '{"event_id":"c1"}\n{"type":"event"}\n{"exception":{"values":[]}}\n' }), 400, B.unparsable, 'no key anywhere');
    expectRes(await api.call('POST', `${url(id)}?sentry_key=`, { body: '{}' }), 400, B.unparsable, 'empty key');
    expectRes(await api.call('POST', url(id), { body, headers: { 'x-sentry-auth': 'Sentry sentry_version=7' } }), 404, B.notFound, 'header without key');
    expectRes(await api.call('POST', `${url(id)}?sentry_key=glet_00000000000000000000000000000000`, { body }), 404, B.notFound, 'wrong key');
    expectRes(await api.call('POST', `${url(id)}?sentry_key=${pubKey}`, { body }), 404, B.notFound, "another project's key");
    expectRes(await api.call('POST', `${url(id)}${q}`, { body: 'not json' }), 400, B.unparsable, 'not an envelope');
    expectRes(await api.call('POST', `${url(id)}${q}`, { body: '{}\n{"type":"event","length":999}\n{}' }), 400, B.unparsable, 'length overruns');
    expectRes(await api.call('POST', `${url(id, 'store')}${q}`, { body: '"********"' }), 400, B.unsupported, 'store: not an object');
    expectRes(await api.call('POST', `${url(id)}${q}`, { body: '{}\n{"type":"event"}\n{"level":"error"}\n' }), 400, B.unsupported, 'no exception, no message');
    const badFrame = { exception: [{ type: 'E', value: 'v', stacktrace: { frames: [{ lineno: 'ten' }] } }] };
    expectRes(await api.call('POST', `${url(id, 'store')}${q}`, { json: badFrame }), 400, B.unsupported, 'mistyped frame');
    const longPlatform = { ...sentryEvent('c2', 'E', 'v'), platform: 'p'.repeat(256) };
    expectRes(await api.call('POST', `${url(id, 'store')}${q}`, { json: longPlatform }), 400, { message: '400 Bad request - platform is too long (maximum is 255 characters)' });
    expectRes(await api.call('POST', `${url(id)}${q}`, { body, headers: { 'content-encoding': 'gzip' } }), 400, B.unparsable, 'not gzip');
  });

  s('more than 200 KiB decompressed is 413 Payload Too Large (text/plain)', async ({ api, key, id }) => {
    const big = envelope({ ...sentryEvent('b1', 'Error', 'big'), extra: { blob: 'x'.repeat(210 * 1024) } });
    for (const [what, body, headers] of [
      ['gzip', gzipSync(big), { 'content-encoding': 'gzip' }],
      ['plain', big, {}],
    ] as const) {
      const res = await api.call('POST', `${url(id)}?sentry_key=${key}`, { body, headers });
      assert.is(res.status, 413, what);
      assert.is(res.text, 'Payload Too Large');
      assert.match(String(res.headers['content-type']), /^text\/plain/);
    }
    const fits = envelope({ ...sentryEvent('b2', 'Error', 'fits'), extra: { blob: 'x'.repeat(150 * 1024) } });
    expectRes(await api.call('POST', `${url(id)}?sentry_key=${key}`, { body: gzipSync(fits), headers: { 'content-encoding': 'gzip' } }), 200, { id: 'b2' });
  });

  s('a deleted key stops ingestion; a preflight is answered for browsers', async ({ api, id, w }) => {
    const k = await createKey(api.db, id);
    const body = envelope(sentryEvent('d1', 'Error', 'before delete'));
    expectRes(await api.call('POST', `${url(id)}?sentry_key=${k.public_key}`, { body }), 200, { id: 'd1' });
    expectRes(await api.call('DELETE', `/api/v4/projects/${id}/error_tracking/client_keys/${k.id}`, { headers: w.auth('maintainer') }), 200);
    expectRes(await api.call('POST', `${url(id)}?sentry_key=${k.public_key}`, { body }), 404, B.notFound, 'after delete');
    const pre = await api.call('OPTIONS', url(id), { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    assert.is(pre.status, 204);
    assert.is(pre.headers['access-control-allow-origin'], '*');
    assert.match(String(pre.headers['access-control-allow-methods']), /POST/);
  });

  s.run();
}
