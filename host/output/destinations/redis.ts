// The Redis output (falcosidekick's `redis`): each alert's falcosidekick payload JSON stored
// under `key` (default falco) in database `database`: RPUSH onto a list (storagetype list, the
// default) or HSET field <uuid> of a hash (storagetype hashmap). One connection kept; node-redis
// reconnects by itself (100 ms doubling to 1 s), and with its offline queue disabled a command
// sent while disconnected fails at once instead of waiting to be replayed.
import { createClient } from 'redis';
import type { OutputSettings } from './settings.js';
import { withDeadline } from './deadline.js';
import { deliveryUuid, sidekickJson } from './sidekick-payload.js';
import type { Delivery, OutputContext, Sender } from './types.js';

/** The Redis transport. */
export function createRedisSender(s: OutputSettings, _ctx: OutputContext): Sender {
  const address = s.string('address');
  const key = s.string('key');
  const timeoutMs = s.number('timeoutms');
  const storage = s.string('storagetype').toLowerCase();
  if (storage !== 'list' && storage !== 'hashmap') throw new Error(`forwarder.outputs.redis.storagetype: expected list or hashmap, not ${JSON.stringify(s.string('storagetype'))}`);
  const client = createClient({
    url: `redis://${address}`,
    database: s.number('database'),
    username: s.string('username') || undefined,
    password: s.string('password') || undefined,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: (n: number) => Math.min(100 * 2 ** n, 1000) },
    disableOfflineQueue: true,
  });
  let lastError = 'not connected yet';
  client.on('error', (err: Error) => (lastError = err.message));
  const connectedOnce = new Promise<void>((resolve) => client.once('ready', () => resolve()));
  client.connect().catch((err: Error) => (lastError = err.message));
  return {
    async send(batch, signal) {
      // Alerts of the first moments wait for the first connection (up to timeoutms).
      await withDeadline(connectedOnce, timeoutMs, signal);
      if (!client.isReady) return `not connected to ${address}: ${lastError}`;
      const d = batch[0] as Delivery;
      const json = sidekickJson(d.alert, deliveryUuid(d));
      return withDeadline(storage === 'hashmap' ? client.hSet(key, deliveryUuid(d), json) : client.rPush(key, json), timeoutMs, signal);
    },
    async close() {
      client.destroy();
    },
  };
}
