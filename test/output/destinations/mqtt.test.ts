// The MQTT output against a real mosquitto (Debian's, started privately on a loopback port): a
// subscriber with the `mqtt` client receives the falcosidekick payload on falco/events (the
// default topic) or a configured topic with the configured qos and retain flag.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import { startMosquitto, waitFor, type RealServer } from '../../../support/real-servers.js';
import { SAMPLE, outcomes, sampleOutputPrefix, startWithOutput } from './sample.js';

async function subscribe(server: RealServer, topic: string): Promise<{ client: MqttClient; got: IPublishPacket[] }> {
  const client = await connectAsync(`mqtt://127.0.0.1:${server.port}`, { reconnectPeriod: 0 });
  const got: IPublishPacket[] = [];
  client.on('message', (_topic, _payload, packet) => got.push(packet));
  await client.subscribeAsync(topic, { qos: 1 });
  return { client, got };
}

test('default topic falco/events, qos 0, not retained: the payload JSON arrives', async () => {
  const server = await startMosquitto();
  let sub: Awaited<ReturnType<typeof subscribe>> | undefined;
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    sub = await subscribe(server, '#');
    const got = sub.got;
    const fwd = (t = await startWithOutput('mqtt', { broker: `tcp://127.0.0.1:${server.port}` }));
    fwd.fwd.submit(SAMPLE);
    await waitFor(() => got.length === 1, 'the message');
    const m = got[0] as IPublishPacket;
    assert.equal([m.topic, m.qos, m.retain], ['falco/events', 0, false]);
    const p = JSON.parse(m.payload.toString());
    assert.match(p.output, sampleOutputPrefix());
    assert.equal([p.rule, p.priority, p.hostname, p.output_fields['k8s.ns.name']], [SAMPLE.rule, 'Critical', 'node-1', 'prod']);
    await waitFor(async () => (await outcomes(fwd, 'mqtt', 'ok')) === 1, 'the delivery counted');
  } finally {
    await t?.fwd.close();
    await sub?.client.endAsync();
    await server.dispose();
  }
});

test('qos 1 and retained: a subscriber that arrives later still gets the alert, flagged retained', async () => {
  const server = await startMosquitto();
  let sub: Awaited<ReturnType<typeof subscribe>> | undefined;
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('mqtt', { broker: `tcp://127.0.0.1:${server.port}`, topic: 'sec/falco', qos: 1, retained: true }));
    fwd.fwd.submit(SAMPLE);
    await waitFor(async () => (await outcomes(fwd, 'mqtt', 'ok')) === 1, 'the acknowledged publish');
    sub = await subscribe(server, 'sec/#');
    const got = sub.got;
    await waitFor(() => got.length === 1, 'the retained message');
    const m = got[0] as IPublishPacket;
    assert.equal([m.topic, m.qos, m.retain], ['sec/falco', 1, true]);
    assert.is(JSON.parse(m.payload.toString()).rule, SAMPLE.rule);
  } finally {
    await t?.fwd.close();
    await sub?.client.endAsync();
    await server.dispose();
  }
});

test.run();
