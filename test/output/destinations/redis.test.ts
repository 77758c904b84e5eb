// The Redis output against a real redis-server (Debian's, started privately on a loopback port):
// the falcosidekick payload appended to the list `falco` (the default) or stored in a hash under
// the alert's uuid (storagetype hashmap), read back with the `redis` client.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient } from 'redis';
import { startRedis, waitFor } from '../../../support/real-servers.js';
import { SAMPLE, outcomes, sampleOutputPrefix, startWithOutput } from './sample.js';

test('list (default): RPUSH of the payload JSON onto key falco, in order', async () => {
  const server = await startRedis();
  const reader = createClient({ url: `redis://127.0.0.1:${server.port}` });
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    await reader.connect();
    const fwd = (t = await startWithOutput('redis', { address: `127.0.0.1:${server.port}` }));
    fwd.fwd.submit(SAMPLE);
    fwd.fwd.submit({ ...SAMPLE, rule: 'Second', priority: 'Notice' });
    await waitFor(async () => (await outcomes(fwd, 'redis', 'ok')) === 2, 'two deliveries');
    const items = (await reader.lRange('falco', 0, -1)).map((x) => JSON.parse(x));
    assert.equal(
      items.map((p) => [p.rule, p.priority]),
      [
        [SAMPLE.rule, 'Critical'],
        ['Second', 'Notice'],
      ],
    );
    assert.match(items[0].output, sampleOutputPrefix());
    assert.equal(items[0].output_fields['proc.pid'], 4242);
    assert.equal([items[0].hostname, items[0].source, items[0].tags, items[0].time], ['node-1', 'syscall', ['container', 'mitre_execution', 'shell'], '2025-06-06T11:18:41.38257Z']);
    assert.is.not(items[0].uuid, items[1].uuid);
  } finally {
    await t?.fwd.close();
    reader.destroy();
    await server.dispose();
  }
});

test('hashmap: HSET <key> <uuid> <payload> in the configured database', async () => {
  const server = await startRedis();
  const reader = createClient({ url: `redis://127.0.0.1:${server.port}`, database: 3 });
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    await reader.connect();
    const fwd = (t = await startWithOutput('redis', { address: `127.0.0.1:${server.port}`, storagetype: 'hashmap', key: 'alerts', database: 3 }));
    fwd.fwd.submit(SAMPLE);
    await waitFor(async () => (await outcomes(fwd, 'redis', 'ok')) === 1, 'the delivery');
    const hash = await reader.hGetAll('alerts');
    const [[uuid, json]] = Object.entries(hash) as [[string, string]];
    assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.is(JSON.parse(json).uuid, uuid);
    assert.is(JSON.parse(json).rule, SAMPLE.rule);
  } finally {
    await t?.fwd.close();
    reader.destroy();
    await server.dispose();
  }
});

test('an unknown storagetype is refused at start with the key', async () => {
  try {
    await startWithOutput('redis', { address: '127.0.0.1:1', storagetype: 'stream' });
    assert.unreachable('should have been refused');
  } catch (err) {
    assert.match((err as Error).message, /forwarder\.outputs\.redis\.storagetype/);
  }
});

test.run();
