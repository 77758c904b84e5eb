// Readiness of a real `rae run` (issue 19, item 7): with the webhook's port taken by another
// listener, the engine starts without the audit source, but /healthz and /readyz answer 503 and
// name the failed source; the source is retried, and once the port is free it comes up by itself
// and readiness turns ready (/healthz back to falcosidekick's exact 200 body).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditEvent } from '../../host/generator/audit-events.js';
import { auditPoster, webhookClient } from '../../host/generator/post.js';
import { startRae } from '../helpers/rae-run.js';

const root = mkdtempSync(join(tmpdir(), 'rae-readiness-'));
test.after(() => rmSync(root, { recursive: true, force: true }));

interface Component {
  name: string;
  state: string;
  error?: string;
  attempts?: number;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

test('readiness: a webhook port taken at start is not ready, named, retried, and ready once free', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, `rules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: ${port}\n`);
  const state = join(root, 'state');
  const rae = startRae(['--config', cfg, '--state-dir', state]);
  let freed = false;
  try {
    await rae.waitLog(/run: (ready|started)/);
    const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
    await rae.waitLog(/module: source webhook did not start: .*EADDRINUSE/);

    // Blind: both endpoints answer 503 and say which component failed and why.
    const health = await get(`${forwarder}/healthz`);
    assert.is(health.status, 503, health.text);
    const ready = await get(`${forwarder}/readyz`);
    assert.is(ready.status, 503, ready.text);
    for (const body of [health.text, ready.text]) {
      const r = JSON.parse(body) as { status: string; components: Component[] };
      assert.is(r.status, 'not ready');
      const webhook = r.components.find((c) => c.name === 'webhook');
      assert.ok(webhook, body);
      assert.is(webhook!.state, 'failed');
      assert.match(webhook!.error!, 'EADDRINUSE');
      assert.ok(webhook!.attempts! >= 1);
      assert.is(r.components.find((c) => c.name === 'forwarder')?.state, 'up', body);
    }
    assert.match(rae.stderr(), /module: source webhook did not start: .*EADDRINUSE.*; retrying in 1 s \(attempt 1\)/);
    assert.match(rae.stderr(), /run: started \(.*\); waiting for webhook failed \(.*EADDRINUSE.*\)/);

    // The port is freed: the retry brings the source up by itself, and the engine is ready.
    const mark = rae.stderr().length;
    await new Promise((resolve) => blocker.close(resolve));
    freed = true;
    await rae.waitLog(/module: source webhook started \(after \d+ failed attempts?\)/, mark);
    await rae.waitLog(/run: ready \(.*\): every component is up/, mark);
    const after = await get(`${forwarder}/healthz`);
    assert.equal([after.status, after.text], [200, '{"status": "ok"}']);
    const detail = await get(`${forwarder}/readyz`);
    assert.is(detail.status, 200, detail.text);
    const r = JSON.parse(detail.text) as { status: string; components: Component[] };
    assert.is(r.status, 'ok');
    assert.is(r.components.find((c) => c.name === 'webhook')?.state, 'up');

    // And it serves: an audit event posted now is accepted.
    const url = (await rae.waitLog(/run: webhook listening on (\S+)/, mark))[1]!;
    await auditPoster(url, webhookClient(join(state, 'webhook-tls')))([auditEvent({ verb: 'get', resource: 'configmaps', namespace: 'default', name: 'x' })]);
  } finally {
    if (!freed) blocker.close();
    assert.is(await rae.stop(), 0, rae.stderr());
  }
});

test('readiness: on a first start the detection path is up and detecting before the API has created its database', async () => {
  const cfg = join(root, 'config-api.yaml');
  writeFileSync(cfg, 'rules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  port: 0\napi:\n  port: 0\nwebhook:\n  port: 0\n');
  const state = join(root, 'state-api');
  const rae = startRae(['--config', cfg, '--state-dir', state]);
  try {
    // The start ends with only the API outstanding; its database is created after that line.
    await rae.waitLog(/run: started \(.*\); waiting for api starting/);
    const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
    const webhook = (await rae.waitLog(/run: webhook listening on (\S+)/))[1]!;
    const ready = await get(`${forwarder}/readyz`);
    const r = JSON.parse(ready.text) as { components: Component[] };
    for (const name of ['forwarder', 'engine', 'webhook']) assert.is(r.components.find((c) => c.name === name)?.state, 'up', ready.text);
    assert.ok(['starting', 'up'].includes(r.components.find((c) => c.name === 'api')?.state ?? ''), ready.text);
    // Detecting already: an exec into a pod alerts.
    await auditPoster(webhook, webhookClient(join(state, 'webhook-tls')))([auditEvent({ verb: 'create', resource: 'pods', subresource: 'exec', namespace: 'default', name: 'web', stage: 'ResponseStarted' })]);
    await rae.waitAlerts((a) => a.some((x) => x.rule === 'Attach/Exec Pod'), 'the Attach/Exec Pod alert');
    await rae.waitLog(/run: ready \(.*\): every component is up/);
    const log = rae.stderr();
    const order = [/waiting for api starting/, /api: storage PGlite at .*applied migrations/, /run: ready \(.*\): every component is up/].map((re) => log.search(re));
    assert.ok(
      order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)),
      log,
    );
  } finally {
    assert.is(await rae.stop(), 0, rae.stderr());
  }
});

test.run();
