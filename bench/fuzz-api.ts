// Scenario `fuzz-api` (also run by `npm run bench -- fuzz`): the API fuzz of test/api/fuzz.test.ts
// for longer — RAE_FUZZ_API_RUNS requests (default 5000) or RAE_FUZZ_API_SECONDS (default 600),
// seed RAE_FUZZ_API_SEED (default: a new one, printed so a failure can be replayed) — against a
// real server on PGlite. Prints one JSON line: cases tried, failures (each failing request on
// stderr), answers by status, and whether the server still served at the end.
import { startIngestionApi } from '../support/api/ingestion.js';
import { fuzzApi, stillServing } from '../support/api/fuzz.js';
import { pgliteStorage } from '../support/api/storage.js';
import { figure, progress } from './report.js';

export async function run(): Promise<void> {
  const runs = Number(process.env.RAE_FUZZ_API_RUNS ?? 5000);
  const seconds = Number(process.env.RAE_FUZZ_API_SECONDS ?? 600);
  const seed = Number(process.env.RAE_FUZZ_API_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const storage = pgliteStorage();
  const world = await startIngestionApi(storage);
  try {
    progress(`fuzz-api: seed ${seed}, up to ${runs} requests or ${seconds} s`);
    const t0 = performance.now();
    const result = await fuzzApi(world, { seed, numRuns: runs, timeLimitMs: seconds * 1000 });
    const elapsed = (performance.now() - t0) / 1000;
    for (const f of result.failures) progress(`failure: ${JSON.stringify(f)}`);
    figure('fuzz-api', 'cases', result.tried, 'requests', {
      failures: result.failures.length,
      seed,
      seconds: Number(elapsed.toFixed(1)),
      statuses: result.statuses,
      stillServing: await stillServing(world),
    });
  } finally {
    await world.api.close();
    await storage.shutdown();
  }
}
