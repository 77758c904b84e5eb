// Scenario `store`: the alert store (docs/console.md) on PGlite and on a real PostgreSQL server
// (a throwaway cluster on loopback, as the API tests start it). For each database: alerts/s
// through the fan-out into the store; stdout's submit-to-line latency without and with the store
// in the same run; then the table filled to 1,000,000 alerts by one INSERT ... SELECT over
// generate_series per 100,000 rows (in the database, not through HTTP), and p50/p99 of a search
// with one filter through the real query API (GET /api/v1/events/search, a token, undici), for
// every filter with changing values, with the scans the planner chooses for its two statements
// (EXPLAIN: the page and the capped count; a `Seq Scan` is a filter read without its index).
// Last, a real `rae run` (built-in rules, PGlite) with the store off and on: its RSS once ready
// and after 20,000 alerts posted to its forwarder were stored, both starts after a first one
// (not measured) that compiled the rules into the module cache and created the database.
// Bounded: fixed alert, row and request counts, every wait with a deadline.
// BENCH_STORE_PARTS (comma-separated pglite, postgres, engine; default all) runs some parts;
// BENCH_STORE_ROWS (default 1,000,000) searches fewer rows, for a quick check of the bench itself.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Pool } from 'undici';
import { addToken, createUser, generateToken, SEARCH_COUNT_CAP, searchStatements, textWindow, type Db } from '../host/api/db/index.js';
import { isApiError } from '../host/api/errors.js';
import { alertQueryOf } from '../host/api/routes/alert-params.js';
import { defaultConfig } from '../host/config/config.js';
import { createMetrics, type Metrics } from '../host/metrics/index.js';
import type { Alert } from '../host/output/alert.js';
import { createDatabaseLink } from '../host/output/destinations/store-link.js';
import { startFanout } from '../host/output/fanout.js';
import { startTestApi } from '../support/api/api.js';
import { pgliteStorage, postgresStorage, type Storage } from '../support/api/storage.js';
import { figure, median, progress } from './report.js';

const INSERT_ALERTS = 20_000;
const LATENCY_ALERTS = 2_000;
/** Rows searched: 1,000,000 (issue 27's figure), fewer with BENCH_STORE_ROWS for a quick check. */
const ROWS = Number(process.env.BENCH_STORE_ROWS ?? 1_000_000);
if (!Number.isInteger(ROWS) || ROWS < 1000) throw new Error(`BENCH_STORE_ROWS: expected a whole number of rows, at least 1000, got ${JSON.stringify(process.env.BENCH_STORE_ROWS)}`);
const CHUNK = Math.min(100_000, ROWS);
/** Alerts stored per variant and round of the text index's write cost, and the rounds (variants interleaved). */
const INDEX_COST_ALERTS = 10_000;
const INDEX_COST_ROUNDS = 3;
const SEARCHES = 100;
const HOSTS = 50;
const RULES = 100;
const NOW_NS = BigInt(Date.now()) * 1_000_000n;
/** The loaded rows' event times: one every 0.6 s back over the last 7 days. */
const SPAN_NS = 7n * 86_400n * 1_000_000_000n;

function benchAlert(i: number): Alert {
  return {
    timeNs: NOW_NS - BigInt(i) * 1_000_000n,
    rule: `Rule ${i % RULES}`,
    priority: 'Warning',
    source: 'syscall',
    tags: ['filesystem', 'mitre_credential_access'],
    hostname: `node-${i % HOSTS}`,
    message: `Sensitive file opened for reading by non-trusted program (file=/etc/shadow pid=${i})`,
    outputFields: { 'fd.name': '/etc/shadow', 'proc.name': 'cat', 'user.name': 'root', 'proc.pid': i, 'container.id': `c${i % 5000}` },
  };
}

function countingSink(onLine: () => void): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const b of chunk) if (b === 10) onLine();
      cb();
    },
  });
}

async function storedOk(metrics: Metrics): Promise<number> {
  const m = /enginesecurity_enginesidekick_outputs_total\{destination="store",status="(ok|error)"\} (\d+)/g;
  let ok = 0;
  for (const x of (await metrics.exposition()).body.matchAll(m)) {
    if (x[1] === 'error' && x[2] !== '0') throw new Error(`the store failed ${x[2]} alert(s)`);
    if (x[1] === 'ok') ok += Number(x[2]);
  }
  return ok;
}

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 600_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A fan-out with stdout into a counting sink and, when `db` is given, the store writing into it. */
async function fanout(db: Db | undefined, onLine: () => void = () => {}) {
  const config = defaultConfig({});
  config.forwarder = { ...config.forwarder, enabled: false, queueSize: INSERT_ALERTS + 100, outputs: { store: { queuesize: INSERT_ALERTS + 100, maxage: '0', maxrows: 0 } } };
  const metrics = createMetrics({ processMetrics: false });
  const link = db ? createDatabaseLink() : undefined;
  if (db) link!.open(db);
  const f = await startFanout({ config: config.forwarder, metrics, log: (m) => progress(m), hostname: 'bench', stdout: countingSink(onLine), env: {}, alertDatabase: link });
  return {
    f,
    metrics,
    close: async () => {
      await f.close();
      await link?.release();
    },
  };
}

/** Alerts per second through the fan-out into the store: `n` alerts submitted at once, until every one is stored. */
async function insertRate(db: Db, n: number): Promise<number> {
  const s = await fanout(db);
  try {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) s.f.submit(benchAlert(i));
    await waitFor('the alerts stored', async () => (await storedOk(s.metrics)) >= n);
    return n / ((performance.now() - t0) / 1000);
  } finally {
    await s.close();
  }
}

/** The free-text index's variants: none, 003's trigrams of the output's words, 004's stored key column with its trigrams (the shipped one, last). */
const TEXT_INDEXES: Array<[string, string | undefined]> = [
  ['none', undefined],
  ['words', 'CREATE INDEX alerts_output ON alerts USING gin (output gin_trgm_ops)'],
  ['key', 'ALTER TABLE alerts ADD COLUMN output_key text GENERATED ALWAYS AS (alert_text_key(output)) STORED; CREATE INDEX alerts_output_key ON alerts USING gin (output_key gin_trgm_ops)'],
];

/** Makes `sql` (TEXT_INDEXES statements, or none) the table's only free-text index (004's column goes with its index). */
async function useTextIndex(db: Db, sql: string | undefined): Promise<void> {
  await db.exec('DROP INDEX IF EXISTS alerts_output; ALTER TABLE alerts DROP COLUMN IF EXISTS output_key');
  if (sql) await db.exec(sql);
}

/**
 * What the free-text index costs the writes: alerts/s into an emptied table without a text index,
 * with 003's and with 004's, in interleaved rounds (the medians, and 004's against the others as
 * ratios); leaves 004's index, as the migrations do.
 */
async function textIndexCost(db: Db, kind: string): Promise<void> {
  const rates = new Map<string, number[]>(TEXT_INDEXES.map(([name]) => [name, []]));
  for (let round = 0; round < INDEX_COST_ROUNDS; round++) {
    for (const [name, sql] of TEXT_INDEXES) {
      await db.exec('TRUNCATE alerts');
      await useTextIndex(db, sql);
      const rate = await insertRate(db, INDEX_COST_ALERTS);
      rates.get(name)!.push(rate);
      progress(`${kind} text index ${name}, round ${round + 1}: ${rate.toFixed(0)} alerts/s`);
    }
  }
  const med = (name: string) => median(rates.get(name)!);
  for (const [name] of TEXT_INDEXES) figure('store', `insert_alerts_per_s_text_index_${name}_${kind}`, med(name), 'alerts/s', { alerts: INDEX_COST_ALERTS, rounds: INDEX_COST_ROUNDS, all: rates.get(name)!.map((r) => Math.round(r)) });
  figure('store', `text_index_write_ratio_key_vs_none_${kind}`, med('key') / med('none'), 'ratio', { note: "004's index: alerts/s with it / without a free-text index" });
  figure('store', `text_index_write_ratio_key_vs_words_${kind}`, med('key') / med('words'), 'ratio', { note: "alerts/s with 004's index / with 003's" });
  await db.exec('TRUNCATE alerts');
}

/**
 * The free-text indexes' sizes over the loaded table: 004's (in place; its key column is part of
 * the table) and 003's, built for the comparison and dropped again, with the table's own size.
 */
async function textIndexSizes(db: Db, kind: string): Promise<void> {
  const mib = async (rel: string) => Number((await db.query<{ n: string }>('SELECT pg_relation_size($1::regclass) AS n', [rel]))[0]!.n) / 1048576;
  const t0 = performance.now();
  await db.exec(`SET maintenance_work_mem = '128MB'; ${TEXT_INDEXES[1]![1]}`);
  const wordsS = (performance.now() - t0) / 1000;
  const [column] = await db.query<{ n: string }>('SELECT sum(pg_column_size(output_key)) AS n FROM alerts');
  const sizes = { table: await mib('alerts'), key: await mib('alerts_output_key'), column: Number(column!.n) / 1048576, words: await mib('alerts_output') };
  await db.exec('DROP INDEX alerts_output');
  progress(`${kind}: table ${sizes.table.toFixed(0)} MiB (the key column ${sizes.column.toFixed(0)} MiB of it), text index 004 (key) ${sizes.key.toFixed(0)} MiB, 003 (words) ${sizes.words.toFixed(0)} MiB (built in ${wordsS.toFixed(1)} s)`);
  figure('store', `text_index_size_mib_key_${kind}`, sizes.key, 'MiB', { rows: ROWS, table_mib: Number(sizes.table.toFixed(1)), key_column_mib: Number(sizes.column.toFixed(1)) });
  figure('store', `text_index_size_mib_words_${kind}`, sizes.words, 'MiB', { rows: ROWS, build_s: Number(wordsS.toFixed(2)), note: "003's index, built once for the comparison" });
}

/** stdout's submit-to-line latency of LATENCY_ALERTS alerts, one per turn of the event loop: p50 and p99 in ms. */
async function stdoutLatency(db: Db | undefined): Promise<{ p50: number; p99: number }> {
  const pending: number[] = [];
  const latencies: number[] = [];
  const s = await fanout(db, () => latencies.push(performance.now() - (pending.shift() ?? Number.NaN)));
  for (let i = 0; i < LATENCY_ALERTS; i++) {
    pending.push(performance.now());
    s.f.submit(benchAlert(i));
    await new Promise((r) => setImmediate(r));
  }
  await waitFor('every stdout line', async () => latencies.length >= LATENCY_ALERTS);
  if (db) await waitFor('every alert stored', async () => (await storedOk(s.metrics)) >= LATENCY_ALERTS);
  await s.close();
  latencies.sort((a, b) => a - b);
  return { p50: latencies[LATENCY_ALERTS / 2]!, p99: latencies[Math.floor(LATENCY_ALERTS * 0.99)]! };
}

/** The columns of ROWS alerts, made by the database from generate_series, CHUNK rows a statement. */
const LOAD_SQL = `
INSERT INTO alerts (time_ns, priority, rule, source, hostname, tags, output, container_id, container_name, container_image, k8s_pod, k8s_ns, json)
SELECT t, p, r, s, h, tg, o, cid, cname, cimg, pod, ns,
  json_build_object('hostname', h, 'output', o, 'output_fields', json_build_object('evt.time', t, 'fd.name', f, 'proc.pid', i, 'container.id', cid, 'k8s.pod.name', pod, 'k8s.ns.name', ns),
    'priority', (ARRAY['Emergency','Alert','Critical','Error','Warning','Notice','Informational','Debug'])[p + 1], 'rule', r, 'source', s, 'tags', tg, 'time', to_char(to_timestamp(t / 1e9) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"000Z"'))::text
FROM (
  SELECT i, t, p, r, s, h, tg, f,
    format('Sensitive file opened for reading by non-trusted program (file=%s user=u%s pid=%s)', f, i % 1000, i) AS o,
    cid, 'ctr-' || (i % 5000) AS cname, 'registry.example/app-' || (i % 40) || ':1.0' AS cimg, 'pod-' || (i % 2000) AS pod, 'ns-' || (i % 30) AS ns
  FROM (
    SELECT i, $1::bigint - (i::bigint * $2::bigint) AS t, i % 8 AS p, 'Rule ' || (i % ${RULES}) AS r,
      CASE WHEN i % 10 = 0 THEN 'k8s_audit' ELSE 'syscall' END AS s, 'node-' || (i % ${HOSTS}) AS h,
      ARRAY['t' || (i % 20), 'mitre_' || (i % 7)] AS tg, '/etc/file-' || (i % 10) AS f, 'c' || lpad((i % 5000)::text, 11, '0') AS cid
    FROM generate_series($3::int, $4::int) AS i
  ) AS base
) AS x`;

/**
 * Empties the table and loads ROWS alerts; returns the seconds it took. As PostgreSQL's "Populating
 * a Database" advises, the filters' indexes are dropped for the load and built again after it (a
 * GIN index, trigram or array, grows slowly row by row: 73 s per 100,000 rows with them in place).
 */
async function load(db: Db): Promise<number> {
  await db.query('TRUNCATE alerts');
  const t0 = performance.now();
  const indexes = await db.query<{ indexname: string; indexdef: string }>("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'alerts' AND indexname <> 'alerts_pkey'");
  for (const i of indexes) await db.exec(`DROP INDEX ${i.indexname}`);
  for (let from = 1; from <= ROWS; from += CHUNK) {
    await db.query(LOAD_SQL, [NOW_NS.toString(), (SPAN_NS / BigInt(ROWS)).toString(), from, Math.min(from + CHUNK - 1, ROWS)]);
    progress(`${db.kind}: ${Math.min(from + CHUNK - 1, ROWS)} rows loaded (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  // one statement string each: the setting holds on the connection that builds (a pool has several)
  for (const i of indexes) await db.exec(`SET maintenance_work_mem = '128MB'; ${i.indexdef}`);
  progress(`${db.kind}: ${indexes.length} indexes built again (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  // what autovacuum does after a bulk insert on a server (PGlite runs none): statistics and the visibility map
  await db.exec('VACUUM ANALYZE alerts');
  return (performance.now() - t0) / 1000;
}

/** One-filter searches, every filter of the query API: a name and the query of its i-th request. */
const FILTERS: Array<[string, (i: number) => string]> = [
  ['hostname', (i) => `hostname=node-${i % HOSTS}`],
  ['rule', (i) => `rule=${encodeURIComponent(`Rule ${i % RULES}`)}`],
  ['source', (i) => `source=${i % 2 ? 'syscall' : 'k8s_audit'}`],
  ['priority', (i) => `priority=${['critical', 'error', 'warning', 'notice'][i % 4]}`],
  ['min_priority', () => 'min_priority=critical'],
  ['tags', (i) => `tags=t${i % 20}`],
  ['container_id', (i) => `container_id=c${String((i * 37) % 5000).padStart(11, '0')}`],
  ['container_name', (i) => `container_name=ctr-${(i * 37) % 5000}`],
  ['container_image', (i) => `container_image=${encodeURIComponent(`registry.example/app-${i % 40}:1.0`)}`],
  ['pod', (i) => `pod=pod-${(i * 13) % 2000}`],
  ['namespace', (i) => `namespace=ns-${i % 30}`],
  ['since', (i) => `since=${1 + (i % 6)}h`],
  ['until', (i) => `until=${1 + (i % 6)}d`],
  // the first, `pid=0)`, is in no row, though its word 0 is in a tenth of them (`/etc/file-0`):
  // 003's index, of words alone, handed that tenth over to be rechecked (1 s over 1,000,000 rows)
  ['text_rare', (i) => `filter=pid%3D${(i * 9973) % ROWS}%29`],
  ['text_common', (i) => `filter=file-${i % 10}`],
];

/** The p99 targets of issue 27, ms. */
const P99_TARGET_MS: Record<string, number> = { postgres: 100, pglite: 300 };

type PlanNode = { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; Plans?: PlanNode[] };

/** The scans of a plan: `Index Scan alerts_hostname`, `Bitmap Index Scan alerts_tags`, `Seq Scan alerts`. */
function scansOf(node: PlanNode): string[] {
  const here = node['Index Name'] ? [`${node['Node Type']} ${node['Index Name']}`] : node['Relation Name'] ? [`${node['Node Type']} ${node['Relation Name']}`] : [];
  return [...here, ...(node.Plans ?? []).flatMap(scansOf)];
}

/**
 * The scans the planner chooses for the page and the count of a search (the statements the query
 * API runs, from searchStatements; the count's in its own transaction, after textWindow() chose its
 * text's index condition), and that condition: the needle's whole key or three characters of it.
 */
async function plansOf(db: Db, query: string): Promise<{ page: string[]; count: string[]; textIndex?: string }> {
  const q = alertQueryOf(Object.fromEntries(new URLSearchParams(query)), ['page', 'limit']);
  if (isApiError(q)) throw new Error(`${query}: ${JSON.stringify(q.body)}`);
  const page = { limit: q.limit, offset: (q.page - 1) * q.limit };
  const sql = searchStatements(q.filter, page, { kind: db.kind });
  const scans = (row: { 'QUERY PLAN': unknown } | undefined) => {
    const plan = row!['QUERY PLAN'];
    return scansOf((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan as PlanNode);
  };
  const [pageRow] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql.page}`, sql.params);
  return db.transaction(async (tx) => {
    const text = q.filter.text;
    const window = text ? await textWindow(tx, text) : undefined;
    const count = searchStatements(q.filter, page, { kind: db.kind, textWindow: window });
    await tx.exec(count.countSettings);
    const [countRow] = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${count.count}`, count.params);
    const [key] = text ? await tx.query<{ k: string }>(`SELECT ${window === undefined ? 'alert_text_key($1)' : 'substr(alert_text_key($1), $2::int, 3)'} AS k`, window === undefined ? [text] : [text, window]) : [];
    return { page: scans(pageRow), count: scans(countRow), textIndex: key && `LIKE %${key.k}%` };
  });
}

async function searches(db: Db, apiUrl: string, token: string, kind: string): Promise<void> {
  const pool = new Pool(apiUrl, { connections: 1 });
  let worst = { p99: 0, filter: '' };
  try {
    for (const [name, query] of FILTERS) {
      const plans = await plansOf(db, query(0));
      const unindexed = [...plans.page, ...plans.count].filter((s) => s.startsWith('Seq Scan'));
      progress(`${kind} search ${name}: page ${plans.page.join(' + ')}; count ${plans.count.join(' + ')}${plans.textIndex ? ` (text: ${plans.textIndex})` : ''}${unindexed.length > 0 ? ' (NO INDEX)' : ''}`);
      const ms: number[] = [];
      let all = 0;
      for (let i = -5; i < SEARCHES; i++) {
        const t0 = performance.now();
        const res = await pool.request({ method: 'GET', path: `/api/v1/events/search?${query(Math.abs(i))}`, headers: { 'private-token': token } });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`search ${query(i)}: ${res.statusCode} ${text}`);
        if (i < 0) continue; // warm-up requests
        ms.push(performance.now() - t0);
        all += (JSON.parse(text) as { statistics: { all: number } }).statistics.all;
      }
      ms.sort((a, b) => a - b);
      const p99 = ms[Math.floor(SEARCHES * 0.99)]!;
      if (p99 > worst.p99) worst = { p99, filter: name };
      progress(`${kind} search ${name}: p50 ${ms[SEARCHES / 2]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ${Math.round(all / SEARCHES)} counted on average (capped at ${SEARCH_COUNT_CAP})`);
      figure('store', `search_${name}_p50_ms_${kind}`, ms[SEARCHES / 2]!, 'ms', {
        rows: ROWS,
        counted_avg: Math.round(all / SEARCHES),
        requests: SEARCHES,
        plan_page: plans.page,
        plan_count: plans.count,
        ...(plans.textIndex ? { count_text_index: plans.textIndex } : {}),
      });
      figure('store', `search_${name}_p99_ms_${kind}`, p99, 'ms', { rows: ROWS, target_ms: P99_TARGET_MS[kind] });
    }
  } finally {
    await pool.close();
  }
  figure('store', `search_worst_p99_ms_${kind}`, worst.p99, 'ms', { filter: worst.filter, target_ms: P99_TARGET_MS[kind], met: worst.p99 < (P99_TARGET_MS[kind] ?? 0) });
}

async function bench(storage: Storage): Promise<void> {
  const api = await startTestApi(storage);
  const kind = storage.name;
  try {
    const user = await createUser(api.db, 'bench');
    const token = generateToken();
    await addToken(api.db, user.id, token, { name: 'bench', scope: 'read_api' });

    figure('store', `insert_alerts_per_s_${kind}`, await insertRate(api.db, INSERT_ALERTS), 'alerts/s', { alerts: INSERT_ALERTS, batchsize: 500 });
    await textIndexCost(api.db, kind);

    for (const [label, db] of [
      ['without_store', undefined],
      ['with_store', api.db],
    ] as const) {
      const r = await stdoutLatency(db);
      figure('store', `stdout_latency_p50_ms_${label}_${kind}`, r.p50, 'ms', { alerts: LATENCY_ALERTS });
      figure('store', `stdout_latency_p99_ms_${label}_${kind}`, r.p99, 'ms', { alerts: LATENCY_ALERTS });
    }

    const seconds = await load(api.db);
    figure('store', `bulk_load_s_${kind}`, seconds, 's', { rows: ROWS, how: 'indexes dropped, INSERT ... SELECT FROM generate_series, 100,000 rows a statement, indexes built again, VACUUM ANALYZE' });
    await searches(api.db, api.url, token, kind);
    await textIndexSizes(api.db, kind);
  } finally {
    await api.close();
    await storage.shutdown();
  }
}

/** VmRSS and VmHWM of a process, in MiB. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Where a start's rule module came from, as `rae run` logs it (host/resources/controller.ts): the state directory's module cache, the build's shipped one, or a compile. */
function moduleSource(stderr: string): string {
  return /compiled module from the module cache/.test(stderr) ? 'module cache' : /compiled module shipped with the build/.test(stderr) ? 'shipped' : 'compiled';
}

/**
 * A real `rae run` with the built-in rules and its API on PGlite, the store `on` or off, started
 * in `stateDir` and stopped again; with `measure`, its RSS once ready and after INSERT_ALERTS
 * posted alerts.
 */
async function engineRss(stateDir: string, on: boolean, measure = true): Promise<void> {
  const cfg = join(stateDir, '..', 'engine.yaml');
  writeFileSync(cfg, `forwarder:\n  port: 0\n  outputs:\n    store:\n      enabled: ${on}\napi:\n  port: 0\nwebhook:\n  port: 0\nsyscall:\n  optional: true\n`);
  const child = spawn(process.execPath, ['bin/rae.js', 'run', '--config', cfg, '--state-dir', stateDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let lines = 0;
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.stdout.on('data', (c: Buffer) => {
    for (const b of c) if (b === 10) lines++;
  });
  const label = measure ? (on ? 'store_on' : 'store_off') : 'warm-up';
  try {
    await waitFor(`rae run ready (${label})`, async () => {
      if (child.exitCode !== null) throw new Error(`rae run exited: ${err}`);
      return /run: ready/.test(err);
    });
    const module = moduleSource(err);
    if (!measure) return progress(`rae run ${label}: ready (rule module: ${module})`);
    const url = /run: forwarder listening on (\S+)/.exec(err)![1]!;
    await new Promise((r) => setTimeout(r, 5000)); // the start's garbage collected
    const ready = memoryOf(child.pid!);
    const pool = new Pool(url, { connections: 16 });
    let next = 0;
    const post = async () => {
      while (next < INSERT_ALERTS) {
        const i = next++;
        const a = benchAlert(i);
        const body = JSON.stringify({ rule: a.rule, priority: a.priority, source: a.source, hostname: a.hostname, tags: a.tags, time: new Date().toISOString(), output: a.message, output_fields: a.outputFields });
        const res = await pool.request({ method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body });
        await res.body.dump();
      }
    };
    await Promise.all(Array.from({ length: 16 }, post));
    await pool.close();
    const metricsText = async () => (await (await fetch(`${url}/metrics`)).text()) as string;
    await waitFor('the posted alerts delivered', async () => {
      const m = /enginesecurity_enginesidekick_outputs_total\{destination="(stdout|store)",status="ok"\} (\d+)/g;
      const counts = new Map<string, number>();
      for (const x of (await metricsText()).matchAll(m)) counts.set(x[1]!, Number(x[2]));
      return (counts.get('stdout') ?? 0) >= INSERT_ALERTS && (!on || (counts.get('store') ?? 0) >= INSERT_ALERTS);
    });
    const after = memoryOf(child.pid!);
    progress(`rae run ${label}: RSS ${ready.rss.toFixed(0)} MiB ready, ${after.rss.toFixed(0)} MiB after ${INSERT_ALERTS} alerts (peak ${after.hwm.toFixed(0)} MiB); ${lines} stdout lines; rule module: ${module}`);
    figure('store', `engine_rss_ready_mib_${label}`, ready.rss, 'MiB', { database: 'pglite', rule_module: module });
    figure('store', `engine_rss_after_alerts_mib_${label}`, after.rss, 'MiB', { alerts: INSERT_ALERTS, database: 'pglite' });
    figure('store', `engine_rss_peak_mib_${label}`, after.hwm, 'MiB');
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

export async function run(): Promise<void> {
  // BENCH_STORE_PARTS=pglite,postgres,engine (the default: all three) runs some of them
  const parts = (process.env.BENCH_STORE_PARTS ?? 'pglite,postgres,engine').split(',');
  if (parts.includes('pglite')) await bench(pgliteStorage());
  if (parts.includes('postgres')) {
    const pg = postgresStorage();
    if ('unavailable' in pg) progress(`postgres: unavailable (${pg.unavailable}); no postgres figures`);
    else await bench(pg);
  }
  if (!parts.includes('engine')) return;
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-store-'));
  try {
    // A first start compiles the rules (unless the build ships their module) and creates the
    // database: a compile leaves the process hundreds of MiB larger (the store off measured on a
    // compiling first start: 629 MiB ready, the store on, next: 317). So a start that is not
    // measured does both, and the two measured starts load the module alike, from the module
    // cache (their figures say where from).
    await engineRss(join(dir, 'state'), false, false);
    await engineRss(join(dir, 'state'), false);
    await engineRss(join(dir, 'state'), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
