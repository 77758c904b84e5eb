// One error's routes (issue 31): detail, latest event with its stack trace, events, and the
// status change with GitLab's roles; grouping by fingerprint and users affected. First with the
// real Sentry SDK for Node against the API over HTTPS, then over raw HTTP with envelopes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { World } from '../../../support/api/api.js';
import type { Storage } from '../../../support/api/storage.js';
import { expectRes } from './access.js';
import { startIngestionApi, type IngestionCtx } from '../../../support/api/ingestion.js';
import { httpsApiSuite, sdkProgram } from './sentry-sdk.js';

type Obj = Record<string, unknown>;
const NOT_FOUND = { message: '404 Not found' };
const FORBIDDEN = { message: '403 Forbidden' };
const UPDATED = { result: { updated: true, closed_issue_iid: null, status: 'success' } };

/** Registers the suite with the Sentry SDK for one storage. */
function sdkSuite(storage: Storage): void {
  const s = httpsApiSuite(`api error detail with the Sentry SDK [${storage.name}]`, storage);

  s('an SDK exception: detail and latest event show its frames; a Reporter cannot resolve, a Developer can; a new event reopens it', async ({ api, w, tls }) => {
    const h = w.auth('maintainer');
    const base = `/api/v4/projects/${w.project.id}/error_tracking`;
    expectRes(await api.call('PUT', `${base}/settings`, { headers: h, json: { active: true, integrated: true } }), 200);
    const key = (await api.call('GET', `${base}/client_keys`, { headers: h })).json as Array<{ errtrack_dsn: string }>;
    const port = new URL(api.url).port;
    const sdk = sdkProgram(key[0]!.errtrack_dsn.replace(`@localhost:${port}/`, `@127.0.0.1:${port}/`), tls.certFile);
    try {
      for (const line of ['cart is empty\tu-1', 'cart 42 is empty\tu-2', 'cart 7 is empty\tu-1']) {
        const statuses = await sdk.report(line);
        assert.ok(statuses.length > 0 && statuses.every((c) => c === 200), `accepted: ${statuses}`);
      }
      const list = (await api.call('GET', `${base}/errors`, { headers: w.auth('reporter') })).json as Obj[];
      assert.is(list.length, 1, 'three messages, one fingerprint');
      const id = list[0]!.id as number;
      const detail = (await api.call('GET', `${base}/errors/${id}`, { headers: w.auth('reporter') })).json as Obj;
      assert.equal(
        [detail.title, detail.name, detail.status, detail.event_count, detail.user_count, detail.environment, detail.first_release, detail.last_release, detail.platform],
        ['TypeError: cart 7 is empty', 'TypeError', 'unresolved', 3, 2, 'test', 'rae-api-test@1', 'rae-api-test@1', 'node'],
      );
      assert.match(String(detail.culprit), /^checkout\(/);
      assert.match(String(detail.fingerprint), /^[0-9a-f]{40}$/);
      assert.is((detail.tags as Obj).level, 'error');

      const latest = (await api.call('GET', `${base}/errors/${id}/latest_event`, { headers: w.auth('reporter') })).json as Obj;
      assert.equal(latest.exception, { type: 'TypeError', value: 'cart 7 is empty' });
      assert.equal(latest.user, { id: 'u-1' });
      const frames = latest.stack_trace_entries as Obj[];
      const crash = frames.at(-1)!;
      assert.is(crash.function, 'checkout', 'the crash frame is last');
      assert.is(crash.in_app, true);
      assert.match(String(crash.filename), /sentry-client\.mjs$/, JSON.stringify(crash));
      assert.is(typeof crash.lineNo, 'number');
      const context = crash.context as Array<[number, string]>;
      const line = context.find(([n]) => n === crash.lineNo);
      assert.ok(line?.[1].includes('throw new TypeError(message)'), `context line: ${JSON.stringify(context)}`);
      assert.ok(
        context.every(([n], i) => i === 0 || n === context[i - 1]![0] + 1),
        'context lines are numbered in order',
      );

      const put = (who: Parameters<World['auth']>[0], status: string) => api.call('PUT', `${base}/errors/${id}`, { headers: w.auth(who), json: { status } });
      expectRes(await put('reporter', 'resolved'), 403, FORBIDDEN, 'reporter');
      expectRes(await put('developer', 'resolved'), 200, UPDATED, 'developer');
      assert.equal(await api.call('GET', `${base}/errors`, { headers: w.auth('reporter') }).then((r) => r.json), [], 'no unresolved error left');
      const resolved = (await api.call('GET', `${base}/errors?status=resolved`, { headers: w.auth('reporter') })).json as Obj[];
      assert.equal(
        resolved.map((e) => [e.id, e.status]),
        [[id, 'resolved']],
      );

      assert.ok((await sdk.report('cart is empty again\tu-3')).every((c) => c === 200));
      const reopened = (await api.call('GET', `${base}/errors/${id}`, { headers: w.auth('reporter') })).json as Obj;
      assert.equal([reopened.status, reopened.event_count, reopened.user_count], ['unresolved', 4, 3], 'a new event reopens it');
    } finally {
      assert.is(await sdk.close(), 0, 'the SDK program exits cleanly');
    }
  });

  s.run();
}

/** An event thrown at `frames` (function, module, line), optionally with a user and tags. */
function event(id: string, type: string, value: string, frames: Array<[string, string, number, boolean?]>, extra: Obj = {}): Obj {
  return {
    event_id: id,
    timestamp: 1_700_000_000 + Number.parseInt(id.replace(/\D/g, '') || '0', 10),
    platform: 'node',
    level: 'error',
    environment: 'production',
    exception: { values: [{ type, value, stacktrace: { frames: frames.map(([fn, mod, lineno, inApp]) => ({ function: fn, module: mod, lineno, ...(inApp === undefined ? {} : { in_app: inApp }) })) } }] },
    ...extra,
  };
}

/** Registers the raw HTTP suite for one storage. */
function rawSuite(storage: Storage): void {
  const s = suite<IngestionCtx>(`api error detail over HTTP [${storage.name}]`);
  s.before(async (ctx) => {
    Object.assign(ctx, await startIngestionApi(storage));
  });
  s.after(async (ctx) => ctx.api?.close());
  const send = async ({ api, id, key }: IngestionCtx, e: Obj) => expectRes(await api.call('POST', `/errortracking/api/v1/projects/api/${id}/store/?sentry_key=${key}`, { json: e }), 200, { id: e.event_id }, String(e.event_id));
  const base = ({ w }: IngestionCtx) => `/api/v4/projects/${w.project.id}/error_tracking/errors`;
  const get = async (ctx: IngestionCtx, path: string) => (await ctx.api.call('GET', `${base(ctx)}${path}`, { headers: ctx.w.auth('reporter') })).json as Obj & Obj[];
  const groups = async (ctx: IngestionCtx) => ((await get(ctx, '?sort=first_seen_desc')) as Obj[]).map((e) => [e.name, e.event_count]);

  s('grouping: type and in-app frames, not the message, line numbers or out-of-app frames', async (ctx) => {
    await send(
      ctx,
      event('g1', 'KeyError', 'no key 1', [
        ['main', 'index', 1, false],
        ['load', 'store', 10, true],
      ]),
    );
    await send(
      ctx,
      event('g2', 'KeyError', 'no key 2', [
        ['boot', 'loader', 5, false],
        ['load', 'store', 12, true],
      ]),
    ); // same in-app frame, line moved
    await send(
      ctx,
      event('g3', 'KeyError', 'no key 3', [
        ['main', 'index', 1, false],
        ['save', 'store', 10, true],
      ]),
    ); // another in-app function
    await send(
      ctx,
      event('g4', 'ValueError', 'no key 4', [
        ['main', 'index', 1, false],
        ['load', 'store', 10, true],
      ]),
    ); // another type
    await send(ctx, event('g5', 'KeyError', 'custom', [['x', 'y', 1]], { fingerprint: ['store-keys'] }));
    await send(ctx, event('g6', 'OtherError', 'custom too', [['z', 'w', 2]], { fingerprint: ['store-keys'] })); // an SDK's own fingerprint wins
    // a group is named after its latest event
    assert.equal(await groups(ctx), [
      ['OtherError', 2],
      ['ValueError', 1],
      ['KeyError', 1],
      ['KeyError', 2],
    ]);
  });

  s('users affected: distinct id, username, email or IP address of `user`', async (ctx) => {
    const users = [{ id: 7 }, { id: '7' }, { email: 'a@example.com' }, { ip_address: '10.0.0.1' }, { ip_address: '10.0.0.1' }, undefined];
    for (const [i, user] of users.entries()) await send(ctx, event(`u${i + 10}`, 'UserError', `n ${i}`, [['count', 'users', 3, true]], user ? { user } : {}));
    const list = (await get(ctx, '?search=UserError')) as Obj[];
    const detail = await get(ctx, `/${list[0]!.id}`);
    assert.equal([detail.event_count, detail.user_count], [6, 3]);
  });

  s('events: newest first by default, paginated with GitLab headers; ascending on request; context lines numbered', async (ctx) => {
    const frame = { function: 'parse', module: 'cfg', lineno: 20, in_app: true, pre_context: ['a', 'b'], context_line: 'boom()', post_context: ['c'] };
    for (const n of [31, 33, 32]) {
      await send(ctx, { ...event(`e${n}`, 'ParseError', `at ${n}`, []), exception: { values: [{ type: 'ParseError', value: `at ${n}`, stacktrace: { frames: [frame] } }] }, release: `r${n}`, tags: { node: 'n1' } });
    }
    const id = ((await get(ctx, '?search=ParseError')) as Obj[])[0]!.id;
    const res = await ctx.api.call('GET', `${base(ctx)}/${id}/events?per_page=2`, { headers: ctx.w.auth('reporter') });
    expectRes(res, 200);
    assert.equal(
      (res.json as Obj[]).map((e) => e.event_id),
      ['e33', 'e32'],
    );
    assert.equal([res.headers['x-total'], res.headers['x-next-page']], ['3', '2']);
    const asc = (await get(ctx, `/${id}/events?sort=occurred_at_asc`)) as Obj[];
    assert.equal(
      asc.map((e) => e.event_id),
      ['e31', 'e32', 'e33'],
    );
    assert.equal((asc[0]!.stack_trace_entries as Obj[])[0]!.context, [
      [18, 'a'],
      [19, 'b'],
      [20, 'boom()'],
      [21, 'c'],
    ]);
    const detail = await get(ctx, `/${id}`);
    assert.equal([detail.first_release, detail.last_release, detail.tags], ['r31', 'r33', { level: 'error', logger: null, node: 'n1' }]);
    const latest = await get(ctx, `/${id}/latest_event`);
    assert.is(latest.event_id, 'e33');
  });

  s('status: every value; ignored stays ignored on a new event; resolved reopens', async (ctx) => {
    await send(ctx, event('s40', 'StatusError', 'one', [['f', 'm', 1, true]]));
    const id = ((await get(ctx, '?search=StatusError')) as Obj[])[0]!.id as number;
    const put = (status: unknown) => ctx.api.call('PUT', `${base(ctx)}/${id}`, { headers: ctx.w.auth('developer'), json: { status } });
    for (const status of ['ignored', 'unresolved', 'resolved']) {
      expectRes(await put(status), 200, UPDATED, status);
      assert.is((await get(ctx, `/${id}`)).status, status);
    }
    expectRes(await put('ignored'), 200, UPDATED);
    await send(ctx, event('s41', 'StatusError', 'two', [['f', 'm', 1, true]]));
    assert.is((await get(ctx, `/${id}`)).status, 'ignored');
    assert.equal(
      ((await get(ctx, '?status=ignored')) as Obj[]).map((e) => e.id),
      [id],
    );
    expectRes(await put('resolved'), 200, UPDATED);
    await send(ctx, event('s42', 'StatusError', 'three', [['f', 'm', 1, true]]));
    assert.is((await get(ctx, `/${id}`)).status, 'unresolved');
  });

  s("checks in GitLab's order: 401, 404 project, 403 role, 400 parameters, 404 Not found", async (ctx) => {
    const { api, w } = ctx;
    await send(ctx, event('o50', 'OrderError', 'x', [['f', 'm', 1, true]]));
    const id = ((await get(ctx, '?search=OrderError')) as Obj[])[0]!.id as number;
    const one = `${base(ctx)}/${id}`;
    expectRes(await api.call('PUT', one, { json: { status: 'bogus' } }), 401, { message: '401 Unauthorized' }, 'no token');
    expectRes(await api.call('PUT', `/api/v4/projects/424242/error_tracking/errors/${id}`, { headers: w.auth('developer'), json: {} }), 404, { message: '404 Project Not Found' }, 'project');
    expectRes(await api.call('PUT', one, { headers: w.auth('reporter'), json: {} }), 403, FORBIDDEN, 'reporter, no status');
    expectRes(
      await api.call('PUT', one, { headers: w.auth('readonly'), json: { status: 'resolved' } }),
      403,
      { error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api' },
      'read_api',
    );
    expectRes(await api.call('PUT', one, { headers: w.auth('developer'), json: {} }), 400, { error: 'status is missing' }, 'missing');
    expectRes(await api.call('PUT', one, { headers: w.auth('developer'), json: { status: 'closed' } }), 400, { error: 'status does not have a valid value' }, 'invalid');
    expectRes(await api.call('PUT', `${base(ctx)}/999999`, { headers: w.auth('developer'), json: { status: 'bogus' } }), 400, { error: 'status does not have a valid value' }, '400 before 404');
    expectRes(await api.call('PUT', `${base(ctx)}/999999?status=resolved`, { headers: w.auth('developer') }), 404, NOT_FOUND, 'unknown id, status in the query');
    expectRes(await api.call('GET', `${base(ctx)}/${id}/events?sort=newest`, { headers: w.auth('reporter') }), 400, { error: 'sort does not have a valid value' });
    expectRes(await api.call('GET', one, { headers: w.auth('guest') }), 403, FORBIDDEN, 'guest');
    // another project's error, unknown and non-numeric ids
    await api.call('PUT', `/api/v4/projects/${w.publicProject.id}/error_tracking/settings`, { headers: w.auth('maintainer'), json: { active: true, integrated: true } });
    for (const bad of ['999999', 'abc', '1e3', '-1', '99999999999']) {
      for (const suffix of ['', '/latest_event', '/events']) expectRes(await api.call('GET', `${base(ctx)}/${bad}${suffix}`, { headers: w.auth('reporter') }), 404, NOT_FOUND, `${bad}${suffix}`);
    }
    const foreign = `/api/v4/projects/${w.publicProject.id}/error_tracking/errors/${id}`;
    expectRes(await api.call('GET', foreign, { headers: w.auth('reporter') }), 404, NOT_FOUND, "another project's id");
    expectRes(await api.call('PUT', foreign, { headers: w.auth('developer'), json: { status: 'resolved' } }), 404, NOT_FOUND, "another project's id (PUT)");
    assert.is((await get(ctx, `/${id}`)).status, 'unresolved', 'untouched');
  });

  s.run();
}

/** Registers the error detail suites for one storage. */
export function errorDetailSuites(storage: Storage): void {
  sdkSuite(storage);
  rawSuite(storage);
}
