// Facade of the error tracking API: startApi opens the database (PGlite in <stateDir>/api-db, or
// PostgreSQL when a URL is given), applies migrations and the bootstrap file, and serves the
// routes (HTTPS when api.tlsCertFile/tlsKeyFile are set). Docs: docs/api.md.
import { readFileSync } from 'node:fs';
import type { ApiConfig } from './config.js';
import { applyBootstrap, parseBootstrap } from './bootstrap.js';
import { openApiDatabase, type Db } from './db/index.js';
import type { DsnBase } from './entities.js';
import { apiLimitsOf, type ApiLimits } from './limits.js';
import { buildServer } from './server.js';

export { applyBootstrap } from './bootstrap.js';
export { openApiDatabase, pgliteDir } from './db/index.js';
export { apiLimitsOf } from './limits.js';
export { authenticate } from './auth.js';
export { registerQueryRoutes } from './query-routes.js';
export { databaseUnreachableAnswer, storageGoneAnswer } from './routes/common.js';

/** A running API. */
export interface RunningApi {
  /** Base URL, e.g. http://127.0.0.1:8080 (the real port when configured as 0). */
  url: string;
  /** The open database (for `rae admin`-like seeding in tests and benchmarks). */
  db: Db;
  close(): Promise<void>;
}

/** What the API reads of the configuration: its section and the state directory (PGlite's home). */
type ApiOptions = { api: ApiConfig; stateDir: string };

/** Thrown by startApi with a message fit for the user (bad TLS files, bootstrap problems, locked database). */
class ApiStartError extends Error {
  readonly code = 'API_START_FAILED';
}

/**
 * Starts the API. `databaseUrl` falls back to $DATABASE_URL; pass '' to force PGlite.
 * Rejects with ApiStartError (or the database's own error) when it cannot start. Once `signal` is
 * aborted it does not listen: the database, once open, is closed and the start rejects.
 */
export async function startApi(opts: { config: ApiOptions; log: (msg: string) => void; databaseUrl?: string; signal?: AbortSignal }): Promise<RunningApi> {
  const api = opts.config.api;
  const databaseUrl = opts.databaseUrl ?? process.env.DATABASE_URL ?? '';
  const tls = readTls(api.tlsCertFile, api.tlsKeyFile);
  const bootstrap = api.bootstrapFile ? readBootstrap(api.bootstrapFile) : undefined;
  if (api.externalScheme !== 'https' && api.externalScheme !== 'http') {
    throw new ApiStartError(`api.externalScheme: expected https or http, got ${JSON.stringify(api.externalScheme)}`);
  }
  if (api.externalHost !== '' && !validHost(api.externalHost)) {
    throw new ApiStartError(`api.externalHost: expected host or host:port, got ${JSON.stringify(api.externalHost)}`);
  }
  const limits = apiLimitsOf(api);
  if ('problem' in limits) throw new ApiStartError(limits.problem);
  const { db, applied, created } = await openApiDatabase({ stateDir: opts.config.stateDir, databaseUrl });
  try {
    if (opts.signal?.aborted) throw new ApiStartError('stopped while it opened its database (closed, never listened)');
    const where = db.kind === 'pglite' ? `PGlite at ${db.location}` : `PostgreSQL at ${db.location}`;
    opts.log(`api: storage ${where}${applied.length > 0 ? `, applied migrations ${applied.join(', ')}` : ''}${created ? `; ${created}` : ''}`);
    if (bootstrap) {
      const result = await applyBootstrap(db, bootstrap);
      if (!result.ok) throw new ApiStartError(`api.bootstrapFile: ${result.problems.join('; ')}`);
      opts.log(`api: bootstrap ${api.bootstrapFile}: ${result.summary}`);
    }
    return await listen(db, opts, tls, limits);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

async function listen(db: Db, opts: { config: ApiOptions; log: (msg: string) => void }, tls: { cert: Buffer; key: Buffer } | undefined, limits: ApiLimits): Promise<RunningApi> {
  const api = opts.config.api;
  // Filled in once the port is known (api.port 0 listens on a free one).
  const dsnBase: DsnBase = { scheme: api.externalScheme, host: api.externalHost };
  const app = await buildServer({ db, tls, log: opts.log, dsnBase, limits }).catch((err: Error) => {
    throw new ApiStartError(tls ? `api TLS: ${err.message}` : `api: ${err.message}`);
  });
  try {
    await app.listen({ host: api.address, port: api.port });
  } catch (err) {
    await app.close();
    throw new ApiStartError(`api: cannot listen on ${api.address}:${api.port}: ${(err as Error).message}`);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : api.port;
  if (api.externalHost === '') dsnBase.host = defaultExternalHost(api.externalScheme, port);
  const host = api.address.includes(':') ? `[${api.address}]` : api.address;
  const url = `${tls ? 'https' : 'http'}://${host}:${port}`;
  opts.log(`api: listening on ${url}/api/v4 (DSNs and links point at ${dsnBase.scheme}://${dsnBase.host})`);
  let closed = false;
  return {
    url,
    db,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await db.close();
    },
  };
}

/** `localhost:<port>`, the port left out when it is the scheme's default (443, 80), as GitLab's URLs. */
export function defaultExternalHost(scheme: string, port: number): string {
  return (scheme === 'https' && port === 443) || (scheme === 'http' && port === 80) ? 'localhost' : `localhost:${port}`;
}

/** A host name or address with an optional port, nothing else (no path, user or scheme). */
function validHost(host: string): boolean {
  return /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host);
}

function readTls(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } | undefined {
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new ApiStartError('api.tlsCertFile and api.tlsKeyFile must be set together');
  try {
    return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  } catch (err) {
    throw new ApiStartError(`api TLS: ${(err as Error).message}`);
  }
}

function readBootstrap(file: string) {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ApiStartError(`api.bootstrapFile: cannot read ${file}: ${(err as Error).message}`);
  }
  const parsed = parseBootstrap(file, text);
  if (!parsed.ok) throw new ApiStartError(`api.bootstrapFile: ${parsed.problems.join('; ')}`);
  return parsed.plan;
}
