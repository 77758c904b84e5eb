// Fault injection on the API (issue 18, item 2), on PGlite, each with its documented outcome
// (docs/security-api.md) and a count of lost writes, which must be 0:
// - SIGKILL of the API process during a burst of writes (client keys and ingested events), then a
//   restart on the same directory: every write answered 2xx before the kill is there; the stale
//   lock of the killed process does not stop the restart.
// - The PGlite directory removed while the API runs: every request is answered 503 (one log line,
//   no crash), so no write is acknowledged and then lost; a restart starts an empty database.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createKey, openApiDatabase, pgliteDir, upsertSetting } from '../../host/api/db/index.js';
import { envelope, sentryEvent, startIngestionApi } from '../../support/api/ingestion.js';
import { seedWorld, startTestApi } from '../../support/api/api.js';
import { pgliteStorage } from '../../support/api/storage.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/api-process.ts', import.meta.url));
const storage = pgliteStorage();

/** Starts the API process on `stateDir`; resolves once it prints its URL. */
function startProcess(stateDir: string): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, stateDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('ready ')) resolve({ child, url: line.slice(6), stderr: () => err });
    });
    child.once('exit', (code, signal) => reject(new Error(`api process exited (${code ?? signal}) before ready: ${err}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

test('SIGKILL during a burst of writes: after a restart every acknowledged write is there', async () => {
  const loc = await storage.fresh();
  const { db } = await openApiDatabase({ stateDir: loc.stateDir, databaseUrl: '' });
  const w = await seedWorld(db);
  await upsertSetting(db, w.project.id, true, true);
  const key = (await createKey(db, w.project.id)).public_key;
  await db.close();
  const h = { ...w.auth('maintainer') };
  const first = await startProcess(loc.stateDir);
  const acked = { keys: new Set<number>(), events: new Set<string>() };
  let sent = 0;
  let reached!: () => void;
  const enough = new Promise<void>((resolve) => (reached = resolve));
  const worker = async (): Promise<void> => {
    for (;;) {
      const n = sent++;
      try {
        if (n % 2 === 0) {
          const res = await request(`${first.url}/api/v4/projects/${w.project.id}/error_tracking/client_keys`, { method: 'POST', headers: h });
          const body = (await res.body.json()) as { id: number };
          if (res.statusCode === 201) acked.keys.add(body.id);
        } else {
          const res = await request(`${first.url}/errortracking/api/v1/projects/api/${w.project.id}/envelope/?sentry_key=${key}`, {
            method: 'POST',
            body: envelope(sentryEvent(`burst-${n}`, 'Error', 'burst')),
          });
          await res.body.dump();
          if (res.statusCode === 200) acked.events.add(`burst-${n}`);
        }
      } catch {
        return; // the process is gone: refused or reset, never acknowledged
      }
      if (acked.keys.size + acked.events.size >= 200) reached();
    }
  };
  const workers = Array.from({ length: 8 }, worker);
  await enough;
  first.child.kill('SIGKILL');
  await Promise.all(workers);
  await exited(first.child);
  const second = await startProcess(loc.stateDir);
  second.child.kill('SIGTERM');
  await exited(second.child);
  assert.equal([second.child.exitCode, second.child.signalCode], [0, null], `the restarted API stops cleanly: ${second.stderr()}`);
  const reopened = await openApiDatabase({ stateDir: loc.stateDir, databaseUrl: '' });
  try {
    const keys = new Set((await reopened.db.query<{ id: number }>('SELECT id FROM error_tracking_client_keys')).map((r) => r.id));
    const events = new Set((await reopened.db.query<{ event_id: string }>('SELECT event_id FROM error_tracking_error_events')).map((r) => r.event_id));
    const lostKeys = [...acked.keys].filter((id) => !keys.has(id));
    const lostEvents = [...acked.events].filter((id) => !events.has(id));
    process.stderr.write(`  SIGKILL: ${sent} writes sent, ${acked.keys.size} keys and ${acked.events.size} events acknowledged, lost ${lostKeys.length + lostEvents.length}\n`);
    assert.ok(acked.keys.size > 0 && acked.events.size > 0, 'both kinds acknowledged');
    assert.equal(lostKeys, [], 'lost keys');
    assert.equal(lostEvents, [], 'lost events');
  } finally {
    await reopened.db.close();
  }
});

test('the PGlite directory removed while running: 503 and one log line, no write acknowledged and lost, no crash', async () => {
  const { api, w, id, key } = await startIngestionApi(storage);
  const h = w.auth('maintainer');
  const keysUrl = `/api/v4/projects/${id}/error_tracking/client_keys`;
  try {
    assert.is((await api.call('POST', keysUrl, { headers: h })).status, 201, 'writes work before');
    rmSync(pgliteDir(api.location.stateDir), { recursive: true, force: true });
    let ackedAfter = 0;
    for (let i = 0; i < 10; i++) {
      const write = await api.call('POST', keysUrl, { headers: h });
      const event = await api.call('POST', `/errortracking/api/v1/projects/api/${id}/envelope/?sentry_key=${key}`, { body: envelope(sentryEvent(`gone-${i}`, 'Error', 'gone')) });
      const read = await api.call('GET', keysUrl, { headers: h });
      for (const res of [write, event, read]) {
        assert.is(res.status, 503, res.text);
        assert.is(res.text, '{"message":"503 Service Unavailable"}');
      }
      if (write.status < 300) ackedAfter++;
      if (event.status < 300) ackedAfter++;
    }
    assert.is(ackedAfter, 0, 'writes acknowledged after the removal (lost)');
    const gone = api.logs.filter((l) => l.includes('is gone (removed while the API ran)'));
    assert.is(gone.length, 1, api.logs.join('\n'));
    assert.equal(
      api.logs.filter((l) => /^api: [A-Z]+ \//.test(l)),
      [],
      'no internal error logged',
    );
  } finally {
    await api.close();
  }
  // a restart on the same state directory starts an empty database
  const again = await startTestApi(storage, { location: api.location });
  try {
    assert.ok(
      again.logs.some((l) => l.includes('applied migrations')),
      again.logs.join('\n'),
    );
  } finally {
    await again.close();
  }
});

test('clean-up', async () => {
  await storage.shutdown();
});

test.run();
