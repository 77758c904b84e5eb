// The MQTT output against a real mosquitto (Debian's, started privately on a loopback port): a
// subscriber with the `mqtt` client receives the falcosidekick payload on falco/events (the
// default topic) or a configured topic with the configured qos and retain flag. A qos 1 publish
// the broker never acknowledges is counted failed and not sent again after a reconnect; mosquitto
// cannot be made to withhold an acknowledgement, so that case runs against `withholdingBroker`, a
// small MQTT 3.1.1 server (CONNECT/CONNACK, PINGREQ/PINGRESP, PUBLISH recorded, never PUBACKed).
import { createServer, type Socket } from 'node:net';
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

/** A broker that accepts connections and records each PUBLISH's payload per connection, acknowledging none. */
async function withholdingBroker() {
  const connections: { socket: Socket; published: string[] }[] = [];
  const server = createServer((socket) => {
    const conn = { socket, published: [] as string[] };
    connections.push(conn);
    let buf = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        // fixed header: type byte, remaining length as a base-128 varint (MQTT 3.1.1 §2.2)
        let len = 0;
        let mult = 1;
        let i = 1;
        for (; i < buf.length && i <= 4; i++) {
          len += ((buf[i] as number) & 0x7f) * mult;
          mult *= 128;
          if (((buf[i] as number) & 0x80) === 0) break;
        }
        if (i >= buf.length || buf.length < i + 1 + len) return;
        const first = buf[0] as number;
        const type = first >> 4;
        const body = buf.subarray(i + 1, i + 1 + len);
        buf = buf.subarray(i + 1 + len);
        if (type === 1)
          socket.write(Buffer.from([0x20, 0x02, 0x00, 0x00])); // CONNECT -> CONNACK accepted
        else if (type === 12)
          socket.write(Buffer.from([0xd0, 0x00])); // PINGREQ -> PINGRESP
        else if (type === 3) {
          // PUBLISH: topic (length-prefixed), packet id when qos > 0, then the payload
          const topicLen = body.readUInt16BE(0);
          const hasId = (first & 0x06) !== 0;
          conn.published.push(body.subarray(2 + topicLen + (hasId ? 2 : 0)).toString());
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connections,
    close: () => {
      for (const c of connections) c.socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('qos 1 without an acknowledgement: counted failed within timeoutms, and not published again after the client reconnects', async () => {
  const broker = await withholdingBroker();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('mqtt', { broker: `tcp://127.0.0.1:${broker.port}`, qos: 1, retries: 0, timeoutms: 500 }));
    fwd.fwd.submit({ ...SAMPLE, rule: 'Unacknowledged' });
    await waitFor(() => broker.connections[0]?.published.length === 1, 'the first publish at the broker');
    await waitFor(async () => (await outcomes(fwd, 'mqtt', 'error')) === 1, 'the unacknowledged publish counted failed');
    (broker.connections[0] as { socket: Socket }).socket.destroy();
    await waitFor(() => broker.connections.length === 2, 'the client reconnecting');
    fwd.fwd.submit({ ...SAMPLE, rule: 'After the reconnect' });
    await waitFor(() => (broker.connections[1]?.published.length ?? 0) >= 1, 'a publish on the second connection');
    const rules = (broker.connections[1] as { published: string[] }).published.map((p) => JSON.parse(p).rule);
    assert.equal(rules, ['After the reconnect'], 'the failed alert is not sent again behind the count');
  } finally {
    await t?.fwd.close();
    await broker.close();
  }
});

test.run();
