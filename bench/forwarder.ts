// Scenario `forwarder`: requests/s of `POST /test` and `POST /` (a Falco JSON alert) against the
// real forwarder on loopback, with p99 latency. The stdout output writes into a counting sink so
// the benchmark's own stdout keeps only figure lines. Bounded: fixed request counts.
import { Writable } from 'node:stream';
import { Pool } from 'undici';
import { defaultConfig } from '../host/config/config.js';
import { startForwarder } from '../host/forwarder/index.js';
import { createMetrics } from '../host/metrics/index.js';
import { figure, progress } from './report.js';

const REQUESTS = 20_000;
const CONCURRENCY = 16;
const ALERT = JSON.stringify({
  hostname: 'node-1',
  output: '12:00:00.000000001: Warning Sensitive file opened for reading by non-trusted program (file=/etc/shadow)',
  output_fields: { 'evt.time': 1704196800000000001, 'fd.name': '/etc/shadow', 'proc.name': 'cat', 'user.name': 'root' },
  priority: 'Warning',
  rule: 'Read sensitive file untrusted',
  source: 'syscall',
  tags: ['filesystem', 'mitre_credential_access'],
  time: '2024-01-02T12:00:00.000000001Z',
});

async function load(pool: Pool, path: string, body: string | undefined): Promise<{ perS: number; p99: number; ok: number }> {
  const latencies: number[] = [];
  let ok = 0;
  let next = 0;
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      const t0 = performance.now();
      const res = await pool.request({ method: 'POST', path, headers, body });
      await res.body.dump();
      latencies.push(performance.now() - t0);
      if (res.statusCode === 200) ok++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { perS: latencies.length / seconds, p99: latencies[Math.floor(latencies.length * 0.99)]!, ok };
}

export async function run(): Promise<void> {
  const config = defaultConfig({});
  config.forwarder = { ...config.forwarder, port: 0, queueSize: 100_000 };
  let lines = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const b of chunk) if (b === 10) lines++;
      cb();
    },
  });
  const fwd = await startForwarder({ config, metrics: createMetrics({ processMetrics: false }), log: () => {}, hostname: 'bench', stdout: sink });
  const pool = new Pool(fwd.url, { connections: CONCURRENCY });
  try {
    for (const [name, path, body] of [
      ['test', '/test', undefined],
      ['input', '/', ALERT],
    ] as const) {
      await load(pool, path, body); // warm-up pass
      const r = await load(pool, path, body);
      progress(`${path}: ${r.ok}/${REQUESTS} answered 200, ${lines} alert lines written so far`);
      if (r.ok !== REQUESTS) throw new Error(`${path}: only ${r.ok} of ${REQUESTS} requests answered 200`);
      figure('forwarder', `${name}_requests_per_s`, r.perS, 'requests/s', { requests: REQUESTS, concurrency: CONCURRENCY });
      figure('forwarder', `${name}_p99_ms`, r.p99, 'ms');
    }
  } finally {
    await pool.close();
    await fwd.close();
  }
}
