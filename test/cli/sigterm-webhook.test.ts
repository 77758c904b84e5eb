// Fault injection: SIGTERM while the API server is posting audit batches. Documented outcome
// (docs/webhook.md "Stopping", docs/security.md "Faults"): a batch answered 200 has been
// evaluated before the process exits; a batch sent after the stop began gets 503 or a refused
// or reset connection, and the API server sends it again. So no batch is both acknowledged and
// lost. A real `rae run` (audit source only, one rule matching every event, so each evaluated
// event is one alert line naming its auditID) takes batches from 8 concurrent senders; SIGTERM
// comes after the first batches are acknowledged; every auditID of every 200 must be on stdout.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'undici';
import { webhookClient } from '../../host/generator/post.js';
import { freePort } from '../../support/real-servers.js';
import { startRae } from '../helpers/rae-run.js';

const RULE = `- rule: Every audit event
  desc: one alert per evaluated event
  condition: ka.auditid != ""
  output: seen %ka.auditid
  priority: Warning
  source: k8s_audit
`;

test('SIGTERM during webhook batches: every batch answered 200 is evaluated; the others got a non-2xx or a failed connection', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rae-sigterm-'));
  const port = await freePort();
  writeFileSync(join(tmp, 'rules.yaml'), RULE);
  const cfg = join(tmp, 'run.yaml');
  writeFileSync(cfg, `rules:\n  builtIn: []\n  files: [${join(tmp, 'rules.yaml')}]\nforwarder:\n  enabled: false\napi:\n  enabled: false\nwebhook:\n  port: ${port}\n`);
  const rae = startRae(['--config', cfg, '--state-dir', join(tmp, 'state')]);
  try {
    await rae.waitLog(/\bready\b/);
    const { caPem: ca, certPem: cert, keyPem: key } = webhookClient(join(tmp, 'state', 'webhook-tls'));
    const agent = new Agent({ connect: { ca, cert, key }, connections: 8 });
    const acknowledged: string[] = [];
    const outcomes = new Map<string, number>();
    let stopAt = 20; // SIGTERM once this many batches are acknowledged
    let stopped = false;
    const sender = async (s: number) => {
      for (let b = 0; b < 400; b++) {
        const ids = Array.from({ length: 50 }, (_, i) => `s${s}-b${b}-e${i}`);
        const body = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', items: ids.map((id) => ({ auditID: id, stage: 'ResponseComplete', verb: 'get', requestURI: '/api', user: { username: 'u' } })) });
        const status = await request(`https://127.0.0.1:${port}/orchestrator-audit`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent }).then(
          async (r) => (await r.body.text(), r.statusCode),
          () => 0,
        );
        const key = status === 0 ? 'connection failed' : String(status);
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        if (status === 200) acknowledged.push(...ids);
        if (status === 200 && --stopAt === 0) {
          stopped = true;
          rae.child.kill('SIGTERM');
        }
        if (status !== 200 && status !== 429 && stopped) return; // the engine is going: stop sending
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, s) => sender(s)));
    const code = await rae.stop();
    await agent.close();
    assert.is(code, 0, rae.stderr());
    assert.ok(stopped, 'SIGTERM was sent');
    const seen = new Set(rae.alerts.map((a) => String(a.output_fields['ka.auditid'])));
    const lost = acknowledged.filter((id) => !seen.has(id));
    assert.is(lost.length, 0, `${lost.length} acknowledged events lost (first ${lost[0]}); outcomes ${JSON.stringify([...outcomes])}`);
    assert.ok(acknowledged.length >= 20 * 50, `${acknowledged.length} acknowledged`);
    assert.ok(
      [...outcomes.keys()].some((k) => k !== '200'),
      `some batch was refused after the stop: ${JSON.stringify([...outcomes])}`,
    );
    assert.match(rae.stderr(), /run: webhook drained in \d+ ms/);
  } finally {
    await rae.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
});

test.run();
