// Life of a deployment: `rae admin` prepares users, tokens, projects and members; a bootstrap
// file does the same at start; the data and the migration record survive a restart; PGlite is
// locked while the API runs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adminCommand } from '../../../host/cli/admin.js';
import { UsageError } from '../../../host/cli/command.js';
import { applyBootstrap } from '../../../host/api/index.js';
import { loadMigrations } from '../../../host/api/db/index.js';
import { startTestApi } from '../../../support/api/api.js';
import type { Location, Storage } from '../../../support/api/storage.js';
import { sentryEvent, envelope } from '../../../support/api/ingestion.js';
import { expectRes } from './access.js';

/** Runs `rae admin ARGS` in this process on `loc`; returns exit code, stdout and stderr. */
async function admin(loc: Location, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const w = { out: process.stdout.write, err: process.stderr.write, url: process.env.DATABASE_URL };
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((err += chunk), true)) as typeof process.stderr.write;
  if (loc.databaseUrl) process.env.DATABASE_URL = loc.databaseUrl;
  else delete process.env.DATABASE_URL;
  try {
    // as host/cli/main.ts does: a UsageError is exit code 2
    const code = await adminCommand.run([...args, '--state-dir', loc.stateDir]).catch((e: unknown) => {
      if (!(e instanceof UsageError)) throw e;
      err += `${e.message}\n`;
      return 2;
    });
    return { code, out, err };
  } finally {
    process.stdout.write = w.out;
    process.stderr.write = w.err;
    if (w.url === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = w.url;
  }
}

const BOOTSTRAP = (token: string) => `
users:
  - username: alice
    tokens:
      - { name: quickstart, token: ${token}, scope: api }
  - username: viewer
projects:
  - path: demo/web
    members:
      alice: maintainer
      viewer: reporter
`;

/** Registers the lifecycle suite for one storage. */
export function lifecycleSuite(storage: Storage): void {
  const s = suite(`api lifecycle: admin, bootstrap, restart [${storage.name}]`);

  s('rae admin creates what a first API call needs; the token is printed once', async () => {
    const loc = await storage.fresh();
    const user = await admin(loc, 'user', 'create', 'bob');
    assert.is(user.code, 0, user.err);
    assert.match(user.out, /^\d+\n$/);
    const dup = await admin(loc, 'user', 'create', 'BOB');
    assert.equal([dup.code, dup.err], [1, "rae admin: user 'BOB' already exists\n"]);
    const token = await admin(loc, 'token', 'create', 'bob', '--name', 'laptop');
    assert.is(token.code, 0, token.err);
    assert.match(token.out, /^glpat-[A-Za-z0-9_-]{20}\n$/);
    assert.match(token.err, /it is not shown again/);
    const project = await admin(loc, 'project', 'create', 'team/api');
    assert.is(project.code, 0, project.err);
    const role = await admin(loc, 'member', 'add', 'team/api', 'bob', 'boss');
    assert.equal([role.code, role.err], [2, "role 'boss': expected one of guest, reporter, developer, maintainer, owner\n"]);
    const member = await admin(loc, 'member', 'add', project.out.trim(), 'bob', 'maintainer');
    assert.is(member.code, 0, member.err);
    const api = await startTestApi(storage, { location: loc });
    try {
      if (storage.name === 'pglite') {
        const locked = await admin(loc, 'user', 'list');
        assert.is(locked.code, 1);
        assert.match(locked.err, new RegExp(`in use by process ${process.pid}`));
      } else {
        const listed = await admin(loc, 'token', 'list');
        assert.match(listed.out, /^\d+\tbob\tlaptop\tapi\t\t\n$/, 'PostgreSQL: admin works while the API runs; never the token');
      }
      const h = { 'private-token': token.out.trim() };
      expectRes(await api.call('GET', '/api/v4/projects/team%2Fapi/error_tracking/client_keys', { headers: h }), 200, []);
    } finally {
      await api.close();
    }
  });

  s('bootstrap at start, restart: data kept, bootstrap idempotent, migrations applied once', async () => {
    const loc = await storage.fresh();
    const token = 'glpat-bootstrapToken123456';
    const file = join(loc.stateDir, 'bootstrap.yaml');
    writeFileSync(file, BOOTSTRAP(token));
    // a fixed external host: the DSNs listed before and after the restart compare equal
    const configure = (c: { api: { bootstrapFile: string; externalHost: string } }) => {
      c.api.bootstrapFile = file;
      c.api.externalHost = 'errors.example.com';
    };
    const h = { 'private-token': token };
    const base = '/api/v4/projects/demo%2Fweb/error_tracking';
    const first = await startTestApi(storage, { location: loc, configure });
    let keys: unknown;
    let errors: unknown;
    try {
      assert.ok(
        first.logs.some((l) => l.endsWith('2 user(s), 1 token(s), 1 project(s), 2 membership(s)')),
        first.logs.join('\n'),
      );
      expectRes(await first.call('PUT', `${base}/settings`, { headers: h, json: { active: true, integrated: true } }), 200);
      expectRes(await first.call('POST', `${base}/client_keys`, { headers: h }), 201);
      keys = (await first.call('GET', `${base}/client_keys`, { headers: h })).json;
      const k = (keys as Array<{ public_key: string }>)[0]!.public_key;
      const pid = (await first.db.query<{ id: number }>("SELECT id FROM projects WHERE path = 'demo/web'"))[0]!.id;
      expectRes(await first.call('POST', `/errortracking/api/v1/projects/api/${pid}/envelope/?sentry_key=${k}`, { body: envelope(sentryEvent('r1', 'Error', 'kept')) }), 200);
      errors = (await first.call('GET', `${base}/errors`, { headers: h })).json;
      // an invalid plan changes nothing
      const bad = await applyBootstrap(first.db, { users: [{ username: 'carol', admin: false, tokens: [] }], projects: [{ path: 'demo/web', visibility: 'private', members: [{ username: 'nobody', role: 'owner' }] }] });
      assert.equal(bad, { ok: false, problems: ['project demo/web: member nobody is not a user (add it under users)'] });
      assert.equal(await first.db.query("SELECT id FROM users WHERE username = 'carol'"), [], 'rolled back');
    } finally {
      await first.close();
    }
    const second = await startTestApi(storage, { location: loc, configure });
    try {
      assert.not.ok(
        second.logs.some((l) => l.includes('applied migrations')),
        second.logs.join('\n'),
      );
      assert.equal((await second.call('GET', `${base}/client_keys`, { headers: h })).json, keys);
      assert.equal((await second.call('GET', `${base}/errors`, { headers: h })).json, errors);
      assert.equal((await second.call('GET', `${base}/settings`, { headers: h })).json, { active: true, project_name: null, errtrack_external_url: null, api_url: null, integrated: true });
      const counts = await second.db.query<{ users: number; tokens: number; migrations: number }>(
        'SELECT (SELECT count(*)::int FROM users) AS users, (SELECT count(*)::int FROM personal_access_tokens) AS tokens, (SELECT count(*)::int FROM schema_migrations) AS migrations',
      );
      assert.equal(counts, [{ users: 2, tokens: 1, migrations: loadMigrations().length }]);
      expectRes(await second.call('GET', `${base}/settings`, { headers: { 'private-token': 'glpat-bootstrapToken123457' } }), 401, { message: '401 Unauthorized' });
    } finally {
      await second.close();
    }
  });

  s('a bad bootstrap file stops the start with located problems', async () => {
    // the file is read before the database is opened, so no database is needed
    const loc = { stateDir: mkdtempSync(join(tmpdir(), 'rae-api-bad-')), databaseUrl: storage.name === 'postgres' ? 'postgres://nobody@127.0.0.1:1/none' : '' };
    const file = join(loc.stateDir, 'bad.yaml');
    writeFileSync(file, 'users:\n  - username: eve\n    tokens: [{ token: short }]\nprojects:\n  - path: noslash\n    members: { eve: boss }\n');
    const err = await startTestApi(storage, { location: loc, configure: (c) => (c.api.bootstrapFile = file) }).then(
      (api) => (api.close(), new Error('started')),
      (e: Error) => e,
    );
    rmSync(loc.stateDir, { recursive: true, force: true });
    assert.is(
      err.message,
      `api.bootstrapFile: ${file}: users[0].tokens[0].token: expected 20 to 1024 characters without spaces; ${file}: projects[0].path: expected a full path like group/project; ${file}: projects[0].members.eve: expected one of guest, reporter, developer, maintainer, owner`,
    );
  });

  s.run();
}
