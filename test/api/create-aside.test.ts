// createPgliteAside (host/api/db/create-aside.ts): the API's PGlite database created and migrated
// in a child process, which `rae run` then opens as on a restart. Here from the sources, so the
// child runs them through tsx as `rae run` from a checkout does (without the build's template:
// initdb). Also: a failed creation rejects with the child's exit and its cause.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createPgliteAside, loadMigrations, openApiDatabase, pgliteDir } from '../../host/api/db/index.js';

const dir = mkdtempSync(join(tmpdir(), 'rae-create-aside-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('the database is created and migrated in another process, its lock released; opened here, nothing is left to migrate', async () => {
  const state = join(dir, 'state');
  const { pid, applied } = await createPgliteAside(state);
  assert.is.not(pid, process.pid);
  assert.equal(
    applied,
    loadMigrations().map((m) => m.version),
    'every migration applied by the child',
  );
  assert.ok(existsSync(join(pgliteDir(state), 'PG_VERSION')), 'a database in the directory');
  assert.not.ok(existsSync(join(pgliteDir(state), '.rae-api.lock')), 'the child released the lock');
  const { db, applied: here } = await openApiDatabase({ stateDir: state, databaseUrl: '' });
  try {
    assert.equal(here, [], 'opened as on a restart');
    assert.equal(await db.query('select count(*)::int as n from alerts'), [{ n: 0 }], 'the alert store is there');
  } finally {
    await db.close();
  }
});

test('a state directory that cannot hold the database: rejects naming the exit and the cause', async () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a directory');
  try {
    await createPgliteAside(file);
    assert.unreachable('created a database inside a file');
  } catch (err) {
    assert.match((err as Error).message, /^the process that created the API database ended with exit code 1: .*cannot create the API database directory/);
  }
});

test.run();
