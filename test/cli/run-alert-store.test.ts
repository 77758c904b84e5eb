// The alert store in a real `rae run`: alerts posted to its forwarder as soon as it listens,
// before the API has opened its database (a first start creates it), are stored once it is open
// (the store waits for the database, behind its bounded queue), and the API's /api/v1/events
// routes answer for them with a token from the bootstrap file. SIGTERM: the store's statements
// finish before the API closes its database, and the run exits 0 with no store failure logged.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae } from '../helpers/rae-run.js';

const TOKEN = 'glpat-alert-store-test-token-0001';
const START = Date.now();

const payload = (i: number) =>
  JSON.stringify({
    rule: i % 2 === 0 ? 'Even rule' : 'Odd rule',
    priority: i === 0 ? 'Critical' : 'Notice',
    source: 'syscall',
    hostname: 'node-x',
    time: new Date(START - 60_000 + i).toISOString(), // within the store's default retention (30d)
    output: `posted ${i}`,
    output_fields: { 'proc.pid': i, 'container.id': `c${i}` },
  });

test('rae run: alerts posted before the API is up are stored and found through /api/v1/events; a clean stop', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rae-store-run-'));
  const cfg = join(tmp, 'run.yaml');
  const boot = join(tmp, 'bootstrap.yaml');
  writeFileSync(boot, `users:\n  - username: viewer\n    tokens:\n      - token: ${TOKEN}\n        scope: read_api\n`);
  writeFileSync(cfg, `rules:\n  builtIn: []\nforwarder:\n  port: 0\napi:\n  port: 0\n  bootstrapFile: ${JSON.stringify(boot)}\nwebhook:\n  port: 0\nsyscall:\n  optional: true\n`);
  const rae = startRae(['--config', cfg, '--state-dir', join(tmp, 'state')]);
  try {
    const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${forwarder}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload(i) });
      assert.is(res.status, 200);
    }
    assert.is((await fetch(`${forwarder}/test`, { method: 'POST' })).status, 200);
    const api = (await rae.waitLog(/run: api listening on (\S+)/))[1]!;
    const get = async (path: string) =>
      (await fetch(`${api}${path}`, { headers: { 'private-token': TOKEN } })).json() as Promise<{ statistics: { all: number }; results: Record<string, number> & Array<{ rule: string; output_fields: Record<string, unknown> }> }>;
    const deadline = Date.now() + 120_000;
    while ((await get('/api/v1/events/count')).statistics.all < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.is((await get('/api/v1/events/count')).statistics.all, 6);
    assert.equal((await get('/api/v1/events/count/rule')).results, { 'Even rule': 3, 'Odd rule': 2, 'Test rule': 1 });
    const critical = await get('/api/v1/events/search?min_priority=critical');
    assert.equal(
      critical.results.map((r) => [r.rule, r.output_fields['container.id']]),
      [['Even rule', 'c0']],
    );
    assert.is(await rae.stop(), 0);
    assert.not.match(rae.stderr(), /store output failing|store retention failing/);
    assert.is(rae.alerts.length, 6, 'stdout: every alert');
  } finally {
    await rae.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
});

test.run();
