// The forwarder's server fuzzed with a fixed seed (support/fuzz/forwarder.ts says what is
// sent and the property): documented statuses only, never a 500, every accepted alert delivered
// to the stdout output. `npm run bench -- fuzz` runs it for longer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fuzzForwarder } from '../../support/fuzz/forwarder.js';

test('forwarder fuzz: documented answers only, every accepted alert delivered (seed 18)', async () => {
  const r = await fuzzForwarder({ seed: 18, numRuns: 300 });
  assert.is(r.failures, 0, r.counterexample);
  assert.ok(r.accepted! > 10, `only ${r.accepted} accepted`);
  assert.is(r.cases, 300);
});

test.run();
