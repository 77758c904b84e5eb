// The generator's audit poster retries what the API server's webhook backend retries: a reset
// connection (what a loaded webhook gives a client whose TLS handshake outlived its deadline) and
// the answers 429, 500 and 504; any other failure is final at once. Against a real HTTPS server
// with the engine's generated TLS material, which fails the first requests on purpose.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultConfig } from '../../host/config/config.js';
import { auditPoster } from '../../host/generator/index.js';
import { ensureWebhookTls } from '../../host/sources/audit/index.js';

type Answer = 'reset' | number;

/** An HTTPS server answering its requests in turn with `answers` (a status, or a reset socket), then 200; counts the requests. */
async function scriptedWebhook(answers: Answer[]) {
  const dir = mkdtempSync(join(tmpdir(), 'rae-post-'));
  const made = ensureWebhookTls({ stateDir: dir, webhook: defaultConfig({}).webhook });
  if (!made.ok) throw new Error(made.error);
  const tls = made.tls;
  let requests = 0;
  const server: Server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
    const answer = answers[requests++] ?? 200;
    req.resume();
    req.on('end', () => {
      if (answer === 'reset') req.socket.destroy();
      else res.writeHead(answer).end(answer === 200 ? '' : `status ${answer}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/orchestrator-audit`;
  return {
    post: auditPoster(url, { caPem: tls.caPem }, 60_000, { tries: 5, firstWaitMs: 10 }),
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('audit poster: a reset, a 429, a 500 and a 504 are sent again; the batch is delivered', async () => {
  const hook = await scriptedWebhook(['reset', 429, 500, 504]);
  try {
    await hook.post([{ kind: 'Event' }]);
    assert.is(hook.requests(), 5);
  } finally {
    await hook.close();
  }
});

test('audit poster: a 400 is final at once, and a webhook that keeps resetting fails after 5 tries', async () => {
  const refused = await scriptedWebhook([400]);
  try {
    await refused.post([]).then(
      () => assert.unreachable('a 400 was taken for success'),
      (err: Error) => assert.is(err.message, 'the webhook answered 400: status 400'),
    );
    assert.is(refused.requests(), 1);
  } finally {
    await refused.close();
  }
  const down = await scriptedWebhook(['reset', 'reset', 'reset', 'reset', 'reset', 'reset']);
  try {
    await down.post([]).then(
      () => assert.unreachable('a webhook that resets every connection accepted the batch'),
      (err: Error) => assert.match(err.message, /^cannot POST to https:.*: (socket hang up|read ECONNRESET) \(try 5 of 5\)$/),
    );
    assert.is(down.requests(), 5);
  } finally {
    await down.close();
  }
});

test.run();
