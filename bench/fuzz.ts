// Scenario `fuzz`: the boundary fuzz targets of the tests (support/fuzz/), each run longer
// than in npm test: a fixed seed per run, a case budget and a time limit per target. Prints one
// JSON line per target: {"scenario":"fuzz","name":"<target>_failures","value":N,...} with the
// cases tried, the records/events accepted and the first counterexample when there is one.
// Other fuzz scenarios (the error-tracking API's) live in their own bench files.
import { fuzzForwarder } from '../support/fuzz/forwarder.js';
import { fuzzKernelDecoder } from '../support/fuzz/kernel.js';
import { fuzzResources } from '../support/fuzz/resources.js';
import type { FuzzBounds, FuzzReport } from '../support/fuzz/run.js';
import { fuzzWebhook } from '../support/fuzz/webhook.js';
import { figure, progress } from './report.js';

/** Seed of this run: RAE_FUZZ_SEED, else the clock (printed, so a failure can be replayed). */
const SEED = Number(process.env.RAE_FUZZ_SEED ?? Date.now() % 2 ** 31);
/** Wall time per target, seconds (RAE_FUZZ_SECONDS, default 60). */
const SECONDS = Number(process.env.RAE_FUZZ_SECONDS ?? 60);

const TARGETS: Array<[string, (b: FuzzBounds) => Promise<FuzzReport | undefined>, number]> = [
  ['webhook', fuzzWebhook, 20_000],
  ['forwarder', fuzzForwarder, 50_000],
  ['kernel_decoder', fuzzKernelDecoder, 200_000],
  ['resources', fuzzResources, 5_000],
];

export async function run(): Promise<void> {
  for (const [name, fuzz, numRuns] of TARGETS) {
    progress(`${name}: seed ${SEED}, up to ${numRuns} cases or ${SECONDS} s`);
    const t0 = performance.now();
    const r = await fuzz({ seed: SEED, numRuns, timeMs: SECONDS * 1000 });
    if (!r) {
      progress(`${name}: skipped (the probe addon is not built)`);
      continue;
    }
    const seconds = (performance.now() - t0) / 1000;
    figure('fuzz', `${name}_failures`, r.failures, 'count', { cases: r.cases, accepted: r.accepted, seed: r.seed, seconds: Number(seconds.toFixed(1)), ...(r.counterexample ? { counterexample: r.counterexample } : {}) });
  }
}
