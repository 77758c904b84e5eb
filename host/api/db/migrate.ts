// Applies the SQL files in migrations/ (sorted by name) that the database has not seen yet, in
// one transaction, and records each in schema_migrations. Several API replicas may start
// against one PostgreSQL server at once: a transaction-scoped advisory lock serializes them.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db } from './open.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constant works; it names "the API schema" among advisory locks.
const MIGRATION_LOCK_KEY = 7_340_008;

/** One migration file: its version (the file name without `.sql`) and its SQL. */
export interface Migration {
  version: string;
  sql: string;
}

/** The shipped migrations, in the order they apply. */
function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => ({ version: f.slice(0, -4), sql: readFileSync(`${dir}${f}`, 'utf8') }));
}

/** Applies pending migrations; returns the versions applied now (empty when up to date). */
export async function migrate(db: Db, migrations: Migration[] = loadMigrations()): Promise<string[]> {
  return db.transaction(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await q.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await q.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      applied.push(m.version);
    }
    return applied;
  });
}
