// Output aggregation in a real `rae run`: alerts posted to its forwarder (POST /, the fan-out's
// path for every alert) under a one-hour window, so no window can end during the test however
// loaded the machine is; the first alert of each key is on stdout at once, every post is counted
// by the detection counter, and SIGTERM mid-window releases each key's summary before exit. A
// second rule's 30 s windows end in real time: whatever the load did to the posts' spacing, the
// alerts delivered plus the counts of its summaries add up to the posts once its windows ended.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae } from '../helpers/rae-run.js';

const payload = (i: number, container: string, rule = 'Noisy rule') =>
  JSON.stringify({
    rule,
    priority: 'Notice',
    source: 'syscall',
    time: new Date(Date.UTC(2024, 0, 2, 12, 0, 0, i)).toISOString(),
    output: `noisy ${container}`,
    output_fields: { 'container.id': container, 'proc.cmdline': 'sh -c x', 'proc.pid': i },
  });

test('rae run: repeats held under a window, every detection counted, SIGTERM mid-window releases each summary', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rae-aggr-'));
  const cfg = join(tmp, 'run.yaml');
  writeFileSync(
    cfg,
    `rules:\n  builtIn: []\nforwarder:\n  port: 0\n  aggregation:\n    rules:\n      "Noisy *":\n        windowSeconds: 3600\n        key: [container.id, proc.cmdline]\n      "Brief rule":\n        windowSeconds: 30\n        key: [container.id]\napi:\n  enabled: false\nwebhook:\n  port: 0\nsyscall:\n  optional: true\n`,
  );
  const rae = startRae(['--config', cfg, '--state-dir', join(tmp, 'state')]);
  try {
    const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
    for (let i = 0; i < 60; i++) {
      const res = await fetch(`${forwarder}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload(i, i < 50 ? 'c1' : 'c2') });
      assert.is(res.status, 200);
    }
    const noisy = () => rae.alerts.filter((a) => a.rule === 'Noisy rule');
    await rae.waitAlerts(() => noisy().length === 2, 'the first alert of each key');

    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${forwarder}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload(i, 'b1', 'Brief rule') });
      assert.is(res.status, 200);
    }
    const brief = () => rae.alerts.filter((a) => a.rule === 'Brief rule');
    const accounted = () => brief().reduce((n, a) => n + ((a.output_fields['aggregation.count'] as number | undefined) ?? 1), 0);
    await rae.waitAlerts(() => accounted() === 10, "the Brief rule's windows to end (10 posts as alerts and summary counts)");
    // ten posts spread over more than 9 windows of 30 s would take a load far past any margin
    assert.ok(brief().length < 10, `repeats were held (${brief().length} lines for 10 posts)`);

    const metrics = await (await fetch(`${forwarder}/metrics`)).text();
    const sample = (name: string) => metrics.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes('rule="Noisy rule"'));
    assert.match(sample('enginesecurity_enginesidekick_engine_events_total') ?? '', / 60$/);
    assert.match(sample('enginesecurity_enginesidekick_aggregation_held_total') ?? '', / 58$/);
    assert.is(sample('enginesecurity_enginesidekick_aggregation_summaries_total'), undefined);
    assert.is(await rae.stop(), 0);
    assert.equal(
      noisy().map((a) => [a.output_fields['container.id'], a.output_fields['aggregation.count'] ?? 'alert']),
      [
        ['c1', 'alert'],
        ['c2', 'alert'],
        ['c1', 49],
        ['c2', 9],
      ],
    );
  } finally {
    await rae.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
});

test.run();
