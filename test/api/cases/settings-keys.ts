// Behaviour of settings (PUT upsert, PATCH semantics, derivations, the first key) and client
// keys (format, DSN, pagination, global ids, 50 parallel creations), and tokens at rest.
import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { seedWorld, startTestApi, type TestApi, type World } from '../../../support/api/api.js';
import type { Storage } from '../../../support/api/storage.js';
import { expectRes } from './access.js';

const KEY_RE = /^glet_[0-9a-f]{32}$/;

/** Registers the settings and client key suites for one storage. */
export function settingsKeysSuites(storage: Storage): void {
  const s = suite<{ api: TestApi; w: World }>(`api settings and keys [${storage.name}]`);
  s.before(async (ctx) => {
    ctx.api = await startTestApi(storage, { configure: (c) => (c.api.externalHost = 'errors.example.com:8443') });
    ctx.w = await seedWorld(ctx.api.db);
  });
  s.after(async (ctx) => ctx.api?.close());
  const settings = (w: World, id: string | number = w.project.id) => `/api/v4/projects/${id}/error_tracking/settings`;
  const keys = (w: World, id: string | number = w.project.id) => `/api/v4/projects/${id}/error_tracking/client_keys`;
  const count = async (api: TestApi, sql: string, params: unknown[]) => (await api.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0]!.n;

  s('PUT creates with 200, then updates only active and integrated', async ({ api, w }) => {
    const h = w.auth('maintainer');
    const created = await api.call('PUT', settings(w), { headers: h, json: { active: false, integrated: true } });
    expectRes(created, 200, { active: false, project_name: null, errtrack_external_url: null, api_url: null, integrated: true }, 'create');
    assert.is(await count(api, 'error_tracking_settings WHERE project_id = $1', [w.project.id]), 1);
    // a Sentry-mode api_url set outside the API is kept by PUT and drives the derived fields
    await api.db.query('UPDATE error_tracking_settings SET api_url = $2 WHERE project_id = $1', [w.project.id, 'https://sentry.io/api/0/projects/myorg/my-proj/']);
    const updated = await api.call('PUT', `${settings(w, encodeURIComponent(w.project.path))}?active=true&integrated=false`, { headers: h });
    expectRes(
      updated,
      200,
      {
        active: true,
        project_name: 'My Proj',
        errtrack_external_url: 'https://sentry.io/myorg/my-proj/',
        api_url: 'https://sentry.io/api/0/projects/myorg/my-proj/',
        integrated: false,
      },
      'update',
    );
    assert.is(await count(api, 'error_tracking_settings WHERE project_id = $1', [w.project.id]), 1, 'still one row');
    expectRes(await api.call('GET', settings(w), { headers: h }), 200, updated.json, 'GET shows the update');
  });

  s('PATCH: active required; integrated unchanged when absent or null; form bodies work', async ({ api, w }) => {
    const h = w.auth('owner');
    await api.call('PUT', settings(w), { headers: h, json: { active: true, integrated: true } });
    let res = await api.call('PATCH', settings(w), { headers: h, json: { active: 'f' } });
    expectRes(res, 200);
    assert.equal([(res.json as { active: boolean }).active, (res.json as { integrated: boolean }).integrated], [false, true]);
    res = await api.call('PATCH', settings(w), { headers: h, json: { active: 'yes', integrated: null } });
    assert.equal([(res.json as { active: boolean }).active, (res.json as { integrated: boolean }).integrated], [true, true]);
    res = await api.call('PATCH', settings(w), { headers: { ...h, 'content-type': 'application/x-www-form-urlencoded' }, body: 'active=1&integrated=0' });
    expectRes(res, 200);
    assert.equal([(res.json as { active: boolean }).active, (res.json as { integrated: boolean }).integrated], [true, false]);
  });

  s('saving an active, integrated setting gives the project its first key, once', async ({ api, w }) => {
    const h = w.auth('maintainer');
    const id = w.publicProject.id;
    assert.equal((await api.call('GET', keys(w, id), { headers: h })).json, []);
    expectRes(await api.call('PUT', settings(w, id), { headers: h, json: { active: true, integrated: true } }), 200);
    expectRes(await api.call('PUT', settings(w, id), { headers: h, json: { active: true, integrated: true } }), 200);
    const list = (await api.call('GET', keys(w, id), { headers: h })).json as Array<{ public_key: string }>;
    assert.is(list.length, 1);
    assert.match(list[0]!.public_key, KEY_RE);
  });

  s('client keys: 201 with glet_ key and DSN; list by id with pagination; delete returns the key', async ({ api, w }) => {
    const h = w.auth('maintainer');
    const id = w.otherProject.id;
    await api.db.query('INSERT INTO project_members (project_id, user_id, access_level) SELECT $1, id, 40 FROM users WHERE username = $2', [id, 'maintainer-user']);
    const created: Array<{ id: number; active: boolean; public_key: string; errtrack_dsn: string }> = [];
    for (let i = 0; i < 3; i++) {
      // any body is ignored
      const res = await api.call('POST', keys(w, encodeURIComponent(w.otherProject.path)), { headers: h, json: { active: false, public_key: 'glet_mine' } });
      expectRes(res, 201);
      created.push(res.json as (typeof created)[number]);
    }
    for (const k of created) {
      assert.equal(Object.keys(k), ['id', 'active', 'public_key', 'errtrack_dsn']);
      assert.is(k.active, true);
      assert.match(k.public_key, KEY_RE);
      assert.is(k.errtrack_dsn, `https://${k.public_key}@errors.example.com:8443/errortracking/api/v1/projects/${id}`);
    }
    const page1 = await api.call('GET', `${keys(w, id)}?per_page=2`, { headers: h });
    assert.equal(page1.json, created.slice(0, 2));
    assert.is(page1.headers['x-total'], '3');
    assert.is(page1.headers['x-total-pages'], '2');
    assert.is(page1.headers['x-next-page'], '2');
    assert.is(page1.headers['x-prev-page'], '');
    assert.match(String(page1.headers.link), /page=2&per_page=2>; rel="next"/);
    const page2 = await api.call('GET', `${keys(w, id)}?per_page=2&page=2&private_token=${w.tokens.maintainer}`, { headers: {} });
    assert.equal(page2.json, created.slice(2));
    assert.not.match(String(page2.headers.link), /private_token/, 'no token echoed in Link');
    const del = await api.call('DELETE', `${keys(w, id)}/${created[1]!.id}`, { headers: h });
    expectRes(del, 200, created[1], 'delete');
    assert.equal((await api.call('GET', keys(w, id), { headers: h })).json, [created[0], created[2]]);
  });

  s('ids come from one sequence across projects; 50 parallel creations lose nothing', async ({ api, w }) => {
    const h = w.auth('admin');
    const ids: number[] = [];
    for (const p of [w.project.id, w.otherProject.id, w.project.id]) ids.push(((await api.call('POST', keys(w, p), { headers: h })).json as { id: number }).id);
    assert.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, `increasing across projects: ${ids}`);
    const before = await count(api, 'error_tracking_client_keys WHERE project_id = $1', [w.project.id]);
    const results = await Promise.all(Array.from({ length: 50 }, () => api.call('POST', keys(w), { headers: h })));
    assert.equal(
      results.map((r) => r.status),
      Array(50).fill(201),
    );
    const made = results.map((r) => r.json as { id: number; public_key: string });
    assert.is(new Set(made.map((k) => k.id)).size, 50, 'distinct ids');
    assert.is(new Set(made.map((k) => k.public_key)).size, 50, 'distinct keys');
    assert.is(await count(api, 'error_tracking_client_keys WHERE project_id = $1', [w.project.id]), before + 50);
    const listed = (await api.call('GET', `${keys(w)}?per_page=100`, { headers: h })).json as Array<{ id: number }>;
    for (const k of made)
      assert.ok(
        listed.some((l) => l.id === k.id),
        `key ${k.id} listed`,
      );
  });

  s('tokens are stored as SHA-256 digests only', async ({ api, w }) => {
    for (const token of Object.values(w.tokens)) {
      const rows = await api.db.query<{ token_digest: string }>('SELECT token_digest FROM personal_access_tokens WHERE token_digest = $1', [createHash('sha256').update(token).digest('hex')]);
      assert.is(rows.length, 1, 'digest stored');
      // the whole row as text: the token appears in no column
      const leaks = await api.db.query('SELECT 1 FROM personal_access_tokens t WHERE strpos(t::text, $1) > 0', [token]);
      assert.is(leaks.length, 0, 'token text not in any column');
    }
  });

  s.run();
}
