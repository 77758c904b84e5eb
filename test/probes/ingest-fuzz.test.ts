// The production kernel record decoder (the C translator of probes/addon/ingest.c, called through
// the addon) fuzzed with truncated and corrupt records and random plans, fixed seed
// (support/fuzz/kernel.ts says what is sent and the property). Skipped, loudly, when the
// addon is not built (scripts/build-probe.sh); `npm run bench -- fuzz` runs it for longer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fuzzKernelDecoder } from '../../support/fuzz/kernel.js';

test('kernel decoder fuzz: no stray write or read, exactly the well-formed SYSCALL records translated (seed 18)', async () => {
  const r = await fuzzKernelDecoder({ seed: 18, numRuns: 400 });
  if (!r) {
    console.warn('SKIPPED: the probe addon is not built (scripts/build-probe.sh)');
    return;
  }
  assert.is(r.failures, 0, r.counterexample);
  assert.ok(r.accepted! > 100, `only ${r.accepted} records translated`);
  assert.is(r.cases, 400);
});

test.run();
