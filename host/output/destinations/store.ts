// The alert store (docs/console.md): every alert this destination receives is written to the
// API's SQL database (PGlite, or PostgreSQL with DATABASE_URL), in batches of up to `batchsize`
// rows, one INSERT each, into the `alerts` table of migration 003_alert_store.sql. It runs behind
// the common bounded queue (../queue.ts), so neither stdout nor any other destination waits for
// it: a slow or stopped database fills the queue, and what a full queue refuses is dropped and
// counted (enginesecurity_enginesidekick_output_dropped_total{destination="store"}). Retention:
// after a batch, at most every `retentionseconds`, rows older than `maxage` (event time) and all
// but the newest `maxrows` rows are deleted. Consumes Deliveries and the database link
// (store-link.ts); produces rows.
import { prioritySeverity } from '../../engine/priority.js';
import { alertJson, type Alert, type OutputFieldValue } from '../alert.js';
import { toWellFormed } from '../json-write.js';
import { nowNs, parseDuration } from '../time.js';
import { withDeadline } from './deadline.js';
import type { OutputSettings } from './settings.js';
import type { AlertDatabase, OutputContext, Sender } from './types.js';

/** The columns an INSERT fills, in the order rowOf gives them. */
const COLUMNS = ['time_ns', 'priority', 'rule', 'source', 'hostname', 'tags', 'output', 'container_id', 'container_name', 'container_image', 'k8s_pod', 'k8s_ns', 'json'] as const;

/** A string PostgreSQL can hold in a text column: no NUL, no lone surrogate. */
function storable(s: string): string {
  return toWellFormed(s).replaceAll('\0', '\uFFFD');
}

/** The first of `keys` with a non-empty scalar value, as text. */
function field(fields: Record<string, OutputFieldValue>, ...keys: string[]): string | null {
  for (const k of keys) {
    const v = fields[k];
    if (typeof v === 'string' ? v !== '' : typeof v === 'number' || typeof v === 'bigint') return storable(String(v));
  }
  return null;
}

/** One alert's column values, in COLUMNS order. */
function rowOf(a: Alert): unknown[] {
  const f = a.outputFields;
  return [
    a.timeNs.toString(),
    prioritySeverity(a.priority),
    storable(a.rule),
    storable(a.source),
    storable(a.hostname),
    a.tags.map(storable),
    storable(a.message),
    field(f, 'container.id'),
    field(f, 'container.name'),
    field(f, 'container.image', 'container.image.repository'),
    field(f, 'k8s.pod.name'),
    field(f, 'k8s.ns.name', 'ka.target.namespace'),
    alertJson(a),
  ];
}

/** The INSERT of `n` rows (PostgreSQL takes up to 65535 parameters: table.ts caps batchsize at 5000 rows). */
function insertSql(n: number): string {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) rows.push(`(${COLUMNS.map((_, j) => `$${i * COLUMNS.length + j + 1}`).join(', ')})`);
  return `INSERT INTO alerts (${COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`;
}

/** Deletes what retention no longer keeps: rows older than `maxAgeS` (0 = no age limit), then all but the newest `maxRows` (0 = no limit). */
async function prune(db: AlertDatabase, maxAgeS: number, maxRows: number): Promise<void> {
  if (maxAgeS > 0) await db.query('DELETE FROM alerts WHERE time_ns < $1', [(nowNs() - BigInt(maxAgeS) * 1_000_000_000n).toString()]);
  if (maxRows > 0) await db.query('DELETE FROM alerts WHERE id <= (SELECT id FROM alerts ORDER BY id DESC OFFSET $1 LIMIT 1)', [maxRows]);
}

/** The store transport. The table row's checks (table.ts) have vetted the settings. */
export function createStoreSender(s: OutputSettings, ctx: OutputContext): Sender {
  const link = ctx.alertDatabase;
  if (!link) throw new Error('forwarder.outputs.store: there is no API database to store alerts in (api.enabled is false)');
  const timeoutMs = s.number('timeoutms');
  const maxAgeS = parseDuration(s.string('maxage') || '0') ?? 0;
  const maxRows = s.number('maxrows');
  const intervalMs = s.number('retentionseconds') * 1000;
  let lastPrune = -Infinity;
  let pruneFailing = false;
  return {
    maxBatch: s.number('batchsize'),
    async send(batch, signal) {
      // Until the API has opened its database (seconds at a first start) the batch waits, and the queue fills behind it.
      const db = await link.get(signal);
      if (typeof db === 'string') return db;
      // A deadline that passes while the INSERT still runs may store the batch twice on the retry: at least once, not exactly once.
      const why = await withDeadline(
        db.query(
          insertSql(batch.length),
          batch.flatMap((d) => rowOf(d.alert)),
        ),
        timeoutMs,
        signal,
      );
      if (why !== undefined) return `insert into alerts: ${why}`;
      if (performance.now() - lastPrune >= intervalMs) {
        lastPrune = performance.now();
        // The batch is stored: a failed prune is logged (once per failing spell), never retried as a failed delivery.
        const failed = await withDeadline(prune(db, maxAgeS, maxRows), timeoutMs, signal);
        if (failed !== undefined && !pruneFailing) ctx.log(`forwarder: store retention failing: ${failed}`);
        pruneFailing = failed !== undefined;
      }
      return undefined;
    },
  };
}
