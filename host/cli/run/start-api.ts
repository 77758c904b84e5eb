// Start-up step of `rae run`: the error-tracking API, never awaited. Until it is up, readiness
// names it; if it fails, detection goes on and readiness reports the API failed. Creating its
// database (PGlite's first start) is seconds of this thread's CPU: it starts once the detection
// path is up, so that comes first (measured under load: started alongside, it put the detection
// path 3.6 s later). An existing database (a restart) or a PostgreSQL server only opens:
// alongside the start (measured under load: the detection path as soon, every component 0.7 s
// sooner). Consumes the configuration, the lifecycle and the fault tracking; produces the API
// component once it listens.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pgliteDir, startApi } from '../../api/index.js';
import type { Config } from '../../config/config.js';
import type { FaultTracking } from '../../tracking/index.js';
import { log } from '../command.js';
import type { Lifecycle } from './lifecycle.js';

/** Starts the API aside; the run's stop waits for an API still opening its database (Lifecycle.apiStarted). */
function startApiAside(config: Config, life: Lifecycle, tracking: FaultTracking): void {
  life.board.set('api', { state: 'starting' });
  const pending = startApi({ config, log, databaseUrl: process.env.DATABASE_URL, signal: life.apiAbort.signal })
    .then(
      async (api) => {
        if (life.apiAbort.signal.aborted) return api.close(); // up just as the stop began
        // the engine's faults still pending go into the API's database before it closes
        life.add({ name: 'api', stop: () => tracking.close().then(() => api.close()) });
        log(`run: api listening on ${api.url}`);
        life.board.set('api', { state: 'up' });
        void tracking.apiStarted(api.db);
      },
      (err: unknown) => {
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

/** The API's two start points: `early` (a database that only opens) during the start, `late` (one to create) once the detection path is up. */
export function apiStarts(config: Config, life: Lifecycle, tracking: FaultTracking): { early(): void; late(): void } {
  const early = config.api.enabled && (!!process.env.DATABASE_URL || existsSync(join(pgliteDir(config.stateDir), 'PG_VERSION')));
  return {
    early: () => {
      if (early) startApiAside(config, life, tracking);
    },
    late: () => {
      if (config.api.enabled && !early) startApiAside(config, life, tracking);
      if (!config.api.enabled) tracking.apiUnavailable('api.enabled is false');
    },
  };
}
