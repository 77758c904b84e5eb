// Start-up step of `rae run`: the error-tracking API, never awaited, and the console once it is up. Until it is up, readiness
// names it; if it fails, detection goes on and readiness reports the API failed. Creating its
// database (PGlite's first start) is seconds of this thread's CPU: it starts once the detection
// path is up, so that comes first (measured under load: started alongside, it put the detection
// path 3.6 s later). An existing database (a restart) or a PostgreSQL server only opens:
// alongside the start (measured under load: the detection path as soon, every component 0.7 s
// sooner). A first start unpacks the build's migrated database template (api/db/template.ts),
// about a restart's work, so it opens alongside too. Without a usable template (running from the
// sources, or a template made for other migrations) the database is created with initdb and the
// migrations in a child process first (create-aside.ts: what the creation leaves resident goes
// with it), then opened here as on a restart. Consumes the
// configuration, the lifecycle, the fault tracking and the store's link to the database (opened
// once the API is up); produces the API component once it listens.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createPgliteAside, pgliteDir, usableTemplate } from '../../api/db/index.js';
import type { Config } from '../../config/config.js';
import type { DatabaseLink } from '../../output/destinations/store-link.js';
import type { FaultTracking } from '../../tracking/index.js';
import { log } from '../command.js';
import type { Lifecycle } from './lifecycle.js';
import { startConsoleOf } from './start-console.js';
import type { ConsoleRule } from '../../console/index.js';

/** Starts the API aside; the run's stop waits for an API still opening its database (Lifecycle.apiStarted). */
function startApiAside(config: Config, life: Lifecycle, tracking: FaultTracking, storeLink: DatabaseLink | undefined, rules: () => ConsoleRule[], create: boolean): void {
  life.board.set('api', { state: 'starting' });
  // imported here: with api.enabled false (the DaemonSet) its routes and database drivers never load
  const pending = (create ? createAside(config.stateDir) : Promise.resolve())
    .then(() => import('../../api/index.js'))
    .then(({ startApi }) => startApi({ config, log, databaseUrl: process.env.DATABASE_URL, signal: life.apiAbort.signal }))
    .then(
      async (api) => {
        if (life.apiAbort.signal.aborted) {
          storeLink?.fail('the engine stopped while the API started');
          return api.close(); // up just as the stop began
        }
        // the engine's faults still pending, and the store's statements in flight, go into the API's database before it closes
        life.add({
          name: 'api',
          stop: () =>
            tracking
              .close()
              .then(() => storeLink?.release())
              .then(() => api.close()),
        });
        storeLink?.open(api.db);
        log(`run: api listening on ${api.url}`);
        life.board.set('api', { state: 'up' });
        void tracking.apiStarted(api.db);
        void startConsoleOf(config, life, api.db, rules);
      },
      (err: unknown) => {
        storeLink?.fail(`the API did not start: ${(err as Error).message}`);
        if (life.apiAbort.signal.aborted) return log(`run: the api did not start: ${(err as Error).message}`);
        log(`run: the api failed to start: ${(err as Error).message}; detection goes on without it`, 'error');
        life.board.set('api', { state: 'failed', error: (err as Error).message });
        tracking.apiUnavailable(`the api failed to start`);
      },
    )
    .finally(() => {
      life.apiStarted = undefined;
    });
  life.apiStarted = pending;
}

/** Creates the PGlite database in a child process; when that fails, says why and leaves the creation to the API's start, in this process. */
async function createAside(stateDir: string): Promise<void> {
  try {
    const { pid, applied, created } = await createPgliteAside(stateDir);
    log(`api: created the PGlite database at ${pgliteDir(stateDir)} in process ${pid}, applied migrations ${applied.join(', ')}${created ? `; ${created}` : ''}`);
  } catch (err) {
    log(`api: ${(err as Error).message}; creating it in this process`, 'warning');
  }
}

/**
 * The API's two start points: `early` (a database that only opens, or one unpacked from the
 * build's migrated template, in this process: about a restart's work) during the start, `late`
 * (one to create with initdb and the migrations, in a child process) once the detection path is up.
 */
export function apiStarts(config: Config, life: Lifecycle, tracking: FaultTracking, storeLink: DatabaseLink | undefined, rules: () => ConsoleRule[]): { early(): void; late(): void } {
  const early = config.api.enabled && (!!process.env.DATABASE_URL || existsSync(join(pgliteDir(config.stateDir), 'PG_VERSION')) || usableTemplate().tar !== undefined);
  return {
    early: () => {
      if (early) startApiAside(config, life, tracking, storeLink, rules, false);
    },
    late: () => {
      if (config.api.enabled && !early) startApiAside(config, life, tracking, storeLink, rules, true);
      if (!config.api.enabled) tracking.apiUnavailable('api.enabled is false');
    },
  };
}
