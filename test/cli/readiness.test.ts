// Readiness of a real `rae run` (issue 19, item 7): with the webhook's port taken by another
// listener, the engine starts without the audit source, but /healthz and /readyz answer 503 and
// name the failed source; the source is retried, and once the port is free it comes up by itself
// and readiness turns ready (/healthz back to falcosidekick's exact 200 body). Issue 25, item 2:
// without the capabilities to load the kernel probe (CAP_BPF and CAP_SYS_ADMIN dropped, as in a
// pod without them) the engine is not ready while blind, unless syscall.optional says it may be;
// either way the reason is on /readyz, in a metric and in an internal alert.
import { spawnSync } from 'node:child_process';
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
  reason?: string;
  required?: boolean;
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
  // from the sources (RAE_TSX): no database template, so the database is created with initdb and
  // the migrations once the detection path is up (a build's template opens alongside the start)
  const rae = startRae(['--config', cfg, '--state-dir', state], [], { env: { RAE_TSX: '1' } });
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
    // the database created in a child process (create-aside.ts), then opened here with nothing left to migrate
    const order = [/waiting for api starting/, /api: created the PGlite database at .* in process \d+, applied migrations 001_init/, /api: storage PGlite at \S+$/m, /run: ready \(.*\): every component is up/].map((re) => log.search(re));
    assert.ok(
      order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)),
      log,
    );
  } finally {
    assert.is(await rae.stop(), 0, rae.stderr());
  }
});

/** util-linux's setpriv dropping CAP_BPF and CAP_SYS_ADMIN from the bounding set (so from root's effective set at exec), or undefined when it cannot. */
function withoutBpf(): string[] | undefined {
  const wrapper = ['setpriv', '--bounding-set=-bpf,-sys_admin', '--inh-caps=-bpf,-sys_admin'];
  const r = spawnSync(wrapper[0]!, [...wrapper.slice(1), 'true'], { encoding: 'utf8' });
  if (r.status === 0) return wrapper;
  console.warn(`SKIPPED: setpriv cannot drop CAP_BPF (${r.stderr?.trim() || r.error?.message}); the blind-readiness tests need root and util-linux`);
  return undefined;
}

/** Runs an engine that cannot load the probe; returns /healthz, /readyz, /metrics and its stdout alerts once it has started. */
async function blindRun(name: string, extra: string[]) {
  const wrapper = withoutBpf();
  if (!wrapper) return undefined;
  const cfg = join(root, `${name}.yaml`);
  writeFileSync(cfg, 'rules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\n');
  const rae = startRae(['--config', cfg, '--state-dir', join(root, name), ...extra], wrapper);
  try {
    const started = (await rae.waitLog(/run: (ready|started) \(.*/))[0];
    const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
    await rae.waitAlerts((a) => a.some((x) => x.rule === 'Engine internal: source unavailable'), 'the source-unavailable alert');
    const metrics = await get(`${forwarder}/metrics`);
    return { started, health: await get(`${forwarder}/healthz`), ready: await get(`${forwarder}/readyz`), metrics: metrics.text, alerts: rae.alerts, stderr: rae.stderr() };
  } finally {
    assert.is(await rae.stop(), 0, rae.stderr());
  }
}

test('readiness: without CAP_BPF the syscall source is off and the engine not ready; the reason on /readyz, in the metric and an internal alert', async () => {
  const r = await blindRun('blind', []);
  if (!r) return;
  assert.match(r.stderr, /run: kernel \(syscall\) source off: EPERM: .*without CAP_BPF\)/);
  assert.match(r.started, /run: started \(.*\); waiting for syscall off \(EPERM: .*without CAP_BPF\); syscall\.optional is false\)/);
  assert.match(r.stderr, /run: not ready while the syscall source is off \(EPERM\); \/healthz and \/readyz answer 503/);
  for (const res of [r.health, r.ready]) {
    assert.is(res.status, 503, res.text);
    const body = JSON.parse(res.text) as { status: string; components: Component[] };
    assert.is(body.status, 'not ready');
    const syscall = body.components.find((c) => c.name === 'syscall');
    assert.is(syscall?.state, 'off', res.text);
    assert.match(syscall?.reason ?? '', /^EPERM: loading the probe needs root, or CAP_BPF and CAP_PERFMON \(.*without CAP_BPF\)$/);
    assert.is(syscall?.required, true);
    for (const name of ['forwarder', 'engine', 'webhook']) assert.is(body.components.find((c) => c.name === name)?.state, 'up', res.text);
  }
  assert.match(r.metrics, /^enginesecurity_engine_source_unavailable\{source="syscall",reason="EPERM"\} 1$/m);
  const alert = r.alerts.find((a) => a.rule === 'Engine internal: source unavailable') as { priority?: string; source: string; output_fields: Record<string, unknown> };
  assert.is(alert.source, 'internal');
  assert.is(alert.priority, 'Critical');
  assert.equal([alert.output_fields['source.name'], alert.output_fields['source.code'], alert.output_fields['source.optional']], ['syscall', 'EPERM', false]);
});

test('readiness: with syscall.optional the engine without CAP_BPF is ready, and still says why the source is off', async () => {
  const r = await blindRun('blind-optional', ['-o', 'syscall.optional=true']);
  if (!r) return;
  assert.match(r.started, /run: ready \(/);
  assert.equal([r.health.status, r.health.text], [200, '{"status": "ok"}']);
  assert.is(r.ready.status, 200, r.ready.text);
  const syscall = (JSON.parse(r.ready.text) as { components: Component[] }).components.find((c) => c.name === 'syscall');
  assert.is(syscall?.state, 'off', r.ready.text);
  assert.match(syscall?.reason ?? '', /^EPERM: .*without CAP_BPF\)$/);
  assert.is(syscall?.required, false);
  assert.not.match(r.stderr, /run: not ready while/);
  assert.match(r.metrics, /^enginesecurity_engine_source_unavailable\{source="syscall",reason="EPERM"\} 1$/m);
  const alert = r.alerts.find((a) => a.rule === 'Engine internal: source unavailable') as { priority?: string; output_fields: Record<string, unknown> };
  assert.is(alert.priority, 'Warning');
  assert.is(alert.output_fields['source.optional'], true);
});

test.run();
