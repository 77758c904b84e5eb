// Opens the API's database: PGlite (embedded PostgreSQL) in a directory, or a PostgreSQL server
// when a connection URL is given. Consumes a location; produces a `Db` with one query interface,
// so every query and migration is written once, in PostgreSQL's dialect, for both.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
// PGlite and pg load when a database is opened, not with this module: `rae run` with the API off
// (the DaemonSet) never loads them (bench footprint measures the difference).
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import type pg from 'pg';
import { writeProblem } from '../../config/write-problem.js';
import { untarInto } from './untar.js';

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
  /**
   * PGlite only: how this open made a new database, 'template' (unpacked from the template given)
   * or 'initdb'; undefined when the directory held one already (and for PostgreSQL).
   */
  readonly created?: 'template' | 'initdb';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it rejects. */
  transaction<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * Why the storage cannot be used any more, or undefined: PGlite's directory removed under the
   * running process (its writes would be acknowledged and lost, its reads fail). A stat, cheap
   * enough for every request. PostgreSQL reports its failures through the queries themselves.
   */
  unavailable(): string | undefined;
  close(): Promise<void>;
}

/** SQLSTATEs of a server that stopped or is not accepting connections yet (admin_shutdown, crash_shutdown, cannot_connect_now); class 08 is every connection exception. */
const SERVER_DOWN_STATES = new Set(['57P01', '57P02', '57P03']);
/** Socket errors of a server out of reach. */
const SOCKET_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a query failed because the PostgreSQL server cannot be reached (stopped, restarting,
 * the network gone), rather than because of the query: pg's errors carry a SQLSTATE or a socket
 * code, and a connection lost mid-query only its message ("Connection terminated ...").
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || SERVER_DOWN_STATES.has(code) || SOCKET_DOWN_CODES.has(code))) return true;
  return /^Connection terminated|is not queryable/.test(err.message);
}

/** Thrown when another live process holds the PGlite directory. */
class DatabaseLockedError extends Error {
  readonly code = 'API_DB_LOCKED';
}

/** Opens `databaseUrl` when it is non-empty, else PGlite in `pgliteDir`: a new one unpacked from `pgliteTemplate` (a gzipped tar of PGlite's dumpDataDir) when one is given, else made by initdb. */
export async function openDatabase(opts: { databaseUrl?: string; pgliteDir: string; pgliteTemplate?: string }): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl);
  return openPglite(opts.pgliteDir, opts.pgliteTemplate);
}

/** The URL without the password, safe for logs. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}

async function openPostgres(url: string): Promise<Db> {
  const { default: pgModule } = await import('pg');
  const pool = new pgModule.Pool({ connectionString: url, max: 10 });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  // fail fast on a wrong URL or a server that does not answer, naming it (pg's error names neither the URL nor its variable)
  const client = await pool.connect().catch(async (err: Error) => {
    await pool.end().catch(() => {});
    throw new Error(`cannot connect to PostgreSQL at ${redactUrl(url)} (DATABASE_URL): ${err.message}`, { cause: err });
  });
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
    unavailable: () => undefined,
    close: () => pool.end(),
  };
}

// PGlite is one single-user PostgreSQL in this process: a second process opening the same
// directory would corrupt it, so a lock file next to it names the owner's pid.
function takeLock(lockFile: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      try {
        writeSync(fd, String(process.pid));
      } catch (err) {
        rmSync(lockFile, { force: true }); // an empty lock names no owner: leave none
        throw err;
      } finally {
        closeSync(fd);
      }
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

/** PGlite's class and the options every instance of the API's is created with. */
export async function pgliteOptions(): Promise<{ PGlite: typeof PGlite; options: PGliteOptions }> {
  const [{ PGlite }, { pg_trgm }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm')]);
  // pg_trgm: the alert store's index for free text over the output (migration 003_alert_store.sql)
  return { PGlite, options: { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`], extensions: { pg_trgm } } };
}

/** The template's bytes, when one is given and can be read. */
function templateBytes(template: string | undefined): Uint8Array | undefined {
  if (!template) return undefined;
  try {
    return readFileSync(template);
  } catch {
    return undefined;
  }
}

/**
 * PGlite in `dir`, a new database unpacked from `template` when there is one (untar.ts: then opened
 * as an existing one); a template that cannot be unpacked or that PGlite refuses (damaged, another
 * version) falls back to initdb.
 */
async function createPglite(dir: string, template: string | undefined, lockFile: string): Promise<{ pg: PGlite; created?: 'template' | 'initdb' }> {
  const { PGlite, options } = await pgliteOptions();
  // a new database only where the directory holds none yet
  const created = existsSync(join(dir, 'PG_VERSION')) ? undefined : 'initdb';
  const tar = created ? templateBytes(template) : undefined;
  if (tar) {
    try {
      // PG_VERSION, which tells a database is there, last: a process stopped while it unpacks
      // leaves a directory the next start unpacks again rather than one PGlite cannot open
      await untarInto(tar, dir, 'PG_VERSION');
      return { pg: await PGlite.create(dir, options), created: 'template' };
    } catch {
      for (const f of readdirSync(dir)) if (join(dir, f) !== lockFile) rmSync(join(dir, f), { recursive: true, force: true });
    }
  }
  return { pg: await PGlite.create(dir, options), created };
}

/** `pg` as a Db: `location` for logs, `unavailable` and `close` as the Db interface says. */
export function pgliteDb(pg: PGlite, parts: { location: string; created?: 'template' | 'initdb'; unavailable(): string | undefined; close(): Promise<void> }): Db {
  const q = (c: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query: async <R>(sql: string, params?: unknown[]) => (await c.query<R>(sql, params)).rows,
    exec: async (sql: string) => {
      await c.exec(sql);
    },
  });
  return { kind: 'pglite', ...parts, ...q(pg), transaction: <T>(fn: (tx: Queryable) => Promise<T>) => pg.transaction((tx) => fn(q(tx))) };
}

async function openPglite(dir: string, template: string | undefined): Promise<Db> {
  // Errors name the directory and the real cause (a read-only or full file system), not Node's
  // ENOENT of mkdir -p or a bare `ENOSPC ..., write`.
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new Error(`cannot create the API database directory ${dir}: ${writeProblem(dirname(dir), err as NodeJS.ErrnoException)}`);
  }
  const lockFile = `${dir}/.rae-api.lock`;
  try {
    takeLock(lockFile);
  } catch (err) {
    if (err instanceof DatabaseLockedError) throw err;
    throw new Error(`cannot take the API database lock ${lockFile}: ${writeProblem(dir, err as NodeJS.ErrnoException)}`);
  }
  let made: { pg: PGlite; created?: 'template' | 'initdb' };
  try {
    made = await createPglite(dir, template, lockFile);
  } catch (err) {
    rmSync(lockFile, { force: true });
    throw new Error(`cannot open the PGlite database in ${dir}: ${writeProblem(dir, err as NodeJS.ErrnoException)}`, { cause: err });
  }
  const { pg, created } = made;
  return pgliteDb(pg, {
    location: dir,
    created,
    unavailable: () => (existsSync(join(dir, 'PG_VERSION')) ? undefined : `the PGlite directory ${dir} is gone (removed while the API ran)`),
    async close() {
      try {
        await pg.close();
      } finally {
        rmSync(lockFile, { force: true });
      }
    },
  });
}
