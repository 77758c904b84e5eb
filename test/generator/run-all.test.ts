// `rae event-generator run --all` as the acceptance asks: one run of every action of
// every set (host syscall actions, container actions, audit actions) against a real `rae run`
// (root, real kernel) with the three built-in syscall sets, every rule matching, the rules their
// set ships disabled turned on by a rules file (as a user would: override enabled: replace), and
// its HTTPS webhook. Container actions run in containers of a private dockerd (the generator's
// configuration names that socket only). Every action that can run here is performed, its rule is
// in rae run's stdout, and the generator's own table says it was detected (from the forwarder's
// /metrics). Actions that cannot run here give one of the known reasons. Then `--loop`: repeated
// until SIGINT, with the summary.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ACTIONS, ruleOrigin, type ActionOutcome } from '../../host/generator/index.js';
import { buildImages, dockerPresent, imageToolsPresent, leftovers, netnsNames, runtimesAvailable, startDockerd, type PrivateEngine } from '../../support/containers/index.js';
import { parseOutcomes, startGenerator } from '../helpers/generator.js';
import { everyRuleSection, startRae, type RaeRun } from '../helpers/rae-run.js';
import { kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('run-all.test.ts');
const ready = gate.run && runtimesAvailable() && imageToolsPresent() && dockerPresent();
const t = ready ? test : test.skip;
const root = mkdtempSync(join(tmpdir(), 'rae-run-all-'));
const state = join(root, 'state');
/** The generator's configuration: the private dockerd's socket only. */
const genCfg = join(root, 'generator.yaml');
let docker: PrivateEngine | undefined;
let netns: string[] = [];
let rae: RaeRun;
let metricsUrl = '';
let webhook: string[] = [];
let outcomes: ActionOutcome[] = [];
let table = '';
/** How many of rae run's alerts came before the generator ran: only later ones count. */
let alertsBefore = 0;

/**
 * Why an action may not run on this node, each with the action it may concern: the node does
 * not resolve the Kubernetes API server's name, or none of the miner pool names (fd.sip.name
 * comes from the node's resolver, as in libsinsp).
 */
const ALLOWED_UNAVAILABLE: Array<[RegExp, RegExp]> = [
  [/^syscall\.ContactK8SAPIServerFromContainer$/, /does not resolve kubernetes\.default\.svc\.cluster\.local/],
  [/^syscall\.DetectOutboundConnectionsToCommonMinerPoolPorts$/, /miner pool names .* resolves on this node/],
];

test.before(async () => {
  if (!ready) return;
  netns = netnsNames();
  docker = await startDockerd(buildImages(join(root, 'images')));
  writeFileSync(genCfg, `containers:\n  docker:\n    enabled: true\n    sockets: [${JSON.stringify(docker.socket)}]\n  cri:\n    enabled: false\n  podman:\n    enabled: false\n`);
});

test.after(async () => {
  const code = await rae?.stop();
  if (docker) {
    await docker.stop();
    assert.equal(leftovers(docker.dir, docker.cgroups, netns), []);
  }
  rmSync(root, { recursive: true, force: true });
  if (rae) assert.is(code, 0, rae.stderr());
});

t('run --all: rae run starts with the three syscall sets, every rule enabled, and the webhook', async () => {
  const cfg = join(root, 'config.yaml');
  writeFileSync(
    cfg,
    `forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\n${everyRuleSection(
      root,
      ACTIONS.map((a) => a.rule),
      ['orchestrator-audit'],
    )}containers:\n  docker:\n    enabled: true\n    sockets: [${JSON.stringify(docker!.socket)}]\n  cri:\n    enabled: false\n  podman:\n    enabled: false\n`,
  );
  rae = startRae(['--config', cfg, '--state-dir', state]);
  await rae.waitLog(/run: ready/);
  metricsUrl = `${rae.stderr().match(/run: forwarder listening on (\S+)/)![1]}/metrics`;
  webhook = ['--webhook-url', rae.stderr().match(/run: webhook listening on (\S+)/)![1]!, '--ca', join(state, 'webhook-tls', 'ca.crt')];
});

t('run --all: every action is performed in one run, unless it cannot work here for a known reason', async () => {
  alertsBefore = rae.alerts.length;
  const r = await startGenerator(['run', '--all', '--in-container', '-c', genCfg, '--json', '--sleep', '50ms', '--detect-wait', '60s', '--metrics-url', metricsUrl, ...webhook]).done;
  outcomes = parseOutcomes(r.stdout);
  table = r.stderr;
  assert.equal(
    outcomes.map((o) => o.action),
    ACTIONS.map((a) => a.name),
  );
  assert.equal(
    outcomes.filter((o) => o.status === 'failed'),
    [],
  );
  assert.is(r.code, 0, r.stderr);
  const unavailable = outcomes.filter((o) => o.status === 'unavailable');
  process.stderr.write(`run --all: ${outcomes.length} actions, ${outcomes.length - unavailable.length} performed, ${unavailable.length} cannot work here:\n`);
  for (const o of unavailable) process.stderr.write(`  ${o.action} (${o.rule}): ${o.reason}\n`);
  for (const o of unavailable)
    assert.ok(
      ALLOWED_UNAVAILABLE.some(([action, reason]) => action.test(o.action) && reason.test(o.reason!)),
      `${o.action}: ${o.reason}`,
    );
  for (const o of outcomes) assert.is(o.maturity, ruleOrigin(o.rule)?.maturity ?? 'sandbox', o.action);
});

t("run --all: every performed action's rule is in rae run's stdout", async () => {
  const want = [...new Set(outcomes.filter((o) => o.status === 'performed').map((o) => o.rule))];
  const missing = () => want.filter((r) => !rae.alerts.slice(alertsBefore).some((a) => a.rule === r));
  await rae.waitAlerts(() => missing().length === 0, 'the rules of the performed actions', 300_000).catch(() => undefined);
  assert.equal(missing(), []);
});

t("run --all: the generator's table says every performed action was detected", () => {
  const performed = outcomes.filter((o) => o.status === 'performed');
  const esc = (a: string) => a.replace('.', '\\.');
  for (const o of performed) assert.match(table, new RegExp(`^${esc(o.action)}\\s+${o.maturity}\\s+performed x1\\s+yes\\s`, 'm'), o.action);
  for (const o of outcomes.filter((x) => x.status === 'unavailable')) assert.match(table, new RegExp(`^${esc(o.action)}\\s+${o.maturity}\\s+unavailable\\s+-\\s`, 'm'), o.action);
  assert.match(table, `${outcomes.length} action(s) in 1 round(s): ${performed.length} performed, ${performed.length} detected, ${outcomes.length - performed.length} unavailable, 0 failed`);
});

t('run --all: --loop repeats until SIGINT, then prints the table', async () => {
  const g = startGenerator(['run', '^syscall\\.(SetSetuidorSetgidbit|DeleteOrRenameShellHistory)$', '--all', '--loop', '--sleep', '20ms', '--metrics-url', metricsUrl]);
  // Wait for the third round to start (the event itself, not a timer), then interrupt.
  const deadline = Date.now() + 300_000;
  while ((g.stdout().match(/^performed {3}syscall\.SetSetuidorSetgidbit/gm) ?? []).length < 3) {
    assert.ok(Date.now() < deadline, `the loop did not reach a third round: ${g.stdout()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  g.child.kill('SIGINT');
  const r = await g.done;
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stderr, 'event-generator: stopped by SIGINT');
  const rounds = Number(r.stderr.match(/2 action\(s\) in (\d+) round\(s\): 2 performed, 2 detected, 0 unavailable, 0 failed/)![1]);
  const performed = (r.stdout.match(/^performed {3}syscall\.SetSetuidorSetgidbit/gm) ?? []).length;
  assert.ok(rounds >= 3, r.stderr);
  assert.match(r.stderr, new RegExp(`^syscall\\.SetSetuidorSetgidbit\\s+incubating\\s+performed x${performed}\\s+yes\\s`, 'm'));
  // A round ends at the signal: the last one may have performed only the first action.
  assert.ok(rounds === performed || rounds === performed + 1, `${rounds} rounds, ${performed} performed`);
});

test.run();
