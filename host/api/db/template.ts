// The API's PGlite database template: a new database's data directory with every migration
// applied, made by `npm run build` (scripts/build.mjs, writeTemplate) next to this file's
// JavaScript, with the key it was made for beside it. A first start with an empty state
// directory unpacks it (untar.ts, with Node's own file calls; then opened as on a restart) instead
// of running initdb and the migrations, the most of a first start's CPU. The key names PGlite's version and a hash of the migrations: a
// template made by another PGlite or from other migrations is not used (initdb and the
// migrations run as without one), nor is one missing (running from the sources: no build).
// Consumes the shipped migrations; produces the template, and the choice of using it.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadMigrations, migrate, type Migration } from './migrate.js';
import { pgliteDb, pgliteOptions } from './open.js';

/** The template (a gzipped tar of PGlite's dumpDataDir) and its key file, as the build writes them. */
const TEMPLATE = fileURLToPath(new URL('./pglite-template.tar.gz', import.meta.url));
const keyFileOf = (tar: string) => tar.replace(/\.tar\.gz$/, '.key');

/** PGlite's version, from its package.json (which its exports do not expose: found from its entry point). */
function pgliteVersion(): string {
  const pkg = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}

/** What a template must have been made for to be used: PGlite's version and the migrations (names and SQL). */
function templateKey(migrations: Migration[] = loadMigrations()): string {
  const hash = createHash('sha256');
  for (const m of migrations) hash.update(`${m.version}\0${m.sql}\0`);
  return `pglite ${pgliteVersion()}, migrations ${migrations.at(-1)?.version ?? 'none'} ${hash.digest('hex').slice(0, 16)}`;
}

/**
 * The template a new database is unpacked from: `tar` when it is there and its key file holds
 * `key`, else undefined. `note` says which (and why not), for the start's log.
 */
export function usableTemplate(tar = TEMPLATE, key = templateKey()): { tar?: string; note: string } {
  if (!existsSync(tar)) return { note: 'no database template (the build makes one: running from the sources?)' };
  let made: string;
  try {
    made = readFileSync(keyFileOf(tar), 'utf8').trim();
  } catch (err) {
    return { note: `the database template's key cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  if (made !== key) return { note: `the database template was made for ${made}, not ${key}` };
  return { tar, note: `unpacked from the build's database template (${key})` };
}

/**
 * Writes the template for `migrations` (default: the shipped ones) to `tar` and its key beside it:
 * a PGlite database in memory, created as the API creates its own and migrated, then dumped.
 */
export async function writeTemplate(tar = TEMPLATE, migrations: Migration[] = loadMigrations()): Promise<void> {
  const { PGlite, options } = await pgliteOptions();
  const pg = await PGlite.create(options);
  try {
    await migrate(pgliteDb(pg, { location: 'the template in memory', unavailable: () => undefined, close: () => pg.close() }), migrations);
    const dump = await pg.dumpDataDir('gzip');
    writeFileSync(tar, Buffer.from(await dump.arrayBuffer()));
    writeFileSync(keyFileOf(tar), `${templateKey(migrations)}\n`);
  } finally {
    await pg.close();
  }
}
