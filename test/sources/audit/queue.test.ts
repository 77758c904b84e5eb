// The audit queue's consumer: batches are evaluated in arrival order, back to back while the
// turn's time budget lasts, and the consumer yields to I/O (other callbacks run) once a turn has
// used its budget; a batch is counted against the bound until it has been evaluated.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMetrics } from '../../../host/metrics/index.js';
import { AuditQueue } from '../../../host/sources/audit/queue.js';
import type { SourceEvent } from '../../../host/engine/source-event.js';

const batch = (id: string): SourceEvent[] => [{ source: 'k8s_audit', timeNs: 0n, fields: { field: () => id } }];

/** Offers three batches, then queues an I/O-turn marker; returns the order things ran in. */
async function order(turnMs: number): Promise<string[]> {
  const seen: string[] = [];
  const q = new AuditQueue({
    capacity: 10,
    capacityBytes: 1 << 20,
    metrics: createMetrics({ processMetrics: false }),
    log: () => {},
    turnMs,
    evaluate: (events) => {
      seen.push(String(events[0]!.fields.field({} as never)));
      return events.length;
    },
  });
  for (const id of ['a', 'b', 'c']) assert.ok(q.offer(batch(id), 100));
  setImmediate(() => seen.push('io'));
  await q.idle();
  assert.is(q.length, 0);
  await new Promise((resolve) => setImmediate(resolve)); // the marker has run by now either way
  return seen;
}

test('queue: within the turn budget every waiting batch is evaluated before other callbacks run', async () => {
  assert.equal(await order(60_000), ['a', 'b', 'c', 'io']);
});

test('queue: a spent turn budget yields to other callbacks between batches, order kept', async () => {
  assert.equal(await order(0), ['a', 'io', 'b', 'c']);
});

test('queue: a batch counts against the bound until evaluated; a refused batch leaves nothing behind', async () => {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const q = new AuditQueue({ capacity: 2, capacityBytes: 1 << 20, metrics: createMetrics({ processMetrics: false }), log: () => {}, evaluate: async () => (await gate, 1) });
  assert.ok(q.offer(batch('a'), 10));
  assert.ok(q.offer(batch('b'), 10));
  assert.ok(q.full);
  assert.not.ok(q.offer(batch('c'), 10));
  assert.is(q.length, 2);
  release();
  await q.idle();
  assert.is(q.length, 0);
  assert.ok(q.offer(batch('c'), 10));
  await q.idle();
});

test.run();
