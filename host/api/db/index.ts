// Facade of the API's storage: open (PGlite or PostgreSQL), migrate, and the query modules.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { migrate } from './migrate.js';
import { openDatabase, type Db } from './open.js';
import { usableTemplate } from './template.js';

export * from './accounts.js';
export * from './alerts.js';
export { createPgliteAside } from './create-aside.js';
export * from './error-details.js';
export * from './error-groups.js';
export * from './settings-keys.js';
export { loadMigrations, migrate } from './migrate.js';
export { isDatabaseUnreachable, openDatabase, type Db, type Queryable } from './open.js';
export { usableTemplate } from './template.js';

/** The PGlite directory inside a state directory. */
export function pgliteDir(stateDir: string): string {
  return join(stateDir, 'api-db');
}

/**
 * Opens the API database (PostgreSQL when `databaseUrl` is non-empty) and applies pending
 * migrations. A new PGlite database is unpacked from the build's template when its key matches
 * (template.ts), else made by initdb; `created` says which, for the log (undefined when the
 * database existed). `template` replaces the build's (tests).
 */
export async function openApiDatabase(opts: { stateDir: string; databaseUrl?: string; template?: string }): Promise<{ db: Db; applied: string[]; created?: string }> {
  const dir = pgliteDir(opts.stateDir);
  const choice = opts.databaseUrl || existsSync(join(dir, 'PG_VERSION')) ? undefined : usableTemplate(opts.template);
  const db = await openDatabase({ databaseUrl: opts.databaseUrl, pgliteDir: dir, pgliteTemplate: choice?.tar });
  const why = choice?.tar ? 'the database template could not be loaded' : (choice?.note ?? 'no database template');
  const created = db.created === 'template' ? choice?.note : db.created === 'initdb' ? `made by initdb and the migrations: ${why}` : undefined;
  try {
    return { db, applied: await migrate(db), created };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}
