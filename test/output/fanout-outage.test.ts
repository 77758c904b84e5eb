// An output's receiver stops mid-stream and comes back on the same port: the other outputs
// (stdout, file, slack) keep delivering every alert, the down webhook's failures and drops are
// counted and reported by the internal drop alert, and its delivery resumes after the restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Alert } from '../../host/output/alert.js';
import { OUTPUT_DROP_RULE } from '../../host/output/fanout.js';
import { metricLines, startTestForwarder } from '../../support/forwarder.js';
import { startReceiver, until } from './receiver.js';

const alert = (i: number): Alert => ({ timeNs: 1_704_196_800_000_000_000n + BigInt(i), rule: 'R', priority: 'Error', source: 'syscall', tags: [], hostname: 'h', message: `event ${i}`, outputFields: { n: i } });
const fileLines = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').slice(0, -1) : []);
const nOf = (body: Buffer) => JSON.parse(body.toString('utf8')).output_fields.n as number;

test('webhook receiver down mid-stream: others deliver all, failures and drops counted and alerted, delivery resumes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-fwd-outage-'));
  const file = join(dir, 'events.json');
  const hook = await startReceiver();
  const port = Number(new URL(hook.url).port);
  const slack = await startReceiver();
  const t = await startTestForwarder({
    outputs: {
      webhook: { address: hook.url, retries: 1, queuesize: 5, timeoutms: 2000 },
      slack: { webhookurl: slack.url },
      file: { filename: file },
    },
  });
  let restarted: Awaited<ReturnType<typeof startReceiver>> | undefined;
  try {
    for (let i = 0; i < 20; i++) {
      t.fwd.submit(alert(i));
      await until(() => hook.requests.length === i + 1, `alert ${i} on the webhook`); // its queue holds only 5
    }
    await hook.close(); // down

    for (let i = 20; i < 60; i++) {
      t.fwd.submit(alert(i));
      await new Promise((r) => setImmediate(r));
    }
    const got = (lines: string[]) =>
      new Set(
        lines
          .map((l) => JSON.parse(l))
          .filter((a) => a.rule === 'R')
          .map((a) => a.output_fields.n),
      ).size;
    const slackGot = () => new Set(slack.requests.map((r) => /: Error event (\d+)$/.exec(JSON.parse(r.body.toString()).attachments[0].fallback)?.[1]).filter((x) => x !== undefined)).size;
    await until(() => slackGot() === 60 && got(fileLines(file)) === 60 && got(t.lines()) === 60, `slack, the file and stdout to get all sixty`);
    await until(async () => metricLines((await t.metrics.exposition()).body, 'enginesecurity_enginesidekick_outputs_total').some((l) => l.includes('destination="webhook",status="error"')), 'counted webhook failures');

    restarted = await startReceiver({ port }); // back, same address
    await until(() => t.fwd.outputs().find((o) => o.destination === 'webhook')?.health !== undefined, 'the webhook to report its failure');
    for (let i = 60; i < 70; i++) {
      t.fwd.submit(alert(i));
      await until(() => restarted!.requests.some((r) => nOf(r.body) === i), `alert ${i} after the restart`);
    }
    await until(() => t.fwd.outputs().find((o) => o.destination === 'webhook')?.health === undefined, 'the webhook healthy again');
  } finally {
    await t.fwd.close();
    await slack.close();
    await hook.close(); // again, when a wait above failed before the outage
    await restarted?.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const body = (await t.metrics.exposition()).body;
  const count = (dest: string, status: string) =>
    Number(
      metricLines(body, 'enginesecurity_enginesidekick_outputs_total')
        .find((l) => l.includes(`destination="${dest}",status="${status}"`))
        ?.split(' ')[1] ?? 0,
    );
  const dropped = Number(
    metricLines(body, 'enginesecurity_enginesidekick_output_dropped_total')
      .find((l) => l.includes('"webhook"'))
      ?.split(' ')[1] ?? 0,
  );
  const dropAlerts = t
    .lines()
    .map((l) => JSON.parse(l))
    .filter((a) => a.rule === OUTPUT_DROP_RULE);
  // Every alert the webhook got was either delivered, failed after its retry, or dropped by the full queue.
  assert.is(count('webhook', 'ok') + count('webhook', 'error') + dropped, 70); // drop alerts are not sent to the dropping output
  assert.ok(count('webhook', 'error') > 0 && dropped > 0, `errors ${count('webhook', 'error')}, drops ${dropped}`);
  assert.is(
    dropAlerts.reduce((n, a) => n + a.output_fields.n_drops, 0),
    dropped,
  );
  assert.ok(dropAlerts.every((a) => a.output_fields.outputs.includes('webhook')));
  // The others got everything (and the drop alerts, which stdout counts too).
  assert.is(count('slack', 'error') + count('file', 'error') + count('stdout', 'error'), 0);
  assert.is(count('file', 'ok'), 70 + dropAlerts.length);
  assert.is(count('stdout', 'ok'), 70 + dropAlerts.length);
  const latency = metricLines(body, 'enginesecurity_enginesidekick_output_delivery_seconds_count');
  assert.ok(
    latency.some((l) => l.includes('destination="webhook",status="error"')),
    'failed deliveries have latencies too',
  );
});

test.run();
