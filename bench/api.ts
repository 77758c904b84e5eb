// Scenario `api`: requests/s and p99 latency of `GET .../error_tracking/settings` and
// `POST .../error_tracking/client_keys` on PGlite and on a real PostgreSQL server (a throwaway
// cluster on loopback, as the API tests start it). Bounded: a fixed number of requests per
// endpoint with a fixed number of concurrent connections, all to 127.0.0.1.
import { Pool } from 'undici';
import { pgliteStorage, postgresStorage, type Storage } from '../support/api/storage.js';
import { seedWorld, startTestApi } from '../support/api/api.js';
import { figure, progress } from './report.js';

const REQUESTS = 3000;
const CONCURRENCY = 16;

async function load(pool: Pool, method: 'GET' | 'POST', path: string, headers: Record<string, string>): Promise<{ perS: number; p99: number; status: Map<number, number> }> {
  const latencies: number[] = [];
  const status = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      const t0 = performance.now();
      const res = await pool.request({ method, path, headers });
      await res.body.dump();
      latencies.push(performance.now() - t0);
      status.set(res.statusCode, (status.get(res.statusCode) ?? 0) + 1);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { perS: latencies.length / seconds, p99: latencies[Math.floor(latencies.length * 0.99)]!, status };
}

async function bench(storage: Storage): Promise<void> {
  const api = await startTestApi(storage);
  try {
    const world = await seedWorld(api.db);
    const base = `/api/v4/projects/${world.project.id}/error_tracking`;
    const auth = world.auth('maintainer');
    const pool = new Pool(api.url.replace(/\/api\/v4$/, ''), { connections: CONCURRENCY });
    const put = await pool.request({ method: 'PUT', path: `${base}/settings`, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ active: true, integrated: true }) });
    await put.body.dump();
    if (put.statusCode !== 200) throw new Error(`PUT settings answered ${put.statusCode}`);
    for (const [name, method, path] of [
      ['get_settings', 'GET', `${base}/settings`],
      ['post_client_keys', 'POST', `${base}/client_keys`],
    ] as const) {
      await load(pool, method, path, auth); // warm-up pass
      const r = await load(pool, method, path, auth);
      const expected = method === 'GET' ? 200 : 201;
      const ok = r.status.get(expected) ?? 0;
      progress(`${storage.name} ${method} ${path}: ${[...r.status].map(([s, n]) => `${n}x${s}`).join(' ')}`);
      if (ok !== REQUESTS) throw new Error(`${name} on ${storage.name}: only ${ok} of ${REQUESTS} answered ${expected}`);
      figure('api', `${name}_requests_per_s_${storage.name}`, r.perS, 'requests/s', { requests: REQUESTS, concurrency: CONCURRENCY });
      figure('api', `${name}_p99_ms_${storage.name}`, r.p99, 'ms');
    }
    await pool.close();
  } finally {
    await api.close();
    await storage.shutdown();
  }
}

export async function run(): Promise<void> {
  await bench(pgliteStorage());
  const pg = postgresStorage();
  if ('unavailable' in pg) {
    progress(`postgres: unavailable (${pg.unavailable}); no postgres figures`);
    return;
  }
  await bench(pg);
}
