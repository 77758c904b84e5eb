// The MQTT output (falcosidekick's `mqtt`): each alert's falcosidekick payload JSON published
// on `topic` (default falco/events) with `qos` and `retained`, client id `falcosidekick-xxxxxx`
// as falcosidekick names itself, `user`/`password` when both are set, `checkcert` for
// ssl:// brokers. One connection kept (the `mqtt` client reconnects every second); a publish
// counts once the client library confirms it (qos 0: written to the socket, qos 1/2: the
// broker's acknowledgement). While disconnected an attempt fails at once, so the client never
// queues an alert that a retry would publish again; a qos 1/2 publish that gets no
// acknowledgement in time (the broker went away before the client noticed) is taken out of the
// client's store, so an attempt counted as failed is not delivered later behind the count's back.
import { randomUUID } from 'node:crypto';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import type { OutputSettings } from './settings.js';
import { withDeadline } from './deadline.js';
import { deliveryUuid, sidekickJson } from './sidekick-payload.js';
import type { Delivery, OutputContext, Sender } from './types.js';

/** mqtt.js' URL for falcosidekick's broker address (tcp:// and ssl:// as paho names them). */
export function mqttUrl(broker: string): string {
  return broker.replace(/^ssl:\/\//, 'mqtts://');
}

/** Takes the publish whose callback is `onAck` out of the client's store: it is not resent on reconnect. */
function forgetPublish(client: MqttClient, onAck: (err?: Error) => void): void {
  for (const [id, pending] of Object.entries(client.outgoing)) {
    if (pending.cb === onAck) client.removeOutgoingMessage(Number(id));
  }
}

/** The MQTT transport. */
export function createMqttSender(s: OutputSettings, _ctx: OutputContext): Sender {
  const broker = mqttUrl(s.string('broker'));
  const timeoutMs = s.number('timeoutms');
  const topic = s.string('topic');
  const qos = s.number('qos');
  if (qos !== 0 && qos !== 1 && qos !== 2) throw new Error(`forwarder.outputs.mqtt.qos: expected 0, 1 or 2, not ${qos}`);
  const retain = s.bool('retained');
  const options: IClientOptions = {
    clientId: `falcosidekick-${randomUUID().slice(0, 6)}`,
    reconnectPeriod: 1000,
    connectTimeout: timeoutMs,
    queueQoSZero: false,
    rejectUnauthorized: s.bool('checkcert'),
  };
  if (s.string('user') !== '' && s.string('password') !== '') {
    options.username = s.string('user');
    options.password = s.string('password');
  }
  const client = connect(broker, options);
  const connectedOnce = new Promise<void>((resolve) => client.once('connect', () => resolve()));
  let lastError = 'not connected yet';
  client.on('error', (err) => (lastError = err.message));
  client.on('offline', () => (lastError = `${broker} unreachable`));
  return {
    async send(batch, signal) {
      // Alerts of the first moments wait for the first connection (up to timeoutms).
      await withDeadline(connectedOnce, timeoutMs, signal);
      if (!client.connected) return `not connected to ${broker}: ${lastError}`;
      const d = batch[0] as Delivery;
      let onAck: (err?: Error) => void = () => undefined;
      const published = new Promise<void>((resolve, reject) => (onAck = (err) => (err ? reject(err) : resolve())));
      client.publish(topic, sidekickJson(d.alert, deliveryUuid(d)), { qos, retain }, onAck);
      const result = await withDeadline(published, timeoutMs, signal);
      // a failed attempt's publish, if the client still holds it (an acknowledged one it does not)
      if (result !== undefined) forgetPublish(client, onAck);
      return result;
    },
    async close() {
      await client.endAsync(true);
    },
  };
}
