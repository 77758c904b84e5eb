// The API's PGlite database made from a template (open.ts PGLITE_TEMPLATE, which `npm run build`
// makes): a new directory is unpacked from the template instead of running initdb; a directory
// that already holds a database is opened as it is; a template PGlite cannot load falls back to
// initdb. The template here is one PGlite instance's dumpDataDir with a marker table, so the
// tests can tell which way the database was made.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { migrate, openDatabase, type Db } from '../../host/api/db/index.js';

const dir = mkdtempSync(join(tmpdir(), 'rae-pglite-template-'));
const template = join(dir, 'template.tar.gz');

const marked = async (db: Db) => (await db.query<{ n: string }>(`select count(*)::text as n from pg_tables where tablename = 'template_marker'`))[0]!.n === '1';

test.before(async () => {
  const pg = await PGlite.create();
  await pg.exec('create table template_marker (x int)');
  writeFileSync(template, Buffer.from(await (await pg.dumpDataDir('gzip')).arrayBuffer()));
  await pg.close();
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('a new PGlite database is unpacked from the template; migrations apply; reopened, it keeps its data', async () => {
  const at = join(dir, 'db1');
  const db = await openDatabase({ pgliteDir: at, pgliteTemplate: template });
  assert.ok(await marked(db), 'made from the template');
  assert.ok((await migrate(db)).length > 0, 'migrations applied');
  await db.exec(`create table kept (x int); insert into kept values (7)`);
  await db.close();
  const again = await openDatabase({ pgliteDir: at, pgliteTemplate: template });
  assert.equal(await again.query('select x from kept'), [{ x: 7 }], 'the existing database is opened, not replaced');
  assert.equal(await migrate(again), [], 'nothing left to migrate');
  await again.close();
});

test('a template PGlite cannot load falls back to initdb', async () => {
  const bad = join(dir, 'bad.tar.gz');
  writeFileSync(bad, 'not a tar');
  const db = await openDatabase({ pgliteDir: join(dir, 'db2'), pgliteTemplate: bad });
  assert.not.ok(await marked(db));
  assert.equal(await db.query<{ one: number }>('select 1 as one'), [{ one: 1 }]);
  await db.close();
});

test.run();
