// The store destination's way to the API's database (store.ts). The fan-out starts before the
// API, whose PGlite may take seconds to open, and PGlite is one database per process: so the
// store does not open a database of its own but borrows the API's once it is open, through this
// link. `rae run` creates it, hands it to the fan-out, opens it when the API is up, fails it when
// the API cannot start, and releases it before the API closes its database (waiting for the
// store's statements in flight, so none runs against a closed database).
import type { AlertDatabase, AlertDatabaseLink } from './types.js';

/** The link and its three transitions. */
export interface DatabaseLink extends AlertDatabaseLink {
  /** The API's database is open. */
  open(db: AlertDatabase): void;
  /** There will be no database (the API failed to start); `get` answers `reason`. */
  fail(reason: string): void;
  /** The API is closing its database: later statements are refused, this waits for those in flight. */
  release(): Promise<void>;
}

/** A link with no database yet. */
export function createDatabaseLink(): DatabaseLink {
  let db: AlertDatabase | undefined;
  let gone: string | undefined;
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const inFlight = new Set<Promise<unknown>>();
  // Every statement goes through this wrapper, so release() knows what is still running.
  const tracked: AlertDatabase = {
    query<R>(sql: string, params?: unknown[]): Promise<R[]> {
      if (gone !== undefined || !db) return Promise.reject(new Error(gone ?? 'the API database is not open'));
      const p = db.query<R>(sql, params);
      const done: Promise<unknown> = p.then(
        (): unknown => inFlight.delete(done),
        (): unknown => inFlight.delete(done),
      );
      inFlight.add(done);
      return p;
    },
  };
  return {
    async get(signal) {
      if (!db && gone === undefined && !signal.aborted) {
        let onAbort: (() => void) | undefined;
        await Promise.race([
          settled,
          new Promise<void>((resolve) => {
            onAbort = () => resolve();
            signal.addEventListener('abort', onAbort, { once: true });
          }),
        ]);
        if (onAbort) signal.removeEventListener('abort', onAbort);
      }
      if (gone !== undefined) return gone;
      return db ? tracked : 'the API database did not open before the output closed';
    },
    open(d) {
      if (gone !== undefined) return;
      db = d;
      settle();
    },
    fail(reason) {
      gone ??= reason;
      settle();
    },
    async release() {
      gone ??= 'the API database is closed (the engine is stopping)';
      settle();
      await Promise.all(inFlight);
    },
  };
}
