// Fuzz (issue 18, item 1): random requests over raw TCP to every API route — methods, path ids,
// query parameters, headers with control bytes, JSON/form/multipart bodies, Sentry envelopes,
// gzip bombs and truncated gzip — each answered below 500 with nothing logged as an internal
// error, and the server still serving after all of them; and the body parsers on random bytes,
// which return or throw their own BodyError, nothing else. Fixed seeds, bounded runs; `npm run
// bench -- fuzz-api` runs the same generator for longer. On PGlite (the parsers and checks run
// before storage; the storage-specific answers are the table tests of pglite/postgres.test.ts).
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BodyError, MalformedBodyError, parseFormBody, parseJsonBody, parseMultipartBody } from '../../host/api/body.js';
import { parseEnvelope } from '../../host/api/collector/envelope.js';
import { startIngestionApi } from '../../support/api/ingestion.js';
import { fuzzApi, stillServing, type FuzzWorld } from '../../support/api/fuzz.js';
import { pgliteStorage } from '../../support/api/storage.js';

const SEED = 1818;

test('every generated request gets a clear answer below 500; the server keeps serving', async () => {
  const storage = pgliteStorage();
  const world: FuzzWorld = await startIngestionApi(storage);
  try {
    const { tried, failures } = await fuzzApi(world, { seed: SEED, numRuns: 400, timeLimitMs: 240_000 });
    assert.ok(tried >= 50, `tried ${tried}`);
    assert.equal(failures, [], `${failures.length} of ${tried} failed`);
    assert.ok(await stillServing(world), 'still serving');
  } finally {
    await world.api.close();
    await storage.shutdown();
  }
});

test('the body parsers return or throw their own errors on any bytes', () => {
  const bytes = fc.uint8Array({ maxLength: 600 }).map((a) => Buffer.from(a));
  const multipartish = fc
    .array(fc.tuple(fc.constantFrom('--b', '--b--', '\r\n', 'Content-Disposition: form-data; name="a"', '\r\n\r\n', 'x', '\u00ff', '--'), fc.boolean()), { maxLength: 12 })
    .map((parts) => Buffer.from(parts.map(([p]) => p).join(''), 'latin1'));
  const own = (err: unknown) => err instanceof BodyError || err instanceof MalformedBodyError;
  fc.assert(
    fc.property(fc.oneof(bytes, multipartish), (body) => {
      for (const parse of [() => parseJsonBody(body), () => parseFormBody(body), () => parseMultipartBody(body, 'multipart/form-data; boundary=b')]) {
        try {
          parse();
        } catch (err) {
          if (!own(err)) throw err;
        }
      }
      const env = parseEnvelope(body);
      if (env !== null) assert.ok(env.items.length <= 100, 'items capped');
    }),
    { seed: SEED, numRuns: 3000 },
  );
});

test.run();
