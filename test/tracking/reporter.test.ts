// The engine's fault reporter against a real API (PGlite): with errorTracking.dsn set to a
// client key's DSN, faults travel as Sentry envelopes over HTTP and are listed in that project
// with their component, version, node and rules hash; repeating faults are aggregated; a
// malformed DSN is refused with what is wrong.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createKey, upsertSetting } from '../../host/api/db/index.js';
import { createFaultTracking, parseDsn } from '../../host/tracking/index.js';
import { seedWorld, startTestApi, type TestApi, type World } from '../../support/api/api.js';
import { pgliteStorage } from '../../support/api/storage.js';

const storage = pgliteStorage();
let api: TestApi;
let w: World;
test.before(async () => {
  api = await startTestApi(storage, { configure: (c) => (c.api.externalScheme = 'http') });
  w = await seedWorld(api.db);
});
test.after(async () => {
  await api?.close();
  await storage.shutdown();
});

test('a malformed DSN is refused with what is wrong', () => {
  assert.equal(parseDsn('not a url'), { problem: 'expected a DSN such as https://KEY@host/errortracking/api/v1/projects/1, got "not a url"' });
  assert.equal(parseDsn('ftp://k@h/1'), { problem: 'expected an https or http DSN, got ftp:' });
  assert.equal(parseDsn('https://h/1'), { problem: 'the DSN has no public key (the part before @)' });
  assert.equal(parseDsn('https://k@h/errortracking/api/v1/projects/7'), { envelopeUrl: 'https://h/errortracking/api/v1/projects/api/7/envelope/', publicKey: 'k' });
});

test('faults reach a DSN as Sentry events: component, version, node, rules hash; repeats aggregated', async () => {
  await upsertSetting(api.db, w.project.id, true, true);
  const key = await createKey(api.db, w.project.id);
  const dsn = `${api.url.replace('http://', `http://${key.public_key}@`)}/errortracking/api/v1/projects/${w.project.id}`;
  const logs: string[] = [];
  const tracking = createFaultTracking({ dsn, version: '9.9.9', hostname: 'node-a', log: (m) => logs.push(m) });
  if ('problem' in tracking) throw new Error(tracking.problem);
  tracking.setRulesHash('abc123');
  tracking.engineError({ code: 'EWORKER', message: 'the compile worker stopped: exit code 1' });
  const metrics = tracking.tapMetrics({ output() {}, webhookRequest() {} } as never);
  for (let i = 0; i < 5; i++) metrics.webhookRequest(400, 'invalid_json');
  const counts = await tracking.close();
  assert.equal(counts, { faults: 6, sent: 3, dropped: 0, failed: 0 }, 'the first refusal at once, the other four as one event at the close');
  const list = (await api.call('GET', `/api/v4/projects/${w.project.id}/error_tracking/errors`, { headers: w.auth('reporter') })).json as Array<Record<string, unknown>>;
  assert.equal(list.map((e) => [e.name, e.actor, e.event_count]).sort(), [
    ['EWORKER', 'compile-worker', 1],
    ['WebhookRefused', 'webhook', 2],
  ]);
  const refused = list.find((e) => e.name === 'WebhookRefused')!;
  assert.is(refused.description, 'the audit webhook refused a request: invalid_json (HTTP 400) (4 times)');
  const detail = (await api.call('GET', `/api/v4/projects/${w.project.id}/error_tracking/errors/${refused.id}`, { headers: w.auth('reporter') })).json as Record<string, unknown>;
  assert.equal([detail.last_release, detail.tags], ['runtime-audit-engine@9.9.9', { level: 'error', logger: 'runtime-audit-engine', component: 'webhook', version: '9.9.9', rules_hash: 'abc123', node: 'node-a' }]);
  assert.ok(
    logs.some((l) => l.includes('error tracking: 6 fault(s), 3 event(s) sent, 0 dropped, 0 not accepted')),
    logs.join('\n'),
  );
});

test.run();
