// End to end, as the issue asks: start `rae run` (as root: the probe, /etc/shadow), run
// `rae event-generator run`, and find every performed action's rule in rae run's stdout. Actions
// that cannot work on this machine are printed with their reason and counted. The audit half goes
// through the real HTTPS webhook; the syscall half needs rae run's kernel source: while that
// source is not running, the syscall test fails and says so (it is never skipped).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ActionOutcome } from '../../host/generator/index.js';
import { parseOutcomes, startGenerator } from '../helpers/generator.js';
import { startRae, type RaeRun } from '../helpers/rae-run.js';
import { tempDir } from '../helpers/temp-dir.js';

const root = tempDir('rae-e2e-');
const state = join(root, 'state');
let rae: RaeRun;
let outcomes: ActionOutcome[] = [];

/** Rules of performed actions of `source` that are not (yet) in rae run's stdout. */
async function missingRules(source: ActionOutcome['source']): Promise<string[]> {
  const want = outcomes.filter((o) => o.source === source && o.status === 'performed').map((o) => o.rule);
  const missing = () => want.filter((r) => !rae.alerts.some((a) => a.rule === r));
  await rae.waitAlerts(() => missing().length === 0, `${source} alerts`, 300_000).catch(() => undefined);
  return missing();
}

test('e2e: rae run starts with the default rules and the webhook', async () => {
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\n');
  rae = startRae(['--config', cfg, '--state-dir', state]);
  await rae.waitLog(/run: ready/);
});

test('e2e: rae event-generator run performs every action that can work here', async () => {
  const [, url] = rae.stderr().match(/run: webhook listening on (\S+)/)!;
  const r = await startGenerator(['run', '--json', '--sleep', '50', '--webhook-url', url!, '--ca', join(state, 'webhook-tls', 'ca.crt')]).done;
  outcomes = parseOutcomes(r.stdout);
  const unavailable = outcomes.filter((o) => o.status === 'unavailable');
  process.stderr.write(`e2e: ${outcomes.length} actions, ${outcomes.length - unavailable.length} performed, ${unavailable.length} cannot work here:\n`);
  for (const o of unavailable) process.stderr.write(`  ${o.action} (${o.rule}): ${o.reason}\n`);
  assert.equal(
    outcomes.filter((o) => o.status === 'failed'),
    [],
  );
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stderr, `event-generator: ${outcomes.length} action(s): ${outcomes.length - unavailable.length} performed, ${unavailable.length} cannot work here, 0 failed`);
  assert.equal(
    outcomes.filter((o) => o.source === 'k8s_audit' && o.status !== 'performed'),
    [],
  );
});

test("e2e: every audit action's rule is in rae run's stdout", async () => {
  assert.equal(await missingRules('k8s_audit'), []);
});

test("e2e: every performed syscall action's rule is in rae run's stdout", async () => {
  const missing = await missingRules('syscall');
  const performed = outcomes.filter((o) => o.source === 'syscall' && o.status === 'performed').length;
  const started = [...rae.stderr().matchAll(/module: source (\S+) started/g)].map((m) => m[1]);
  const probe = rae
    .stderr()
    .split('\n')
    .filter((l) => /probe|kernel|ebpf/i.test(l));
  assert.equal(
    missing,
    [],
    `${missing.length} of ${performed} performed syscall actions have no alert. Sources rae run started: ${started.join(', ') || 'none'}` +
      `${probe.length > 0 ? `; about the kernel source: ${probe.join(' | ')}` : '; rae run says nothing about a kernel (syscall) source'}`,
  );
});

test('e2e: rae run stops cleanly', async () => {
  assert.is(await rae.stop(), 0, rae.stderr());
});

test.run();
