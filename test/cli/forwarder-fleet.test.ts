// `rae forwarder` with a fleet: two real `rae run` engines (hostnames node-a from the
// configuration, node-b from $RAE_HOSTNAME) post their alerts to one real `rae forwarder` through
// their webhook output (node-a by forwarder.outputs.webhook.address, node-b by falcosidekick's
// WEBHOOK_ADDRESS), on PGlite and on a private PostgreSQL server. Search and count by hostname
// show both. On PostgreSQL the server is stopped mid-stream: the engines' stdout goes on, the
// forwarder's store counts what it could not write, and writing resumes once the server is back.
// SIGTERM drains: every alert the forwarder accepted is in the database after it exits 0. And the
// command's errors: a configuration that turns its server off, a database that cannot be opened.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countAlerts, openApiDatabase } from '../../host/api/db/index.js';
import { pgliteStorage, postgresStorage, type Storage } from '../../support/api/storage.js';
import { postTest, startFleet, TOKEN } from '../helpers/fleet.js';
import { until } from '../helpers/until.js';

/** Two engines' alerts in one database, found by hostname; `outage` (PostgreSQL) stops the server mid-stream; SIGTERM drains. */
function fleetTest(storage: Storage): void {
  test(`${storage.name}: two engines post to one rae forwarder; search and count by hostname show both${storage.outage ? '; the database stopped mid-stream' : ''}; SIGTERM drains`, async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'rae-fleet-'));
    const location = await storage.fresh();
    const fleet = await startFleet(tmp, location);
    let down = false;
    try {
      const [a, b] = fleet.engines;
      // one engine after the other: the store's queue of 3 holds each engine's alerts
      await postTest(a!.url, 2);
      await until(
        () => fleet.get('/api/v1/events/count'),
        (r) => r.statistics.all === 2,
        "node-a's 2 alerts stored",
      );
      await postTest(b!.url, 3);
      const byHost = await until(
        () => fleet.get('/api/v1/events/count/hostname'),
        (r) => r.statistics.all === 5,
        'the 5 alerts of both engines stored',
      );
      assert.equal(byHost.results, { 'node-b': 3, 'node-a': 2 });
      // the fleet's console answers the same counts on its own port: what its Dashboard's hostname chart reads
      const viaConsole = (await (await fetch(`${fleet.consoleUrl}api/v1/events/count/hostname`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { results: unknown };
      assert.equal(viaConsole.results, { 'node-b': 3, 'node-a': 2 });
      const searchA = await fleet.get('/api/v1/events/search?hostname=node-a');
      assert.equal(
        searchA.results.map((r) => [r.hostname, r.rule]),
        [
          ['node-a', 'Test rule'],
          ['node-a', 'Test rule'],
        ],
      );
      assert.is((await fleet.get('/api/v1/events/count?hostname=node-b')).statistics.all, 3);

      if (storage.outage) {
        await storage.outage.stop();
        down = true;
        await postTest(a!.url, 10);
        // the engine's stdout goes on: its 12 alerts; the forwarder's own stdout gets them too
        await a!.rae.waitAlerts((xs) => xs.filter((x) => x.rule === 'Test rule').length === 12, "node-a's 12 alerts on its stdout");
        await fleet.central.waitAlerts((xs) => xs.filter((x) => x.rule === 'Test rule').length === 15, "the forwarder's stdout: 15 alerts");
        const accounted = async () => ({
          ok: await fleet.storeMetric('enginesecurity_enginesidekick_outputs_total', 'status="ok"'),
          error: await fleet.storeMetric('enginesecurity_enginesidekick_outputs_total', 'status="error"'),
          dropped: await fleet.storeMetric('enginesecurity_enginesidekick_output_dropped_total'),
        });
        const during = await until(accounted, (x) => x.ok + x.error + x.dropped === 15, 'each alert stored, failed or dropped');
        assert.is(during.ok, 5, JSON.stringify(during));
        assert.ok(during.error > 0 && during.dropped > 0, JSON.stringify(during));
        await storage.outage.start();
        down = false;
        await postTest(b!.url, 1);
        await until(
          () => fleet.get('/api/v1/events/count?hostname=node-b'),
          (r) => r.statistics.all === 4,
          "node-b's alert after the outage stored",
        );
        assert.is((await accounted()).ok, 6);
      }

      // SIGTERM drains: every alert POST / accepted and the store's queue of 3 did not drop (counted
      // as the alert is accepted, before the answer) is in the database once the forwarder has exited
      const before = (await fleet.get('/api/v1/events/count')).statistics.all;
      const droppedBefore = await fleet.storeMetric('enginesecurity_enginesidekick_output_dropped_total');
      const body = JSON.stringify({ rule: 'Drained', priority: 'Notice', time: new Date().toISOString(), output: 'drained', hostname: 'node-c', output_fields: { n: 1 } });
      await Promise.all(Array.from({ length: 20 }, async () => assert.is((await fetch(`${fleet.forwarderUrl}/`, { method: 'POST', body })).status, 200)));
      const kept = 20 - ((await fleet.storeMetric('enginesecurity_enginesidekick_output_dropped_total')) - droppedBefore);
      assert.ok(kept >= 3, `kept ${kept}`);
      assert.is(await fleet.central.stop(), 0);
      assert.match(fleet.central.stderr(), /forwarder: SIGTERM received, stopping\n[\s\S]*forwarder: stopped in \d+ ms/);
      assert.not.match(fleet.central.stderr().slice(fleet.central.stderr().indexOf('SIGTERM received')), /store output failing/);
      const { db } = await openApiDatabase(location);
      try {
        assert.is(await countAlerts(db, { rules: ['Drained'] }), kept);
        assert.is(await countAlerts(db, {}), before + kept);
      } finally {
        await db.close();
      }
      for (const e of fleet.engines) assert.is(await e.rae.stop(), 0);
    } finally {
      if (down) await storage.outage!.start();
      await fleet.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
}

test('rae forwarder: a configuration without its server, and a database that cannot be opened, are errors that say so', () => {
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) => spawnSync(process.execPath, ['bin/rae.js', 'forwarder', ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  const off = run(['-o', 'forwarder.enabled=false']);
  assert.is(off.status, 1, off.stderr);
  assert.match(off.stderr, 'forwarder: config forwarder.enabled: false turns off the server this command runs');
  const typo = run(['-o', 'forwarder.outputs.store.maxrow=5']);
  assert.is(typo.status, 1, typo.stderr);
  assert.match(typo.stderr, /forwarder: config forwarder\.outputs\.store\.maxrow/);
  // nothing listens on port 1 of the loopback: the connection is refused at once
  const noDb = run(['-o', 'forwarder.port=0', '-o', 'api.port=0'], { DATABASE_URL: 'postgres://rae@127.0.0.1:1/rae' });
  assert.is(noDb.status, 1, noDb.stderr);
  assert.match(noDb.stderr, /forwarder: cannot start: cannot connect to PostgreSQL at postgres:\/\/rae@127\.0\.0\.1:1\/rae \(DATABASE_URL\): connect ECONNREFUSED 127\.0\.0\.1:1\n/);
  const usage = run(['--bogus']);
  assert.is(usage.status, 2);
  assert.match(usage.stderr, "Run 'rae forwarder --help' for usage.");
});

const PGLITE = pgliteStorage();
const POSTGRES = postgresStorage();
fleetTest(PGLITE);
if ('unavailable' in POSTGRES) {
  process.stderr.write(`\n*** SKIPPING the fleet test on PostgreSQL: ${POSTGRES.unavailable} ***\n\n`);
  test.skip('fleet on PostgreSQL (binaries missing)', () => {});
} else fleetTest(POSTGRES);

test.after(async () => {
  await PGLITE.shutdown();
  if (!('unavailable' in POSTGRES)) await POSTGRES.shutdown();
});

test.run();
