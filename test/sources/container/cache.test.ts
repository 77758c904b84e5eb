// The cache's policy without a runtime: absent sockets are skipped with one line each and make no
// lookup (nor load the CRI's gRPC client); a runtime that fails is logged once, retried with backoff and logged once when it
// recovers (then re-listed); the lookup queue is bounded and drops (counted) instead of waiting.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { ContainerCache, EngineSource, LazyCriSource, type MetadataSource } from '../../../host/sources/container/index.js';
import { containerRecord } from '../../helpers/container-record.js';

const WAIT_MS = 300_000;

async function until(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not ${what} within ${WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A scripted runtime: list() fails while `down`, get() answers from `known` (or hangs if `hang`). */
function fakeSource(socket: string) {
  const state = { down: 0, lists: 0, known: [] as string[], hang: false };
  const source: MetadataSource = {
    name: 'fake',
    socket,
    async list() {
      state.lists++;
      if (state.down > 0) {
        state.down--;
        throw new Error('connection refused');
      }
      return state.known.map((full) => containerRecord(full));
    },
    get(id) {
      if (state.hang) return new Promise(() => undefined);
      const full = state.known.find((k) => k.startsWith(id));
      return Promise.resolve(full ? containerRecord(full) : undefined);
    },
    watch: () => ({ close() {} }),
    close() {},
  };
  return { source, state };
}

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

test('absent runtimes: one line each at start, no lookup afterwards, no gRPC client loaded', async () => {
  const logs: string[] = [];
  const cache = new ContainerCache([new LazyCriSource('/nonexistent/containerd.sock'), new EngineSource('docker', '/nonexistent/docker.sock')], {}, (l) => logs.push(l));
  await cache.start();
  assert.equal(logs, ['container metadata: cri not found at /nonexistent/containerd.sock, skipped', 'container metadata: docker not found at /nonexistent/docker.sock, skipped']);
  assert.is(cache.get(A), undefined);
  assert.is(cache.stats.lookups, 0);
  cache.close();
  // grpc-js is CommonJS: once imported, it is in the require cache
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('@grpc'));
  assert.equal(loaded, [], 'the CRI client is loaded without a CRI socket');
});

test('a failing runtime: one line, retried with backoff, one line when it recovers, then listed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-cache-'));
  writeFileSync(join(dir, 'sock'), '');
  const { source, state } = fakeSource(join(dir, 'sock'));
  state.down = 4;
  state.known = [A];
  const logs: string[] = [];
  const cache = new ContainerCache([source], { backoffMs: 5, maxBackoffMs: 20 }, (l) => logs.push(l));
  try {
    await cache.start();
    assert.not.ok(cache.isUp('fake'));
    await until('recovered', () => cache.isUp('fake'));
    assert.is(state.lists, 5, 'four failures, then the list that worked');
    assert.equal(logs, ['container metadata: fake failed (connection refused); retrying with backoff', `container metadata: fake at ${join(dir, 'sock')} recovered: 1 containers`]);
    assert.is(cache.peek(A)?.name, 'n-aaaa');
  } finally {
    cache.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the lookup queue is bounded: past it, get() drops and counts instead of waiting', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-cache-'));
  writeFileSync(join(dir, 'sock'), '');
  const { source, state } = fakeSource(join(dir, 'sock'));
  const cache = new ContainerCache([source], { queueSize: 2, concurrency: 1 });
  try {
    await cache.start();
    state.hang = true;
    const ids = ['1', '2', '3', '4', '5'].map((c) => c.repeat(12));
    for (const id of ids) assert.is(cache.get(id), undefined);
    // one in flight (hanging), two queued, two dropped
    assert.is(cache.stats.dropped, 2);
    assert.is(cache.stats.lookups, 1);
  } finally {
    cache.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a known id is answered from the map; the event-less lookup finds B later', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-cache-'));
  writeFileSync(join(dir, 'sock'), '');
  const { source, state } = fakeSource(join(dir, 'sock'));
  state.known = [A];
  const cache = new ContainerCache([source]);
  try {
    await cache.start();
    assert.is(cache.get(A)?.fullId, A);
    state.known.push(B);
    assert.is(cache.get(B.slice(0, 12)), undefined);
    await until('B looked up', () => cache.peek(B) !== undefined);
    assert.is(cache.stats.found, 1);
  } finally {
    cache.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
