// Facade of the API's storage: open (PGlite or PostgreSQL), migrate, and the query modules.
import { join } from 'node:path';
import { migrate } from './migrate.js';
import { openDatabase, type Db } from './open.js';

export * from './accounts.js';
export * from './alerts.js';
export { createPgliteAside } from './create-aside.js';
export * from './error-details.js';
export * from './error-groups.js';
export * from './settings-keys.js';
export { loadMigrations, migrate } from './migrate.js';
export { isDatabaseUnreachable, openDatabase, type Db, type Queryable } from './open.js';

/** The PGlite directory inside a state directory. */
export function pgliteDir(stateDir: string): string {
  return join(stateDir, 'api-db');
}

/** Opens the API database (PostgreSQL when `databaseUrl` is non-empty) and applies pending migrations. */
export async function openApiDatabase(opts: { stateDir: string; databaseUrl?: string }): Promise<{ db: Db; applied: string[] }> {
  const db = await openDatabase({ databaseUrl: opts.databaseUrl, pgliteDir: pgliteDir(opts.stateDir) });
  try {
    return { db, applied: await migrate(db) };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}
