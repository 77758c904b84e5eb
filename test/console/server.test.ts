// The console's server side, without a browser: mounted on a fastify instance over a real PGlite
// database (as `rae run` and `rae forwarder` mount it), it serves the built pages with their
// headers and a 503 that says what to do when they are not built, refuses every JSON route
// without a valid token, answers them with one, keeps its hooks to its own scope, answers the
// API's 503 once its database is gone, and makes the first-start token once only. startConsole listens on a port of its own.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDatabase, pgliteDir } from '../../host/api/index.js';
import { addToken, createProject, createUser, setMember, type Db } from '../../host/api/db/index.js';
import { firstStartToken, registerConsole, startConsole } from '../../host/console/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'rae-console-server-'));
const pages = join(tmp, 'pages');
let db: Db;
let token: string | undefined;
const RULE = { name: 'Read sensitive file untrusted', source: 'syscall', priority: 'Warning', tags: ['filesystem'], enabled: true, evaluations: 10, matches: 2 };

test.before(async () => {
  ({ db } = await openApiDatabase({ stateDir: join(tmp, 'state'), databaseUrl: '' }));
  mkdirSync(join(pages, 'assets'), { recursive: true });
  writeFileSync(join(pages, 'index.html'), '<!doctype html><title>rae console</title><script type="module" src="./assets/index-abc.js"></script>');
  writeFileSync(join(pages, 'assets/index-abc.js'), 'console.log(1);\n');
});

test.after(async () => {
  await db.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A fastify instance with the console mounted, and a route of its own outside the console's scope. */
async function mounted(assetsDir = pages) {
  const app = Fastify({ logger: false });
  app.get('/outside', async () => 'outside');
  await registerConsole(app, { db, log: () => {}, rules: () => [RULE], assetsDir });
  return app;
}

test('first start: a database without users gets the admin `console` and one token; the next start none', async () => {
  token = await firstStartToken(db);
  assert.match(token ?? '', /^glpat-[\w-]{20}$/);
  assert.is(await firstStartToken(db), undefined);
  const users = await db.query<{ username: string; admin: boolean }>('SELECT username, admin FROM users');
  assert.equal(users, [{ username: 'console', admin: true }]);
});

test('pages: index and assets served with the console headers; unknown names 404; the mount keeps its headers to itself', async () => {
  const app = await mounted();
  try {
    const index = await app.inject({ url: '/' });
    assert.is(index.statusCode, 200);
    assert.match(index.headers['content-type'] as string, 'text/html');
    assert.match(index.headers['content-security-policy'] as string, "default-src 'self'");
    assert.is(index.headers['x-frame-options'], 'DENY');
    const js = await app.inject({ url: '/assets/index-abc.js' });
    assert.equal([js.statusCode, js.headers['content-type'], js.headers['cache-control']], [200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable']);
    for (const url of ['/assets/missing.js', '/assets/..%2Findex.html', '/assets/.hidden.js']) assert.is((await app.inject({ url })).statusCode, 404, url);
    const outside = await app.inject({ url: '/outside' });
    assert.equal([outside.statusCode, outside.headers['content-security-policy']], [200, undefined]);
  } finally {
    await app.close();
  }
});

test('pages: not built, / answers 503 saying how to build them', async () => {
  const app = await mounted(join(tmp, 'no-pages'));
  try {
    const res = await app.inject({ url: '/' });
    assert.is(res.statusCode, 503);
    assert.match(res.body, 'npm run build');
  } finally {
    await app.close();
  }
});

test('JSON routes: 401 without a valid token, answers with one (whoami, rules, the query API, projects)', async () => {
  const app = await mounted();
  try {
    for (const url of ['/console/api/whoami', '/console/api/rules', '/console/api/projects', '/api/v1/events/count', '/api/v1/events/search']) {
      assert.is((await app.inject({ url })).statusCode, 401, url);
      assert.is((await app.inject({ url, headers: { authorization: 'Bearer glpat-wrong' } })).statusCode, 401, url);
    }
    const auth = { authorization: `Bearer ${token}` };
    assert.equal((await app.inject({ url: '/console/api/whoami', headers: auth })).json(), { username: 'console', admin: true });
    assert.equal((await app.inject({ url: '/console/api/rules', headers: auth })).json(), { engine: true, rules: [RULE] });
    assert.equal((await app.inject({ url: '/console/api/projects', headers: auth })).json(), { projects: [] });
    assert.equal((await app.inject({ url: '/api/v1/events/count', headers: auth })).json(), { statistics: { all: 0 } });
  } finally {
    await app.close();
  }
});

test('projects: the ones whose errors the user may read (Reporter and above; an admin every one)', async () => {
  const shop = await createProject(db, 'team/shop');
  await createProject(db, 'team/other', 'public');
  const user = await createUser(db, 'reader');
  await setMember(db, shop.id, user.id, 'reporter');
  await addToken(db, user.id, 'glpat-reader-token-000000', { name: 't', scope: 'read_api' });
  const app = await mounted();
  try {
    const list = async (t: string) => ((await app.inject({ url: '/console/api/projects', headers: { 'private-token': t } })).json() as { projects: Array<{ path: string }> }).projects.map((p) => p.path);
    assert.equal(await list('glpat-reader-token-000000'), ['team/shop']);
    assert.equal(await list(token!), ['team/shop', 'team/other']);
  } finally {
    await app.close();
  }
});

test('the database gone (PGlite directory removed): the JSON routes answer the API’s 503 and one log line; the pages still load', async () => {
  const state = join(tmp, 'gone-state');
  const gone = await openApiDatabase({ stateDir: state, databaseUrl: '' });
  const logs: string[] = [];
  const app = Fastify({ logger: false });
  await registerConsole(app, { db: gone.db, log: (m) => logs.push(m), assetsDir: pages });
  try {
    const auth = { authorization: `Bearer ${await firstStartToken(gone.db)}` };
    assert.is((await app.inject({ url: '/api/v1/events/search', headers: auth })).statusCode, 200, 'before');
    rmSync(pgliteDir(state), { recursive: true, force: true });
    for (const url of ['/console/api/whoami', '/console/api/projects', '/api/v1/events/search', '/api/v1/events/count/rule', '/api/v4/projects/1/error_tracking/errors']) {
      const res = await app.inject({ url, headers: auth });
      assert.equal([res.statusCode, res.body, res.headers['retry-after']], [503, '{"message":"503 Service Unavailable"}', '60'], url);
    }
    assert.is((await app.inject({ url: '/' })).statusCode, 200, 'the pages');
    assert.equal(logs, [`console: the PGlite directory ${pgliteDir(state)} is gone (removed while the API ran): every request is answered 503 until a restart (which starts an empty database)`]);
  } finally {
    await app.close();
    await gone.db.close().catch(() => {});
  }
});

test('startConsole: its own server on a free port, closed by close()', async () => {
  const running = await startConsole({ db, log: () => {}, address: '127.0.0.1', port: 0, assetsDir: pages });
  try {
    assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const res = await fetch(running.url);
    assert.is(res.status, 200);
    assert.match(await res.text(), '<title>rae console</title>');
    assert.is((await fetch(`${running.url}console/api/rules`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json())).engine, false);
  } finally {
    await running.close();
  }
  assert.is(
    await fetch(running.url).then(
      () => 'answered',
      () => 'refused',
    ),
    'refused',
    'closed',
  );
});

test.run();
