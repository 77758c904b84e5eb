// Upgrading a database: errors stored under 001's grouping (name, actor, platform) keep their
// group when 002 makes fingerprints the key; their new events start a group of their own, and
// events of every group count their users. PGlite in a temporary directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventToError } from '../../host/api/collector/event.js';
import { findErrorDetail, loadMigrations, migrate, openDatabase, recordErrorEvent, type ErrorEventInput } from '../../host/api/db/index.js';
import { isApiError } from '../../host/api/errors.js';
import { sentryEvent } from '../../support/api/ingestion.js';

const dir = mkdtempSync(join(tmpdir(), 'rae-api-migrations-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('002 keeps the groups stored under 001 and makes fingerprints the key', async () => {
  const db = await openDatabase({ pgliteDir: join(dir, 'db') });
  try {
    const [first, ...rest] = loadMigrations();
    assert.ok(first?.version === '001_init' && rest.some((m) => m.version === '002_error_fingerprints'));
    await migrate(db, [first]);
    await db.query(`INSERT INTO projects (path) VALUES ('a/b')`);
    await db.query(`INSERT INTO error_tracking_errors (project_id, name, description, actor, platform, events_count, first_seen_at, last_seen_at) VALUES (1, 'TypeError', 'old', 'handler(app)', 'node', 1, now(), now())`);
    await db.query(`INSERT INTO error_tracking_error_events (error_id, occurred_at, payload) VALUES (1, now(), '{}')`);
    assert.equal(await migrate(db), ['002_error_fingerprints', '003_alert_store', '004_alert_text_index']);
    const old = await findErrorDetail(db, 1, 1);
    assert.match(String(old?.fingerprint), /^v1:[0-9a-f]{32}$/);
    assert.equal([old?.events_count, old?.user_count], [1, 0]);
    const input = eventToError({ ...sentryEvent('n1', 'TypeError', 'new'), user: { id: 1 } }, 1);
    assert.not.ok(isApiError(input));
    const id = await recordErrorEvent(db, input as ErrorEventInput);
    assert.is.not(id, 1, 'a new fingerprint, a new group');
    assert.is(await recordErrorEvent(db, input as ErrorEventInput), id, 'the same fingerprint, the same group');
    const detail = await findErrorDetail(db, 1, id);
    assert.equal([detail?.events_count, detail?.user_count], [2, 1]);
  } finally {
    await db.close();
  }
});

test.run();
