// The real Sentry SDK for Node (@sentry/node) reports an exception with the errtrack_dsn of a
// key made through the API (served over HTTPS with a test certificate); the error is then
// listed, and once the key is deleted the SDK's events are refused.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { seedWorld, startTestApi, type TestApi, type World } from '../../../support/api/api.js';
import type { Storage } from '../../../support/api/storage.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { expectRes } from './access.js';

const CLIENT = fileURLToPath(new URL('../fixtures/sentry-client.mjs', import.meta.url));

/** The SDK program: one message (and optionally a tab and a user id) per line in, one JSON line of HTTP statuses out. */
export function sdkProgram(dsn: string, caFile: string): { report(message: string): Promise<number[]>; close(): Promise<number | null> } {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLIENT, dsn, caFile], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async report(message) {
      child.stdin.write(`${message}\n`);
      const next = await lines.next();
      if (next.done) throw new Error(`the SDK program ended: ${stderr}`);
      return (JSON.parse(next.value) as { statuses: number[] }).statuses;
    },
    close() {
      child.stdin.end();
      return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on('close', resolve)));
    },
  };
}

/** A suite with an HTTPS API on `storage` (a test certificate) and a seeded world, closed after it. */
export function httpsApiSuite(title: string, storage: Storage) {
  const s = suite<{ api: TestApi; w: World; tls: TestCert }>(title);
  s.before(async (ctx) => {
    ctx.tls = makeTestCert();
    ctx.api = await startTestApi(storage, {
      ca: ctx.tls.cert,
      configure: (c) => {
        c.api.tlsCertFile = ctx.tls.certFile;
        c.api.tlsKeyFile = ctx.tls.keyFile;
      },
    });
    ctx.w = await seedWorld(ctx.api.db);
  });
  s.after(async (ctx) => {
    await ctx.api?.close();
    ctx.tls?.remove();
  });
  return s;
}

/** Registers the Sentry SDK suite for one storage. */
export function sentrySdkSuite(storage: Storage): void {
  const s = httpsApiSuite(`api with the Sentry SDK for Node [${storage.name}]`, storage);

  s('an exception reported with a key DSN is listed; after the key is deleted it is refused', async ({ api, w, tls }) => {
    assert.match(api.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const h = w.auth('maintainer');
    const base = `/api/v4/projects/${encodeURIComponent(w.project.path)}/error_tracking`;
    expectRes(await api.call('PUT', `${base}/settings`, { headers: h, json: { active: true, integrated: true } }), 200);
    const key = (await api.call('POST', `${base}/client_keys`, { headers: h })).json as { id: number; public_key: string; errtrack_dsn: string };
    // no api.externalHost: the DSN names localhost and the port the API listens on; the test
    // certificate is for 127.0.0.1, so the SDK is pointed there
    const port = new URL(api.url).port;
    assert.is(key.errtrack_dsn, `https://${key.public_key}@localhost:${port}/errortracking/api/v1/projects/${w.project.id}`);
    const dsn = key.errtrack_dsn.replace(`@localhost:${port}/`, `@127.0.0.1:${port}/`);
    const sdk = sdkProgram(dsn, tls.certFile);
    try {
      const first = await sdk.report('cart is empty');
      assert.ok(first.length > 0 && first.every((c) => c === 200), `accepted: ${first}`);
      const errors = (await api.call('GET', `${base}/errors`, { headers: w.auth('reporter') })).json as Array<Record<string, unknown>>;
      assert.equal(
        errors.map((e) => [e.name, e.description, e.platform, e.event_count]),
        [['TypeError', 'cart is empty', 'node', 1]],
      );
      assert.match(String(errors[0]!.actor), /^checkout\(/);
      const events = await api.db.query<{ environment: string; release: string }>("SELECT environment, payload->>'release' AS release FROM error_tracking_error_events");
      assert.equal(events, [{ environment: 'test', release: 'rae-api-test@1' }]);

      expectRes(await api.call('DELETE', `${base}/client_keys/${key.id}`, { headers: h }), 200);
      const second = await sdk.report('cart is still empty');
      assert.ok(second.length > 0 && second.every((c) => c === 404), `refused: ${second}`);
      const after = (await api.call('GET', `${base}/errors`, { headers: w.auth('reporter') })).json as Array<Record<string, unknown>>;
      assert.equal(
        after.map((e) => [e.description, e.event_count]),
        [['cart is empty', 1]],
      );
    } finally {
      assert.is(await sdk.close(), 0, 'the SDK program exits cleanly');
    }
  });

  s.run();
}
