// The two storages every API test runs against: PGlite (a template directory made once per
// process and copied per server, since a fresh PGlite initdb takes seconds) and a real
// PostgreSQL server (one throwaway cluster, a new database per server).
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openApiDatabase, pgliteDir } from '../../host/api/index.js';
import { findPgBin, startPgCluster, type PgCluster } from './postgres.js';

/** Where one server keeps its data. */
export interface Location {
  stateDir: string;
  /** '' for PGlite. */
  databaseUrl: string;
}

/** A storage kind the suites run against. */
export interface Storage {
  name: 'pglite' | 'postgres';
  /** A new, empty database with the migrations applied. */
  fresh(): Promise<Location>;
  /** Removes everything the storage created (stops the cluster); returns the directories removed. */
  shutdown(): Promise<string[]>;
  /** PostgreSQL: stops and starts the server, its data kept (an outage of every database of the storage). */
  outage?: { stop(): Promise<void>; start(): Promise<void> };
}

/** PGlite storage. */
export function pgliteStorage(): Storage {
  const dirs: string[] = [];
  let template: Promise<string> | undefined;
  const makeTemplate = async (): Promise<string> => {
    const stateDir = mkdtempSync(join(tmpdir(), 'rae-api-template-'));
    dirs.push(stateDir);
    const { db } = await openApiDatabase({ stateDir, databaseUrl: '' });
    await db.close();
    return pgliteDir(stateDir);
  };
  return {
    name: 'pglite',
    async fresh() {
      template ??= makeTemplate();
      const src = await template;
      const stateDir = mkdtempSync(join(tmpdir(), 'rae-api-'));
      dirs.push(stateDir);
      cpSync(src, pgliteDir(stateDir), { recursive: true });
      return { stateDir, databaseUrl: '' };
    },
    async shutdown() {
      const removed = dirs.splice(0);
      for (const d of removed) rmSync(d, { recursive: true, force: true });
      return removed;
    },
  };
}

/** PostgreSQL storage, or the reason it is unavailable. */
export function postgresStorage(): Storage | { unavailable: string } {
  const { bin, reason } = findPgBin();
  if (!bin) return { unavailable: reason! };
  let cluster: Promise<PgCluster> | undefined;
  let n = 0;
  const stateDir = mkdtempSync(join(tmpdir(), 'rae-api-pgstate-'));
  return {
    name: 'postgres',
    async fresh() {
      cluster ??= startPgCluster(bin);
      const c = await cluster;
      const name = `rae_test_${++n}`;
      const client = new pg.Client({ connectionString: c.adminUrl });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return { stateDir, databaseUrl: `postgres://postgres@127.0.0.1:${c.port}/${name}` };
    },
    outage: {
      stop: async () => (await cluster!).stopServer(),
      start: async () => (await cluster!).startServer(),
    },
    async shutdown() {
      rmSync(stateDir, { recursive: true, force: true });
      if (!cluster) return [stateDir];
      const c = await cluster;
      await c.stop();
      return [stateDir, c.dir];
    },
  };
}
