// Reads of the alert store (the `alerts` table, migrations 003 and 004, written by the
// store destination host/output/destinations/store.ts): search, counts, counts grouped by a
// field or a time bucket, one alert, and the alerts after an id (the live stream). Consumes an
// AlertFilter (routes/alert-params.ts checks the request into one); produces rows whose `json`
// is the alert's Falco JSON line with its store id added first.
import type { Db, Queryable } from './open.js';

/** What a query selects; every part is optional and they combine with AND (values of one part with OR). */
export interface AlertFilter {
  sources?: string[];
  /** Falco's numeric priorities (0 Emergency .. 7 Debug), any of. */
  priorities?: number[];
  /** At least this severe: priority <= this number. */
  minPriority?: number;
  rules?: string[];
  hostnames?: string[];
  /** Any of these tags. */
  tags?: string[];
  containerIds?: string[];
  containerNames?: string[];
  containerImages?: string[];
  pods?: string[];
  namespaces?: string[];
  /** Event time bounds, ns since the epoch: since inclusive, until exclusive. */
  sinceNs?: bigint;
  untilNs?: bigint;
  /** A substring of the output, any case. */
  text?: string;
}

/** The fields counts group by (falcosidekick-ui's /events/count/:groupby, plus time buckets). */
export const ALERT_GROUPS = ['priority', 'rule', 'source', 'tags', 'hostname', 'time'] as const;
export type AlertGroup = (typeof ALERT_GROUPS)[number];

/** A stored alert: its id and its JSON object text (the id first, then Falco's keys). */
export interface StoredAlert {
  id: string;
  json: string;
}

const LISTS: Array<[keyof AlertFilter, string]> = [
  ['sources', 'source'],
  ['priorities', 'priority'],
  ['rules', 'rule'],
  ['hostnames', 'hostname'],
  ['containerIds', 'container_id'],
  ['containerNames', 'container_name'],
  ['containerImages', 'container_image'],
  ['pods', 'k8s_pod'],
  ['namespaces', 'k8s_ns'],
];

/**
 * The WHERE clause of `f` (with `extra` conditions) and its parameters, numbered from $1. With
 * `textWindow`, the free text's index condition is the three characters of the needle's key from
 * that position (textWindow() chooses them) instead of the whole key: a substring of the key, so
 * every row the whole key finds it finds too, and the ILIKE stays the exact match.
 */
function whereOf(f: AlertFilter, extra: string[] = [], params: unknown[] = [], textWindow?: number): { where: string; params: unknown[] } {
  const cond = [...extra];
  const p = (v: unknown) => `$${params.push(v)}`;
  for (const [key, column] of LISTS) {
    const values = f[key] as Array<string | number> | undefined;
    // One value as `=`: the planner then reads the (column, time_ns) index backwards and stops at
    // the page; `= ANY` of one value it does not (measured on PostgreSQL 15 over 1,000,000 rows:
    // a time index scan filtering 5,000 rows, 247 ms, against 0.9 ms).
    if (values?.length === 1) cond.push(`${column} = ${p(values[0])}`);
    else if (values && values.length > 1) cond.push(`${column} = ANY(${p(values)})`);
  }
  if (f.minPriority !== undefined) cond.push(`priority <= ${p(f.minPriority)}`);
  if (f.tags && f.tags.length > 0) cond.push(`tags && ${p(f.tags)}::text[]`);
  if (f.sinceNs !== undefined) cond.push(`time_ns >= ${p(f.sinceNs.toString())}`);
  if (f.untilNs !== undefined) cond.push(`time_ns < ${p(f.untilNs.toString())}`);
  if (f.text) {
    // the key's LIKE is what the trigram index alerts_output_key answers (it keeps punctuation,
    // migration 004); the ILIKE, true of fewer rows, is the exact match. The needle's key is
    // computed by the database's own function, as the column's is, so both are folded alike.
    const key = `alert_text_key(${p(f.text)})`;
    cond.push(`output_key LIKE '%' || ${textWindow === undefined ? key : `substr(${key}, ${p(textWindow)}::int, 3)`} || '%'`);
    cond.push(`output ILIKE ${p(`%${f.text.replace(/[\\%_]/g, '\\$&')}%`)}`);
  }
  return { where: cond.length > 0 ? `WHERE ${cond.join(' AND ')}` : '', params };
}

/** The stored JSON with `"id":N` first. */
const withId = (r: { id: string; json: string }): StoredAlert => ({ id: String(r.id), json: `{"id":${r.id},${r.json.slice(1)}` });

/**
 * Most matching rows a search counts past its page's start. Beyond it the count is a lower bound
 * (`capped`): an exact count reads every matching row, which over a million rows took seconds on
 * a busy machine, on every page. 10,000 is where GitLab's REST API stops counting too (no
 * X-Total past 10,000 rows). docs/console.md, "Bounded counts".
 */
export const SEARCH_COUNT_CAP = 10_000;

/**
 * The alerts matching `f`, newest first, one page of them, and how many match: exactly up to
 * offset + SEARCH_COUNT_CAP; past that `total` is offset + SEARCH_COUNT_CAP and `capped` is true
 * (more match: a page after this one always exists).
 */
export async function searchAlerts(db: Db, f: AlertFilter, page: { limit: number; offset: number }): Promise<{ rows: StoredAlert[]; total: number; capped: boolean }> {
  const sql = searchStatements(f, page, { kind: db.kind });
  const rows = await db.query<{ id: string; json: string }>(sql.page, sql.params);
  if (rows.length < page.limit && (page.offset === 0 || rows.length > 0)) return { rows: rows.map(withId), total: page.offset + rows.length, capped: false };
  const [row] = await db.transaction(async (q) => {
    const count = searchStatements(f, page, { kind: db.kind, textWindow: f.text ? await textWindow(q, f.text) : undefined });
    await q.exec(count.countSettings);
    return q.query<{ n: string }>(count.count, count.params);
  });
  const n = Number(row?.n ?? 0);
  return { rows: rows.map(withId), total: Math.min(n, sql.cap), capped: n > sql.cap };
}

/**
 * The planner settings of a search's capped count, for its transaction alone. The planner
 * underestimates how many rows a common word's trigrams match (10,203 estimated, 100,000 found for
 * `file-3` over 1,000,000 rows: pg_trgm's selectivity), so it expects the count's LIMIT to read
 * the whole table, costs it above jit_above_cost and parallel_setup_cost, and chooses a parallel
 * sequential scan compiled by JIT: workers started and code emitted for a scan that stops after
 * 10,001 rows. Measured on PostgreSQL over 1,000,000 of the store bench's rows, on a busy machine:
 * 309 ms median with them, 94 ms without (a serial bitmap scan of the trigram index); a rare
 * word's count is unchanged (10 ms). PGlite starts no workers (its Gather runs the scan in the
 * backend alone) and has no JIT. docs/console.md, "Bounded counts".
 */
const COUNT_SETTINGS = 'SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL jit = off';

/**
 * PostgreSQL's count also gets the memory to keep its bitmap exact. A bitmap scan's bitmap holds
 * one entry per heap page, 64 bytes; past work_mem (4 MB by default: 65,536 pages, 512 MiB of
 * table) it turns pages lossy, and each row of a lossy page is read and matched again: a common
 * word over 1,000,000 rows (100,000 candidates on as many pages) rechecked 77,000 rows for its
 * 10,001 matches. 16 MB keeps 262,144 pages (2 GiB of table) exact, for this transaction only.
 * PGlite keeps its default: its WebAssembly memory grows and never shrinks, and its target is met
 * (docs/console.md, "Bounded counts").
 */
const COUNT_MEMORY = "SET LOCAL work_mem = '16MB'";

/** A search's two statements over the same parameters: its page, and the count of its matches up to `cap` + 1, run after `countSettings` in one transaction (also what the store bench EXPLAINs); `textWindow` as textWindow() chose it for the count. */
export function searchStatements(f: AlertFilter, page: { limit: number; offset: number }, count: { kind: Db['kind']; textWindow?: number }): { page: string; count: string; countSettings: string; params: unknown[]; cap: number } {
  const w = whereOf(f, [], [], count.textWindow);
  const cap = page.offset + SEARCH_COUNT_CAP;
  return {
    page: `SELECT id, json FROM alerts ${w.where} ORDER BY time_ns DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`,
    // the inner LIMIT stops the scan at cap + 1 rows (read from the filter's index alone where it can)
    count: `SELECT count(*) AS n FROM (SELECT 1 FROM alerts ${w.where} LIMIT ${cap + 1}) AS matching`,
    countSettings: count.kind === 'postgres' ? `${COUNT_SETTINGS}; ${COUNT_MEMORY}` : COUNT_SETTINGS,
    params: w.params,
    cap,
  };
}

/** Rows textWindow() samples: the newest, read backwards from the time index. */
const TEXT_SAMPLE_ROWS = 200;
/** A needle in fewer of the sampled rows than this share keeps its whole key. */
const TEXT_COMMON_SHARE = 0.02;

/**
 * Where, in `text`'s key, the three characters start that a capped count's index condition reads
 * instead of the whole key, or undefined to read the whole key. A trigram index answers a LIKE by
 * reading the row list of every trigram of the pattern, and words of a rule's output template are
 * in every row the rule raised: `file-3` is `fileq3` in the key, whose trigrams `fil`, `ile` and
 * `leq` are in all 1,000,000 rows of the store bench and `eq3` in the 100,000 that match, so the
 * index read three lists of 1,000,000 rows to find what the fourth holds alone (the count's index
 * scan took 2 to 2.5 times as long with them). pg_trgm keeps no statistics of its trigrams, so the
 * newest TEXT_SAMPLE_ROWS rows stand for the table: when the needle is in at least
 * TEXT_COMMON_SHARE of them (over a large table, more rows than a count reads before its cap),
 * the window of three letters or digits found in the fewest sampled rows is read instead, if it
 * is in no more than twice as many as the whole key (the extra rows it hands over are matched by
 * the ILIKE and dropped). A rarer needle keeps its whole key: all its trigrams narrow the rows a
 * count that ends below its cap reads. Only the plan depends on the sample; the rows found are
 * the same. docs/console.md, "Bounded counts".
 */
export async function textWindow(q: Queryable, text: string): Promise<number | undefined> {
  // Positions are in the key as the database computes it; a window must be three ASCII letters or
  // digits there, which pg_trgm indexes as one trigram under any locale. At most 64 windows.
  const rows = await q.query<{ at: number; found: number; sampled: number }>(
    `WITH sample AS (SELECT output_key AS k FROM alerts ORDER BY time_ns DESC LIMIT ${TEXT_SAMPLE_ROWS}), needle AS (SELECT alert_text_key($1) AS key)
     SELECT at, (SELECT count(*) FROM sample WHERE strpos(k, CASE WHEN at = 0 THEN key ELSE substr(key, at, 3) END) > 0)::int AS found, (SELECT count(*) FROM sample)::int AS sampled
     FROM needle, generate_series(0, least(length(key) - 2, 64)) AS at
     WHERE at = 0 OR substr(key, at, 3) ~ '^[a-z0-9]{3}$'`,
    [text],
  );
  const whole = rows.find((r) => r.at === 0);
  if (!whole || whole.found === 0 || whole.found < whole.sampled * TEXT_COMMON_SHARE) return undefined;
  let best: { at: number; found: number } | undefined;
  for (const r of rows) if (r.at > 0 && (!best || r.found < best.found)) best = r;
  return best && best.found <= 2 * whole.found ? best.at : undefined;
}

/** How many alerts match `f`. */
export async function countAlerts(q: Queryable, f: AlertFilter): Promise<number> {
  const w = whereOf(f);
  const [row] = await q.query<{ n: string }>(`SELECT count(*) AS n FROM alerts ${w.where}`, w.params);
  return Number(row?.n ?? 0);
}

/** Most groups one count returns (time buckets: the newest). */
const MAX_GROUPS = 10_000;

/** Counts of the alerts matching `f` by `by` (priority as its number; time by buckets of `bucketNs`, keyed by their start in ns), largest first (time: newest first). */
export async function countAlertsBy(q: Queryable, f: AlertFilter, by: AlertGroup, bucketNs = 3_600_000_000_000n): Promise<Array<{ key: string; count: number }>> {
  const w = whereOf(f);
  let sql: string;
  if (by === 'tags') sql = `SELECT t AS key, count(*) AS n FROM alerts, unnest(tags) AS t ${w.where} GROUP BY t ORDER BY n DESC, key LIMIT ${MAX_GROUPS}`;
  else if (by === 'time') {
    const b = `$${w.params.push(bucketNs.toString())}::bigint`;
    sql = `SELECT (div(time_ns, ${b}) * ${b})::text AS key, count(*) AS n FROM alerts ${w.where} GROUP BY 1 ORDER BY div(min(time_ns), ${b}) DESC LIMIT ${MAX_GROUPS}`;
  } else sql = `SELECT ${by}::text AS key, count(*) AS n FROM alerts ${w.where} GROUP BY ${by} ORDER BY n DESC, key LIMIT ${MAX_GROUPS}`;
  const rows = await q.query<{ key: string; n: string }>(sql, w.params);
  return rows.map((r) => ({ key: r.key, count: Number(r.n) }));
}

/** One alert by its id. */
export async function alertById(q: Queryable, id: string): Promise<StoredAlert | undefined> {
  const [row] = await q.query<{ id: string; json: string }>('SELECT id, json FROM alerts WHERE id = $1', [id]);
  return row && withId(row);
}

/** The alerts stored after `afterId` that match `f`, oldest first, up to `limit` (the live stream). */
export async function alertsAfter(q: Queryable, f: AlertFilter, afterId: string, limit: number): Promise<StoredAlert[]> {
  const w = whereOf(f, ['id > $1'], [afterId]);
  const rows = await q.query<{ id: string; json: string }>(`SELECT id, json FROM alerts ${w.where} ORDER BY id LIMIT ${limit}`, w.params);
  return rows.map(withId);
}

/** The newest id stored, '0' when none (where a live stream without Last-Event-ID starts). */
export async function lastAlertId(q: Queryable): Promise<string> {
  const [row] = await q.query<{ id: string | null }>('SELECT max(id)::text AS id FROM alerts');
  return row?.id ?? '0';
}
