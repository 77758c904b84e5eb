// Every orchestrator audit sample of the corpus, posted as an EventList to the real webhook over
// TLS (verified with the generated ca.crt), evaluated by the DetectionEngine (its default
// evaluator) with the upstream k8s_audit_rules.yaml, gives exactly the alert lines that
// replayAlerts (`rae replay`'s reference interpreter path) gives for the same file.
process.env.TZ = 'UTC';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'undici';
import { replayAlerts } from '../../../host/cli/replay.js';
import { alertJson } from '../../../host/output/alert.js';
import { DetectionEngine } from '../../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../../host/sources/replay.js';
import { ensureWebhookTls } from '../../../host/sources/audit/index.js';
import { eventList, metricValue, startTestWebhook, type TestWebhook } from '../../../support/audit-webhook.js';
import { corpusPath, K8SAUDIT_SAMPLES } from '../../../support/corpus.js';

const SAMPLES = K8SAUDIT_SAMPLES;
const RULES = corpusPath('k8s_audit_rules.yaml');
const options = { ruleMatching: 'first' as const, minPriority: 'Debug' as const, hostname: 'test-node' };
const files = readdirSync(SAMPLES)
  .filter((f) => f.endsWith('.json'))
  .sort();

const lines: string[] = [];
const engine = new DetectionEngine({ ...options, onAlert: (a) => lines.push(alertJson(a)) });
let wh: TestWebhook;

/** The JSON objects of a sample (one document, or JSON lines), EventLists flattened to their items. */
function sampleItems(text: string): unknown[] {
  let docs: unknown[];
  try {
    docs = [JSON.parse(text)];
  } catch {
    docs = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as unknown);
  }
  return docs.flatMap((d) => ((d as { kind?: unknown }).kind === 'EventList' ? (d as { items: unknown[] }).items : [d]));
}

function replayLines(text: string): string[] {
  return replayAlerts(engine.ruleset!.ruleset, readReplayInput(text, 'audit').events, options).lines;
}

test.before(async () => {
  const loaded = await engine.load([{ name: 'k8s_audit_rules.yaml', text: readFileSync(RULES, 'utf8') }]);
  assert.ok(loaded.swapped);
  wh = await startTestWebhook((events) => engine.evaluate(events));
});
test.after(async () => {
  await wh.close();
  await engine.close();
});

test('webhook-corpus: there are samples, and the comparison is not vacuous', () => {
  assert.ok(files.length >= 40, `${files.length} samples`);
  const withAlerts = files.filter((f) => replayLines(readFileSync(join(SAMPLES, f), 'utf8')).length > 0);
  assert.ok(withAlerts.length >= 20, `${withAlerts.length} samples with alerts`);
});

for (const file of files) {
  test(`webhook-corpus: ${file} over TLS gives rae replay's alerts`, async () => {
    const text = readFileSync(join(SAMPLES, file), 'utf8');
    const items = sampleItems(text);
    lines.length = 0;
    const res = await wh.post(eventList(items));
    assert.is(res.status, 200, res.text);
    const body = JSON.parse(res.text) as { accepted: number; skipped: unknown[] };
    assert.is(body.accepted + body.skipped.length, items.length);
    await wh.webhook.idle();
    assert.equal(lines, replayLines(text));
  });
}

test('webhook-corpus: the whole corpus as one EventList gives every alert, in order', async () => {
  const texts = files.map((f) => readFileSync(join(SAMPLES, f), 'utf8'));
  lines.length = 0;
  const before = await metricValue(wh.metrics, 'enginesecurity_engine_events_evaluated_total', { source: 'k8s_audit' });
  const items = texts.flatMap(sampleItems);
  const res = await wh.post(eventList(items));
  assert.is(res.status, 200, res.text);
  const body = JSON.parse(res.text) as { accepted: number; skipped: Array<{ index: number; code: string }> };
  await wh.webhook.idle();
  assert.equal(lines, texts.flatMap(replayLines));
  // The corpus's one non-event ({"kind": 0}) is skipped and reported; the rest is evaluated.
  assert.equal(
    body.skipped.map((s) => s.code),
    ['not_an_event'],
  );
  assert.is(body.accepted, items.length - 1);
  assert.is(await metricValue(wh.metrics, 'enginesecurity_engine_events_evaluated_total', { source: 'k8s_audit' }), before + body.accepted);
});

test('webhook-corpus: a client without the CA, or with another CA, cannot connect', async () => {
  const doc = JSON.stringify(eventList([]));
  const bare = new Agent();
  const err1 = await request(wh.webhook.url, { method: 'POST', body: doc, headers: { 'content-type': 'application/json' }, dispatcher: bare }).catch((e: Error & { code?: string }) => e);
  assert.instance(err1, Error);
  assert.match((err1 as Error & { code?: string }).code ?? '', /CERT|SIGNATURE|ISSUER/);
  const otherDir = mkdtempSync(join(tmpdir(), 'rae-webhook-other-'));
  const other = ensureWebhookTls({ stateDir: otherDir, webhook: { address: '127.0.0.1', sysPrefix: 'd8', tlsCertFile: '', tlsKeyFile: '', tlsCaFile: '' } });
  assert.ok(other.ok);
  const wrong = new Agent({ connect: { ca: other.ok ? other.tls.caPem : '' } });
  const err2 = await request(wh.webhook.url, { method: 'POST', body: doc, headers: { 'content-type': 'application/json' }, dispatcher: wrong }).catch((e: Error) => e);
  assert.instance(err2, Error);
  await Promise.all([bare.close(), wrong.close()]);
  rmSync(otherDir, { recursive: true, force: true });
});

test.run();
