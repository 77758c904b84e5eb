// Builders of Sentry ingestion traffic, shared by the API tests (test/api/) and benches
// (bench/fuzz-api.ts): a running API ready to ingest (seeded world, an active integrated setting,
// a client key), a Sentry event and the envelope that carries it.
import { createKey, upsertSetting } from '../../host/api/db/index.js';
import { seedWorld, startTestApi, type TestApi, type World } from './api.js';
import type { Storage } from './storage.js';

/** What startIngestionApi returns: the API, its seeded world, the project id and its client key. */
export type IngestionCtx = { api: TestApi; w: World; key: string; id: number };

/** A running API with the seeded world, an active integrated setting on its project and a client key. */
export async function startIngestionApi(storage: Storage, opts: Parameters<typeof startTestApi>[1] = {}): Promise<IngestionCtx> {
  const api = await startTestApi(storage, opts);
  const w = await seedWorld(api.db);
  const id = w.project.id;
  await upsertSetting(api.db, id, true, true);
  return { api, w, id, key: (await createKey(api.db, id)).public_key };
}

/** A Sentry event with one exception thrown in `fn` of `mod`. */
export function sentryEvent(id: string, type: string, value: string, fn = 'handler', mod = 'app'): Record<string, unknown> {
  return {
    event_id: id,
    timestamp: 1_700_000_000.5,
    platform: 'node',
    level: 'error',
    environment: 'production',
    exception: {
      values: [
        {
          type,
          value,
          stacktrace: {
            frames: [
              { function: 'main', module: 'index', lineno: 1 },
              { function: fn, module: mod, lineno: 9, in_app: true },
            ],
          },
        },
      ],
    },
  };
}

/** An envelope with an event item; `withLength` writes the item length header. */
export function envelope(event: Record<string, unknown>, opts: { dsn?: string; withLength?: boolean; extra?: string } = {}): string {
  const payload = JSON.stringify(event);
  const header = { event_id: event.event_id, sent_at: '2024-01-01T00:00:00Z', ...(opts.dsn ? { dsn: opts.dsn } : {}) };
  const item = opts.withLength ? { type: 'event', length: Buffer.byteLength(payload) } : { type: 'event' };
  return `${JSON.stringify(header)}\n${opts.extra ?? ''}${JSON.stringify(item)}\n${payload}\n`;
}
