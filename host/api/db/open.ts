// Opens the API's database: PGlite (embedded PostgreSQL) in a directory, or a PostgreSQL server
// when a connection URL is given. Consumes a location; produces a `Db` with one query interface,
// so every query and migration is written once, in PostgreSQL's dialect, for both.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** Something that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  /** Runs one statement with `$1`-style parameters and returns its rows. */
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/** An open database of either kind. */
export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Where the data is, for logs: the PGlite directory or the URL without its password. */
  readonly location: string;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it rejects. */
  transaction<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Thrown when another live process holds the PGlite directory. */
export class DatabaseLockedError extends Error {
  readonly code = 'API_DB_LOCKED';
}

/** Opens `databaseUrl` when it is non-empty, else PGlite in `pgliteDir`. */
export async function openDatabase(opts: { databaseUrl?: string; pgliteDir: string }): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl);
  return openPglite(opts.pgliteDir);
}

/** The URL without the password, safe for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}

async function openPostgres(url: string): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const client = await pool.connect(); // fail fast on a wrong URL
  client.release();
  const q = (c: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <R>(sql: string, params?: unknown[]) => (await c.query(sql, params)).rows as R[],
    exec: async (sql: string) => {
      await c.query(sql);
    },
  });
  return {
    kind: 'postgres',
    location: redactUrl(url),
    ...q(pool),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const result = await fn(q(c));
        await c.query('COMMIT');
        return result;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        c.release();
      }
    },
    close: () => pool.end(),
  };
}

// PGlite is one single-user PostgreSQL in this process: a second process opening the same
// directory would corrupt it, so a lock file next to it names the owner's pid.
function takeLock(lockFile: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(lockFile, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        throw new DatabaseLockedError(`the API database ${dirname(lockFile)} is in use by process ${pid} (rae run?): stop it first, ` + 'or use a PostgreSQL server (DATABASE_URL), or put the objects in the bootstrap file (docs/api.md)');
      }
      rmSync(lockFile, { force: true }); // stale: its process is gone
    }
  }
  throw new DatabaseLockedError(`cannot take the lock ${lockFile}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite keeps PostgreSQL's default 128 MB of shared buffers in its WebAssembly memory; the API's
 * tables (settings, keys, tokens) fit in a few pages, and 16 MB takes `rae run` about 120 MB
 * lower (measured: 369 -> 250 MB RSS for the database alone).
 */
const PGLITE_SHARED_BUFFERS = '16MB';

async function openPglite(dir: string): Promise<Db> {
  mkdirSync(dir, { recursive: true });
  const lockFile = `${dir}/.rae-api.lock`;
  takeLock(lockFile);
  let db: PGlite;
  try {
    db = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`] });
  } catch (err) {
    rmSync(lockFile, { force: true });
    throw err;
  }
  const q = (c: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query: async <R>(sql: string, params?: unknown[]) => (await c.query<R>(sql, params)).rows,
    exec: async (sql: string) => {
      await c.exec(sql);
    },
  });
  return {
    kind: 'pglite',
    location: dir,
    ...q(db),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction((tx) => fn(q(tx))),
    async close() {
      try {
        await db.close();
      } finally {
        rmSync(lockFile, { force: true });
      }
    },
  };
}
