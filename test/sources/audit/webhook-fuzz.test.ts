// The audit webhook fuzzed over its real TLS server with a fixed seed (support/fuzz/webhook.ts
// says what is sent and the property): a documented 4xx or a 200 that accounts for every item,
// never a 500, and every accepted event evaluated. `npm run bench -- fuzz` runs it for longer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fuzzWebhook } from '../../../support/fuzz/webhook.js';

test('webhook fuzz: documented answers only, every accepted event evaluated (seed 18)', async () => {
  const r = await fuzzWebhook({ seed: 18, numRuns: 150 });
  assert.is(r.failures, 0, r.counterexample);
  assert.ok(r.accepted! > 10, `only ${r.accepted} accepted`);
  assert.is(r.cases, 150);
});

test.run();
