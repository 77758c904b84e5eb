// The API's PGlite database made from a template. openDatabase: a new directory is unpacked from
// the template given instead of running initdb; a directory that already holds a database is
// opened as it is; a template that cannot be unpacked falls back to initdb (the template there is
// one PGlite instance's dumpDataDir with a marker table, so the tests can tell which way the
// database was made); one cut short leaves no PG_VERSION, so the next open unpacks it again. openApiDatabase with the build's template (template.ts, writeTemplate as
// `npm run build` runs it): the same schema and migrations as initdb and the migrations give,
// and a template whose key does not match (made from other migrations) is not used.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadMigrations, migrate, openApiDatabase, openDatabase, usableTemplate, type Db } from '../../host/api/db/index.js';
import { writeTemplate } from '../../host/api/db/template.js';
import { untarInto } from '../../host/api/db/untar.js';

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
  assert.is(db.created, 'template');
  assert.ok(await marked(db), 'made from the template');
  assert.ok((await migrate(db)).length > 0, 'migrations applied');
  await db.exec(`create table kept (x int); insert into kept values (7)`);
  await db.close();
  const again = await openDatabase({ pgliteDir: at, pgliteTemplate: template });
  assert.is(again.created, undefined, 'opened, not made');
  assert.equal(await again.query('select x from kept'), [{ x: 7 }], 'the existing database is opened, not replaced');
  assert.equal(await migrate(again), [], 'nothing left to migrate');
  await again.close();
});

test('a template that cannot be unpacked falls back to initdb', async () => {
  const bad = join(dir, 'bad.tar.gz');
  writeFileSync(bad, 'not a tar');
  const db = await openDatabase({ pgliteDir: join(dir, 'db2'), pgliteTemplate: bad });
  assert.is(db.created, 'initdb');
  assert.not.ok(await marked(db));
  assert.equal(await db.query<{ one: number }>('select 1 as one'), [{ one: 1 }]);
  await db.close();
});

test('a template cut short leaves no PG_VERSION (written last): the next open unpacks it again', async () => {
  const whole = gunzipSync(readFileSync(template));
  const lastHeader = whole.lastIndexOf('/postmaster.pid');
  assert.ok(lastHeader > whole.indexOf('/PG_VERSION'), 'PG_VERSION comes before the last entry in the dump');
  const at = join(dir, 'db3');
  mkdirSync(at);
  try {
    await untarInto(gzipSync(whole.subarray(0, lastHeader + 512)), at, 'PG_VERSION');
    assert.unreachable('unpacked a template cut short');
  } catch (err) {
    assert.match((err as Error).message, /^the database template is truncated at \/postmaster\.pid/);
  }
  assert.ok(existsSync(join(at, 'global')), 'the entries before the cut were written');
  assert.not.ok(existsSync(join(at, 'PG_VERSION')));
  const db = await openDatabase({ pgliteDir: at, pgliteTemplate: template });
  assert.is(db.created, 'template');
  assert.ok(await marked(db));
  await db.close();
});

/** What the migrations made: the versions recorded, the public tables' columns, the indexes and the extensions. */
async function schemaOf(db: Db): Promise<Record<string, unknown[]>> {
  return {
    migrations: await db.query('select version from schema_migrations order by version'),
    columns: await db.query(`select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns where table_schema = 'public' order by table_name, ordinal_position`),
    indexes: await db.query(`select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by tablename, indexname`),
    extensions: await db.query('select extname, extversion from pg_extension order by extname'),
  };
}

test("the build's template gives the schema and migrations of initdb and the migrations, and only its key's", async () => {
  const built = join(dir, 'built.tar.gz');
  await writeTemplate(built);
  const fromTemplate = await openApiDatabase({ stateDir: join(dir, 'state-template'), databaseUrl: '', template: built });
  const slow = await openApiDatabase({ stateDir: join(dir, 'state-initdb'), databaseUrl: '', template: join(dir, 'none.tar.gz') });
  try {
    assert.equal(fromTemplate.applied, [], 'every migration came with the template');
    assert.match(String(fromTemplate.created), /^unpacked from the build's database template \(pglite \S+, migrations 004_/);
    assert.equal(
      slow.applied,
      loadMigrations().map((m) => m.version),
    );
    assert.match(String(slow.created), /^made by initdb and the migrations: no database template/);
    const [a, b] = [await schemaOf(fromTemplate.db), await schemaOf(slow.db)];
    assert.ok(a.columns!.length > 10 && a.indexes!.length > 5, 'the tables are there');
    assert.equal(a, b);
  } finally {
    await fromTemplate.db.close();
    await slow.db.close();
  }
});

test('a template made from other migrations is not used: initdb and every migration', async () => {
  const stale = join(dir, 'stale.tar.gz');
  await writeTemplate(stale, loadMigrations().slice(0, 1));
  const choice = usableTemplate(stale);
  assert.is(choice.tar, undefined);
  assert.match(choice.note, /^the database template was made for pglite \S+, migrations 001_init \S+, not pglite \S+, migrations 004_/);
  const { db, applied, created } = await openApiDatabase({ stateDir: join(dir, 'state-stale'), databaseUrl: '', template: stale });
  try {
    assert.equal(
      applied,
      loadMigrations().map((m) => m.version),
    );
    assert.match(String(created), /^made by initdb and the migrations: the database template was made for/);
  } finally {
    await db.close();
  }
});

test.run();
