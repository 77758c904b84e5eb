// The watched resources directory fuzzed with a fixed seed (support/fuzz/resources.ts says
// what is done to it and the property): partial writes, random YAML, huge files, links, FIFOs;
// never an exception, every rejection located, no secret quoted, and the directory keeps being
// served. `npm run bench -- fuzz` runs it for longer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fuzzResources } from '../../support/fuzz/resources.js';

test('resources fuzz: located rejections only, the directory keeps being served (seed 18)', async () => {
  const r = await fuzzResources({ seed: 18, numRuns: 40 });
  assert.is(r.failures, 0, r.counterexample);
  assert.is(r.cases, 40);
});

test.run();
