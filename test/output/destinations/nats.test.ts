// The NATS output against a real nats-server (Debian's nats-server, started privately on a
// loopback port): a subscriber with the `nats` client receives the falcosidekick payload on
// falcosidekick's subject; the server stopped mid-stream counts failures and drops without
// holding up stdout, and delivery resumes when it is back on the same port.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Msg, type NatsConnection } from 'nats';
import { startNats, waitFor, type RealServer } from '../../../support/real-servers.js';
import { SAMPLE, metric, outcomes, sampleOutputPrefix, startWithOutput } from './sample.js';
import type { Alert } from '../../../host/output/alert.js';

async function subscriber(server: RealServer, subject: string): Promise<{ nc: NatsConnection; got: Msg[] }> {
  const nc = await connect({ servers: `nats://127.0.0.1:${server.port}`, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  const got: Msg[] = [];
  const sub = nc.subscribe(subject);
  void (async () => {
    for await (const m of sub) got.push(m);
  })();
  await nc.flush(); // the subscription is registered before anything is published
  return { nc, got };
}

test('an alert arrives on falco.<priority>.<rule> as falcosidekick payload JSON', async () => {
  const server = await startNats();
  let sub: Awaited<ReturnType<typeof subscriber>> | undefined;
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    sub = await subscriber(server, 'falco.>');
    const fwd = (t = await startWithOutput('nats', { hostport: `nats://127.0.0.1:${server.port}` }));
    fwd.fwd.submit(SAMPLE);
    const got = sub.got;
    await waitFor(() => got.length > 0, 'the message');
    await waitFor(async () => (await outcomes(fwd, 'nats', 'ok')) === 1, 'the delivery counted');
    const m = got[0] as Msg;
    assert.is(m.subject, 'falco.critical.terminal_shell_in_container_a_b');
    const p = JSON.parse(m.string());
    assert.match(p.uuid, /^[0-9a-f-]{36}$/);
    assert.match(p.output, sampleOutputPrefix());
    assert.equal(
      { ...p, uuid: 'u', output: 'o' },
      {
        uuid: 'u',
        output: 'o',
        priority: 'Critical',
        rule: SAMPLE.rule,
        time: '2025-06-06T11:18:41.38257Z',
        output_fields: { 'container.id': 'abc123', 'evt.time': 1749208721382570000, 'k8s.ns.name': 'prod', 'proc.name': 'bash', 'proc.pid': 4242, 'proc.tty': true, 'user.name': 'root' },
        source: 'syscall',
        tags: ['container', 'mitre_execution', 'shell'],
        hostname: 'node-1',
      },
    );
  } finally {
    await t?.fwd.close();
    await sub?.nc.close();
    await server.dispose();
  }
});

const numbered = (i: number): Alert => ({ ...SAMPLE, rule: `Rule ${i}`, outputFields: { 'proc.pid': i } });

test('nats-server stopped mid-stream: failures and drops counted, stdout unaffected, delivery resumes after a restart on the same port', async () => {
  const server = await startNats();
  let sub: Awaited<ReturnType<typeof subscriber>> | undefined;
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    sub = await subscriber(server, 'falco.>');
    const got = sub.got;
    const fwd = (t = await startWithOutput('nats', { hostport: `nats://127.0.0.1:${server.port}`, retries: 0, queuesize: 5, timeoutms: 2000 }, true));
    const rulesSeen = () => new Set(got.map((m) => JSON.parse(m.string()).rule as string));
    fwd.fwd.submit(numbered(0));
    await waitFor(() => rulesSeen().has('Rule 0'), 'the first delivery');

    await server.stop();
    const errorsBefore = await outcomes(fwd, 'nats', 'error');
    // 20 alerts in one tick: 5 fit the queue, 15 are dropped; the 5 fail (the server is down).
    for (let i = 1; i <= 20; i++) fwd.fwd.submit(numbered(i));
    await waitFor(async () => (await outcomes(fwd, 'nats', 'error')) - errorsBefore >= 5, 'the queued alerts to fail');
    assert.ok((await metric(fwd, 'enginesecurity_enginesidekick_output_dropped_total')).includes('enginesecurity_enginesidekick_output_dropped_total{destination="nats"} 15'));
    // Detection output is not held up by the dead output: every alert reached stdout.
    const lines = await fwd.waitForLines(21, 300_000);
    for (let i = 0; i <= 20; i++)
      assert.ok(
        lines.some((l) => JSON.parse(l).rule === `Rule ${i}`),
        `stdout has Rule ${i}`,
      );
    assert.match(fwd.logs.join('\n'), /forwarder: nats output failing: /, fwd.logs.join('\n'));

    await server.restart();
    // Keep detecting until the output has reconnected and the (reconnected) subscriber sees a new alert.
    let i = 100;
    await waitFor(async () => {
      fwd.fwd.submit(numbered(++i));
      await new Promise((r) => setTimeout(r, 100));
      return [...rulesSeen()].some((r) => Number(r.slice(5)) > 100);
    }, 'delivery after the restart');
    assert.match(fwd.logs.join('\n'), /forwarder: nats output recovered/);
  } finally {
    await t?.fwd.close();
    await sub?.nc.close();
    await server.dispose();
  }
});

test.run();
