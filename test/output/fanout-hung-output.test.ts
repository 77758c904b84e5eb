// Fault injection: an output whose receiver accepts connections and never answers. Documented
// outcome (docs/security.md "Faults"): the forwarder keeps serving (POST / answers 200, /ping
// answers), the other outputs (stdout, slack) deliver every alert, the hung webhook's queue stays
// bounded (outputs.webhook.queuesize) and every alert it does not deliver is counted, as a
// failure after its timeout or as a drop: accepted = failed + dropped, 0 lost.
import { createServer, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'undici';
import { metricLines, startTestForwarder } from '../../support/forwarder.js';
import { startReceiver, until } from './receiver.js';

const ALERT = (n: number) => JSON.stringify({ output: `alert ${n}`, priority: 'Warning', rule: 'R', time: '2024-01-02T12:00:00Z', output_fields: { n }, source: 'syscall' });
const count = (body: string, name: string, labels: string) =>
  metricLines(body, name)
    .filter((l) => l.includes(labels))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);

test('a hung output: the forwarder keeps serving, the other outputs get every alert, the hung one counts every alert it does not deliver', async () => {
  const held: Socket[] = [];
  const hung = createServer((s) => held.push(s)); // reads nothing, answers nothing
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  const hungUrl = `http://127.0.0.1:${(hung.address() as { port: number }).port}/`;
  const slack = await startReceiver();
  const t = await startTestForwarder({ outputs: { webhook: { address: hungUrl, retries: 0, queuesize: 5, timeoutms: 1000 }, slack: { webhookurl: slack.url } } });
  const N = 40;
  try {
    for (let i = 0; i < N; i++) {
      const res = await request(`${t.fwd.url}/`, { method: 'POST', body: ALERT(i) });
      assert.is(res.statusCode, 200, await res.body.text());
    }
    assert.is(await (await request(`${t.fwd.url}/ping`)).body.text(), 'pong\n');
    // wide deadlines: slack gets the alerts one request at a time, and CI runs on a busy machine
    await t.waitForLines(N, 120_000);
    // slack also gets the forwarder's rate-limited drop alert about the hung webhook, between the
    // others: count the test's alerts by their text, each exactly once
    const delivered = () => slack.requests.map((r) => /alert (\d+)/.exec(r.body.toString('utf8'))?.[1]).filter((n) => n !== undefined);
    await until(() => new Set(delivered()).size === N, 'slack to get every alert', 120_000);
    assert.is(delivered().length, N, 'each alert reached slack once');
    let failed = 0;
    let dropped = 0;
    await until(
      async () => {
        const body = (await t.metrics.exposition()).body;
        failed = count(body, 'enginesecurity_enginesidekick_outputs_total', 'destination="webhook",status="error"');
        dropped = count(body, 'enginesecurity_enginesidekick_output_dropped_total', 'destination="webhook"');
        return failed + dropped === N;
      },
      'every alert of the hung webhook counted as failed or dropped',
      120_000,
    );
    // how many fail and how many drop depends on the machine's pace (the timeout runs meanwhile); none is lost either way
    assert.ok(failed > 0, 'the hung webhook was tried');
    assert.ok(held.length >= 1, 'the webhook did connect');
  } finally {
    await t.fwd.close();
    await slack.close();
    for (const s of held) s.destroy();
    await new Promise((resolve) => hung.close(resolve));
  }
});

test.run();
