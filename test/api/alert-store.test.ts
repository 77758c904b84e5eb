// The alert store and its query API, on real PGlite and on a real PostgreSQL server: a real
// forwarder (POST / and POST /test over HTTP) feeds the fan-out, whose store destination writes
// into the real API's database through the link `rae run` uses; the API's /api/v1/events routes
// then answer every filter, count and group with exact numbers (a search's count up to its cap),
// one alert by id, a live stream of new alerts, and a 400 naming the problem for bad input.
// Retention by age and row count; the database unavailable (PGlite still opening, PostgreSQL
// stopped): stdout gets every alert, the store counts each alert it did not write, and writing
// resumes; while PostgreSQL is stopped the query API (on the API's port and the console's)
// answers 503 with Retry-After.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { until } from '../helpers/until.js';
import { addToken, createUser, generateToken, SEARCH_COUNT_CAP } from '../../host/api/db/index.js';
import { startConsole } from '../../host/console/index.js';
import { createDatabaseLink } from '../../host/output/destinations/store-link.js';
import { OUTPUT_DROP_RULE } from '../../host/output/fanout.js';
import { rfc3339Nano } from '../../host/output/time.js';
import { metricLines, startTestForwarder, type TestForwarder } from '../../support/forwarder.js';
import { startTestApi, type TestApi } from '../../support/api/api.js';
import { pgliteStorage, postgresStorage, type Storage } from '../../support/api/storage.js';

const HOUR_NS = 3_600_000_000_000n;
/** Ten minutes into the hour before the current one: the corpus's first six alerts share one hour bucket. */
const T0 = ((BigInt(Date.now()) * 1_000_000n) / HOUR_NS) * HOUR_NS - HOUR_NS + 600_000_000_000n;
const OLD_NS = 1_577_836_800_123_456_789n; // 2020-01-01T00:00:00.123456789Z

interface Posted {
  rule: string;
  priority: string;
  source: string;
  hostname: string;
  tags: string[];
  output: string;
  timeNs: bigint;
  fields: Record<string, unknown>;
}

const at = (s: number) => T0 + BigInt(s) * 1_000_000_000n;

/** The corpus: seven alerts posted to POST /, then POST /test (Debug, source internal, now). */
const CORPUS: Posted[] = [
  {
    rule: 'Read sensitive file untrusted',
    priority: 'Warning',
    source: 'syscall',
    hostname: 'node-a',
    tags: ['filesystem', 'mitre_credential_access'],
    output: 'Sensitive file opened for reading (file=/etc/shadow user=root)',
    timeNs: at(1),
    fields: { 'fd.name': '/etc/shadow', 'container.id': 'c1', 'container.name': 'web', 'container.image': 'nginx:1.25', 'k8s.pod.name': 'web-0', 'k8s.ns.name': 'shop' },
  },
  {
    rule: 'Read sensitive file untrusted',
    priority: 'Warning',
    source: 'syscall',
    hostname: 'node-b',
    tags: ['filesystem'],
    output: 'Sensitive file opened for reading (file=/etc/sudoers user=root)',
    timeNs: at(2),
    fields: { 'fd.name': '/etc/sudoers', 'container.id': 'host' },
  },
  {
    rule: 'Terminal shell in container',
    priority: 'Notice',
    source: 'syscall',
    hostname: 'node-a',
    tags: ['container', 'shell'],
    output: 'A shell was spawned in a container (container=db)',
    timeNs: at(3),
    fields: { 'container.id': 'c2', 'container.name': 'db', 'container.image.repository': 'postgres', 'k8s.pod.name': 'db-0', 'k8s.ns.name': 'data' },
  },
  {
    rule: 'K8s Secret Get',
    priority: 'Critical',
    source: 'k8s_audit',
    hostname: 'node-a',
    tags: ['k8s'],
    output: 'Secret read (user=admin secret=token)',
    timeNs: at(4),
    fields: { 'ka.user.name': 'admin', 'ka.target.namespace': 'kube-system' },
  },
  {
    rule: 'Drop and execute new binary in container',
    priority: 'Critical',
    source: 'syscall',
    hostname: 'node-b',
    tags: ['container', 'mitre_persistence'],
    output: 'Executing binary not part of base image (proc=/tmp/x)',
    timeNs: at(5),
    fields: { 'container.id': 'c1', 'proc.exepath': '/tmp/x' },
  },
  { rule: 'Custom rule', priority: 'Error', source: 'syscall', hostname: 'node-c', tags: [], output: 'Upload 100%_done (file=/tmp/y)', timeNs: at(6), fields: { 'fd.name': '/tmp/y' } },
  { rule: 'Old rule', priority: 'Informational', source: 'syscall', hostname: 'node-a', tags: ['old'], output: 'An old alert (n=1)', timeNs: OLD_NS, fields: { n: 1 } },
];

function falcoJson(p: Posted): string {
  const fields = JSON.stringify(p.fields).slice(0, -1);
  return `{"output":"00:00:00.000000000: ${p.priority} ${p.output}","priority":"${p.priority}","rule":"${p.rule}","source":"${p.source}","hostname":"${p.hostname}","tags":${JSON.stringify(p.tags)},"time":"${rfc3339Nano(p.timeNs)}","output_fields":${fields},"evt.time":${p.timeNs}}}`;
}

async function post(fwd: TestForwarder, body: string, path = '/'): Promise<void> {
  const res = await fetch(`${fwd.fwd.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.is(res.status, 200, `POST ${path}: ${await res.text()}`);
}

/** A metric sample of the store destination (0 when absent). */
async function storeMetric(fwd: TestForwarder, name: string, label = ''): Promise<number> {
  const line = metricLines((await fwd.metrics.exposition()).body, name).find((l) => l.includes('destination="store"') && l.includes(label));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The API and the token the queries use. */
interface World {
  api: TestApi;
  token: string;
}

async function startWorld(storage: Storage): Promise<World> {
  const api = await startTestApi(storage);
  const user = await createUser(api.db, 'viewer');
  const token = generateToken();
  await addToken(api.db, user.id, token, { name: 'viewer', scope: 'read_api' });
  return { api, token };
}

/** The answers' shapes, loosely: the search's results, the counts' results, one alert's keys. */
type Body = { statistics: Record<string, number | boolean>; results: Array<{ id: number; rule: string }> & Record<string, number>; time: string; tags: string[] };

async function get(w: World, path: string, token: string | null = w.token): Promise<{ status: number; text: string; body: Body }> {
  const res = await fetch(`${w.api.url}${path}`, { headers: token ? { 'private-token': token } : {} });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, text, body: body as Body };
}

const count = async (w: World, query = ''): Promise<number> => (await get(w, `/api/v1/events/count${query}`)).body.statistics.all as number;
const rulesOf = async (w: World, query: string): Promise<string[]> => (await get(w, `/api/v1/events/search${query}`)).body.results.map((r: { rule: string }) => r.rule);

/** Storing, filters, counts and bad input, on `storage`. */
function suite(storage: Storage): void {
  const name = storage.name;

  test(`${name}: alerts posted to the forwarder are stored; every filter, count and group answers exactly`, async () => {
    const w = await startWorld(storage);
    const link = createDatabaseLink();
    link.open(w.api.db);
    const fwd = await startTestForwarder({ stdout: true, outputs: { store: {} } }, 'node-a', {}, { alertDatabase: link });
    try {
      for (const p of CORPUS) await post(fwd, falcoJson(p));
      await post(fwd, '', '/test');
      await fwd.waitForLines(8);
      await until(
        () => count(w),
        (n) => n === 8,
        '8 stored alerts',
        30_000,
      );
      assert.is(await storeMetric(fwd, 'enginesecurity_enginesidekick_outputs_total', 'status="ok"'), 8);

      const cases: Array<[string, string[]]> = [
        ['?source=k8s_audit', ['K8s Secret Get']],
        ['?priority=Warning', ['Read sensitive file untrusted', 'Read sensitive file untrusted']],
        ['?priority=warning,notice', ['Terminal shell in container', 'Read sensitive file untrusted', 'Read sensitive file untrusted']],
        ['?min_priority=error', ['Custom rule', 'Drop and execute new binary in container', 'K8s Secret Get']],
        ['?rule=Terminal%20shell%20in%20container,Custom%20rule', ['Custom rule', 'Terminal shell in container']],
        ['?hostname=node-b', ['Drop and execute new binary in container', 'Read sensitive file untrusted']],
        ['?tags=shell', ['Terminal shell in container']],
        ['?tags=k8s,mitre_persistence', ['Drop and execute new binary in container', 'K8s Secret Get']],
        ['?container_id=c1', ['Drop and execute new binary in container', 'Read sensitive file untrusted']],
        ['?container_name=db', ['Terminal shell in container']],
        ['?container_image=nginx:1.25', ['Read sensitive file untrusted']],
        ['?container_image=postgres', ['Terminal shell in container']],
        ['?pod=web-0', ['Read sensitive file untrusted']],
        ['?namespace=kube-system,shop', ['K8s Secret Get', 'Read sensitive file untrusted']],
        ['?filter=/ETC/SHADOW', ['Read sensitive file untrusted']],
        ['?filter=%25_', ['Custom rule']], // % and _ are literal, not patterns
        ['?filter=spawned&hostname=node-a&source=syscall', ['Terminal shell in container']],
        ['?since=2019-12-31T00:00:00Z&until=2020-06-01T00:00:00Z', ['Old rule']],
        [`?since=${rfc3339Nano(at(5))}&until=${rfc3339Nano(at(6))}`, ['Drop and execute new binary in container']],
        [
          '?since=2h&min_priority=debug&priority=null',
          ['Test rule', 'Custom rule', 'Drop and execute new binary in container', 'K8s Secret Get', 'Terminal shell in container', 'Read sensitive file untrusted', 'Read sensitive file untrusted'],
        ],
      ];
      for (const [query, rules] of cases) {
        assert.equal(await rulesOf(w, query), rules, query);
        assert.is(await count(w, query), rules.length, `count${query}`);
      }

      const page1 = await get(w, '/api/v1/events/search?limit=3');
      assert.equal(page1.body.statistics, { returned: 3, all: 8, all_capped: false });
      assert.equal(
        page1.body.results.map((r: { rule: string }) => r.rule),
        ['Test rule', 'Custom rule', 'Drop and execute new binary in container'],
      );
      const page3 = await get(w, '/api/v1/events/search?limit=3&page=3');
      assert.equal(page3.body.statistics, { returned: 2, all: 8, all_capped: false });
      assert.equal(
        page3.body.results.map((r: { rule: string }) => r.rule),
        ['Read sensitive file untrusted', 'Old rule'],
      );
      assert.equal((await get(w, '/api/v1/events/search?limit=3&page=4')).body.statistics, { returned: 0, all: 8, all_capped: false });

      // one alert by id: its Falco JSON as stored, evt.time to the nanosecond
      const old = (await get(w, '/api/v1/events/search?rule=Old%20rule')).body.results[0];
      const one = await get(w, `/api/v1/events/${old.id}`);
      assert.is(one.status, 200);
      assert.ok(one.text.startsWith(`{"id":${old.id},"hostname":"node-a","output":`), one.text);
      assert.ok(one.text.includes(`"evt.time":${OLD_NS}`), one.text);
      assert.is(one.body.time, '2020-01-01T00:00:00.123456789Z');
      assert.equal(one.body.tags, ['old']);
      assert.is((await get(w, '/api/v1/events/999999999')).status, 404);

      const by = async (group: string, query = '') => (await get(w, `/api/v1/events/count/${group}${query}`)).body;
      assert.equal(await by('priority'), { results: { Warning: 2, Critical: 2, Debug: 1, Error: 1, Informational: 1, Notice: 1 }, statistics: { all: 8, distincts: 6 } });
      assert.equal((await by('rule', '?source=syscall')).results, { 'Read sensitive file untrusted': 2, 'Custom rule': 1, 'Drop and execute new binary in container': 1, 'Old rule': 1, 'Terminal shell in container': 1 });
      assert.equal((await by('source')).results, { syscall: 6, internal: 1, k8s_audit: 1 });
      assert.equal((await by('hostname')).results, { 'node-a': 5, 'node-b': 2, 'node-c': 1 });
      assert.equal((await by('tags', '?hostname=node-a')).results, { container: 1, example: 1, filesystem: 1, k8s: 1, mitre_credential_access: 1, old: 1, shell: 1, test: 1 });
      const hour = T0 - (T0 % HOUR_NS);
      assert.equal(await by('time', `?interval=1h&since=${rfc3339Nano(T0)}&until=${rfc3339Nano(at(60))}`), { results: { [rfc3339Nano(hour)]: 6 }, statistics: { all: 6, distincts: 1 } });
      assert.equal((await by('time', '?interval=1d&until=2021-01-01T00:00:00Z')).results, { '2020-01-01T00:00:00.000000000Z': 1 });
    } finally {
      await fwd.fwd.close();
      await link.release();
      await w.api.close();
    }
  });

  test(`${name}: a search counts its matches exactly up to SEARCH_COUNT_CAP past its page's start, then says the count is capped`, async () => {
    const w = await startWorld(storage);
    try {
      const rows = SEARCH_COUNT_CAP + 50;
      // the rows straight into the table (the store's path is the test above): 30 of node-few, the rest of node-many
      await w.api.db.query(
        `INSERT INTO alerts (time_ns, priority, rule, source, hostname, tags, output, json)
         SELECT $1::bigint + i, 4, 'Many', 'syscall', CASE WHEN i <= 30 THEN 'node-few' ELSE 'node-many' END, ARRAY['many'], 'many ' || i, '{"rule":"Many"}'
         FROM generate_series(1, $2::int) AS i`,
        [T0.toString(), rows],
      );
      const stats = async (query: string) => (await get(w, `/api/v1/events/search${query}`)).body.statistics;
      const cases: Array<[string, Record<string, number | boolean>]> = [
        ['?rule=Many&limit=100', { returned: 100, all: SEARCH_COUNT_CAP, all_capped: true }],
        ['?hostname=node-many&limit=1000', { returned: 1000, all: SEARCH_COUNT_CAP, all_capped: true }],
        ['?hostname=node-few&limit=10', { returned: 10, all: 30, all_capped: false }],
        // from page 2 the cap is 100 + SEARCH_COUNT_CAP: every row counted
        ['?rule=Many&limit=100&page=2', { returned: 100, all: rows, all_capped: false }],
        // the last, partial page: counted from its rows
        [`?rule=Many&limit=1000&page=${Math.ceil(rows / 1000)}`, { returned: rows % 1000, all: rows, all_capped: false }],
      ];
      for (const [query, want] of cases) assert.equal(await stats(query), want, query);
      // /count is the count asked for: exact
      assert.is(await count(w, '?rule=Many'), rows);
    } finally {
      await w.api.close();
    }
  });

  test(`${name}: bad input is a 400 naming the problem; no token is a 401`, async () => {
    const w = await startWorld(storage);
    try {
      const bad: Array<[string, string]> = [
        ['/api/v1/events/search?priority=bogus', 'priority "bogus" is not a priority (Emergency, Alert, Critical, Error, Warning, Notice, Informational, Debug)'],
        ['/api/v1/events/search?limit=0', 'limit "0" must be a whole number from 1 to 1000'],
        ['/api/v1/events/search?limit=1001&page=x', 'limit "1001" must be a whole number from 1 to 1000, page "x" must be a whole number from 1 to 1000000'],
        ['/api/v1/events/search?since=yesterday', 'since "yesterday" is neither an RFC 3339 time (2026-01-02T03:04:05Z) nor a duration before now (30s, 5min, 24h, 7d, 1M, 2y)'],
        ['/api/v1/events/search?hostnme=a', 'hostnme is not a parameter of this route'],
        ['/api/v1/events/search?rule=a&rule=b', 'rule is given more than once (list values are comma-separated: rule=a,b)'],
        ['/api/v1/events/count?page=2', 'page is not a parameter of this route'],
        ['/api/v1/events/count/user', 'cannot count by "user": expected one of priority, rule, source, tags, hostname, time'],
        ['/api/v1/events/count/time?interval=0', 'interval "0" is not a duration above 0 (1m, 1h, 1d)'],
        ['/api/v1/events/abc', 'id "abc" must be an alert id (a whole number)'],
      ];
      for (const [path, message] of bad) {
        const r = await get(w, path);
        assert.equal([r.status, r.body], [400, { error: message }], path);
      }
      for (const path of ['/api/v1/events/search', '/api/v1/events/count', '/api/v1/events/count/rule', '/api/v1/events/1', '/api/v1/events/stream']) {
        assert.equal(await get(w, path, null), { status: 401, text: '{"message":"401 Unauthorized"}', body: { message: '401 Unauthorized' } }, path);
        assert.is((await get(w, path, 'glpat-thisIsNotAValidToken0')).status, 401, path);
      }
    } finally {
      await w.api.close();
    }
  });
}

/** The live stream and retention, on `storage`. */
function liveSuite(storage: Storage): void {
  const name = storage.name;

  test(`${name}: the live stream sends each new alert matching its filter, once, with its id`, async () => {
    const w = await startWorld(storage);
    const link = createDatabaseLink();
    link.open(w.api.db);
    const fwd = await startTestForwarder({ stdout: false, outputs: { store: {} } }, 'node-a', {}, { alertDatabase: link });
    const abort = new AbortController();
    try {
      await post(fwd, falcoJson(CORPUS[3]!)); // stored before the stream opens: not sent
      await until(
        () => count(w),
        (n) => n === 1,
        'the first alert stored',
        30_000,
      );
      const res = await fetch(`${w.api.url}/api/v1/events/stream?min_priority=critical`, { headers: { 'private-token': w.token }, signal: abort.signal });
      assert.is(res.status, 200);
      assert.is(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      const reader = res.body!.getReader();
      let text = '';
      const read = async () => {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
      };
      await read(); // the opening comment: the stream is set up, its starting id taken
      await post(fwd, falcoJson(CORPUS[0]!)); // Warning: filtered out
      await post(fwd, falcoJson(CORPUS[4]!)); // Critical
      await until(
        () => count(w),
        (n) => n === 3,
        'three alerts stored',
        30_000,
      );
      const deadline = Date.now() + 30_000;
      while (!/event: alert\ndata: [^\n]*\n\n/.test(text) && Date.now() < deadline) await read();
      const events = text.split('\n\n').filter((e) => e.includes('event: alert'));
      assert.is(events.length, 1, text);
      const [idLine, eventLine, dataLine] = events[0]!.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length));
      assert.is(eventLine, 'event: alert');
      assert.is(idLine, `id: ${data.id}`);
      assert.is(data.rule, 'Drop and execute new binary in container');
    } finally {
      abort.abort();
      await fwd.fwd.close();
      await link.release();
      await w.api.close();
    }
  });

  test(`${name}: retention keeps the newest maxrows rows younger than maxage`, async () => {
    const w = await startWorld(storage);
    const link = createDatabaseLink();
    link.open(w.api.db);
    const fwd = await startTestForwarder({ stdout: false, outputs: { store: { maxage: '365d', maxrows: 3, retentionseconds: 0 } } }, 'node-a', {}, { alertDatabase: link });
    try {
      await post(fwd, falcoJson(CORPUS[6]!)); // 2020: older than maxage
      for (let i = 1; i <= 5; i++) await post(fwd, falcoJson({ ...CORPUS[0]!, rule: `r${i}`, timeNs: at(i) }));
      await until(
        () => storeMetric(fwd, 'enginesecurity_enginesidekick_outputs_total', 'status="ok"'),
        (n) => n === 6,
        '6 alerts stored',
        30_000,
      );
      await until(
        () => count(w),
        (n) => n === 3,
        'retention down to 3 rows',
        30_000,
      );
      assert.equal(await rulesOf(w, ''), ['r5', 'r4', 'r3']);
    } finally {
      await fwd.fwd.close();
      await link.release();
      await w.api.close();
    }
  });
}

test('pglite: while the database is not open, stdout gets every alert and the store counts what it drops; once open, it writes', async () => {
  const storage = PGLITE;
  const w = await startWorld(storage);
  const link = createDatabaseLink(); // the API's database still opening, as at a first start
  const fwd = await startTestForwarder({ stdout: true, outputs: { store: { queuesize: 3, retries: 0 } } }, 'node-a', {}, { alertDatabase: link });
  try {
    for (let i = 0; i < 10; i++) await post(fwd, falcoJson({ ...CORPUS[0]!, rule: `r${i}` }));
    const dropped = await storeMetric(fwd, 'enginesecurity_enginesidekick_output_dropped_total');
    // stdout: the ten alerts and the report of the store's drops
    const lines = (await fwd.waitForLines(11)).map((l) => JSON.parse(l) as { rule: string; output: string });
    assert.equal(
      lines.filter((l) => l.rule !== OUTPUT_DROP_RULE).map((l) => l.rule),
      Array.from({ length: 10 }, (_, i) => `r${i}`),
    );
    assert.match(lines.find((l) => l.rule === OUTPUT_DROP_RULE)?.output ?? '', /: \d+ alert\(s\) dropped since the last report because an output's queue was full \(store=\d+\)$/);
    assert.ok(dropped >= 6, `dropped ${dropped}`); // a queue of 3, and at most one batch waiting for the database
    link.open(w.api.db);
    await until(
      () => count(w),
      (n) => n === 10 - dropped,
      'the queued alerts stored',
      30_000,
    );
    await post(fwd, falcoJson({ ...CORPUS[0]!, rule: 'after' }));
    await until(
      () => count(w),
      (n) => n === 11 - dropped,
      'a new alert stored',
      30_000,
    );
    assert.is(await storeMetric(fwd, 'enginesecurity_enginesidekick_outputs_total', 'status="ok"'), 11 - dropped);
    assert.is(await storeMetric(fwd, 'enginesecurity_enginesidekick_outputs_total', 'status="error"'), 0);
  } finally {
    await fwd.fwd.close();
    await link.release();
    await w.api.close();
  }
});

const PGLITE = pgliteStorage();
const POSTGRES = postgresStorage();
suite(PGLITE);
liveSuite(PGLITE);
if ('unavailable' in POSTGRES) {
  process.stderr.write(`\n*** SKIPPING the alert store tests on PostgreSQL: ${POSTGRES.unavailable} ***\n\n`);
  test.skip('alert store on PostgreSQL (binaries missing)', () => {});
} else {
  const pgStorage = POSTGRES;
  suite(pgStorage);
  liveSuite(pgStorage);
  test('postgres: the server stopped mid-stream: stdout gets every alert, the store counts each it could not write, the query API answers 503 with Retry-After, and all resumes once it is back', async () => {
    const w = await startWorld(pgStorage);
    const link = createDatabaseLink();
    link.open(w.api.db);
    // two retries (100 + 200 ms of backoff) make each failed batch slower than the posts: the queue fills
    const fwd = await startTestForwarder({ stdout: true, outputs: { store: { queuesize: 3, timeoutms: 2000, retries: 2 } } }, 'node-a', {}, { alertDatabase: link });
    let stopped = false;
    const logs: string[] = [];
    const consoleServer = await startConsole({ db: w.api.db, log: (m) => logs.push(m), address: '127.0.0.1', port: 0 });
    const consoleUrl = consoleServer.url.replace(/\/$/, '');
    try {
      await post(fwd, falcoJson({ ...CORPUS[0]!, rule: 'before' }));
      await until(
        () => count(w),
        (n) => n === 1,
        'the first alert stored',
        30_000,
      );
      await pgStorage.outage!.stop();
      stopped = true;
      for (let i = 0; i < 10; i++) await post(fwd, falcoJson({ ...CORPUS[0]!, rule: `down${i}` }));
      const lines = (await fwd.waitForLines(11)).map((l) => JSON.parse(l) as { rule: string });
      assert.is(lines.filter((l) => l.rule !== OUTPUT_DROP_RULE).length, 11);
      const accounted = async () => ({
        ok: await storeMetric(fwd, 'enginesecurity_enginesidekick_outputs_total', 'status="ok"'),
        error: await storeMetric(fwd, 'enginesecurity_enginesidekick_outputs_total', 'status="error"'),
        dropped: await storeMetric(fwd, 'enginesecurity_enginesidekick_output_dropped_total'),
      });
      const down = await until(accounted, (a) => a.ok + a.error + a.dropped === 11, 'every alert delivered, failed or dropped', 30_000);
      assert.is(down.ok, 1);
      assert.ok(down.error > 0 && down.dropped > 0, JSON.stringify(down));
      // the query API, on the API's port and the console's, says the database is out of reach: 503, not 500
      for (const base of [w.api.url, consoleUrl]) {
        for (const path of ['/api/v1/events/search', '/api/v1/events/count/rule', '/api/v1/events/1']) {
          const res = await fetch(`${base}${path}`, { headers: { 'private-token': w.token } });
          assert.equal([res.status, res.headers.get('retry-after'), await res.json()], [503, '10', { message: '503 Service Unavailable - the database cannot be reached, try again later' }], `${base}${path}`);
        }
      }
      for (const who of ['api', 'console']) assert.equal(logs.concat(w.api.logs).filter((l) => l.startsWith(`${who}: PostgreSQL at postgres://`) && l.includes('cannot be reached')).length, 1, who);
      await pgStorage.outage!.start();
      stopped = false;
      await post(fwd, falcoJson({ ...CORPUS[0]!, rule: 'after' }));
      await until(accounted, (a) => a.ok === 2, 'the alert after the outage stored', 30_000);
      assert.equal(await rulesOf(w, ''), ['after', 'before']); // the same event time: the newest id first
      assert.is((await fetch(`${consoleUrl}/api/v1/events/count`, { headers: { 'private-token': w.token } })).status, 200);
    } finally {
      if (stopped) await pgStorage.outage!.start();
      await consoleServer.close();
      await fwd.fwd.close();
      await link.release();
      await w.api.close();
    }
  });
}

test.after(async () => {
  await PGLITE.shutdown();
  if (!('unavailable' in POSTGRES)) await POSTGRES.shutdown();
});

test.run();
