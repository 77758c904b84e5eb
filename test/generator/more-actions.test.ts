// The incubating and sandbox syscall actions (syscall-actions-more.ts), run for real against
// `rae run` (as root: the probe) with all three syscall sets loaded, every rule matching
// (ruleMatching all) and the sandbox rules that are `enabled: false` turned on by a rules file
// (as a user would, with override: enabled: replace): every action that can run here is
// performed, its rule is in rae run's stdout, and the generator's own table says so (read from
// the forwarder's /metrics). Actions that cannot run here are printed with their reason, which
// must be one of the known ones. Then `--loop`: repeated until SIGINT, with the summary.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ruleOrigin, type ActionOutcome } from '../../host/generator/index.js';
import { MORE_SYSCALL_ACTIONS } from '../../host/generator/syscall-actions-more.js';
import { startRae, type RaeRun } from '../helpers/rae-run.js';

const root = mkdtempSync(join(tmpdir(), 'rae-more-actions-'));
const names = MORE_SYSCALL_ACTIONS.map((a) => a.name.replace(/^syscall\./, ''));
const SELECT = `^syscall\\.(${names.join('|')})$`;
let rae: RaeRun;
let metricsUrl = '';
let outcomes: ActionOutcome[] = [];
let table = '';
/** How many of rae run's alerts came before the generator ran: only later ones count. */
let alertsBefore = 0;

/** Runs the generator as a separate process, as a user would. */
function generator(args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }>; stdout(): string } {
  const child = spawn(process.execPath, ['bin/rae.js', 'event-generator', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, stdout: () => stdout };
}

test('more actions: rae run starts with the stable, incubating and sandbox syscall sets', async () => {
  // The rules of these actions that their set ships disabled, enabled as a user would.
  const off = [...new Set(MORE_SYSCALL_ACTIONS.map((a) => a.rule))].filter((r) => ruleOrigin(r)?.enabled === false);
  assert.ok(off.length >= 3, off.join(', '));
  const enable = join(root, 'enable.yaml');
  writeFileSync(enable, off.map((r) => `- rule: ${r}\n  enabled: true\n  override:\n    enabled: replace\n`).join('\n'));
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, `forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\nrules:\n  builtIn: [syscall, syscall-incubating, syscall-sandbox]\n  ruleMatching: all\n  files: [${JSON.stringify(enable)}]\n`);
  rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')]);
  await rae.waitLog(/run: ready/);
  metricsUrl = `${rae.stderr().match(/run: forwarder listening on (\S+)/)![1]}/metrics`;
});

test('more actions: rae event-generator run --all performs every new action that can run here', async () => {
  alertsBefore = rae.alerts.length;
  const r = await generator(['run', SELECT, '--all', '--json', '--sleep', '50ms', '--detect-wait', '60s', '--metrics-url', metricsUrl]).done;
  outcomes = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ActionOutcome);
  table = r.stderr;
  assert.equal(
    outcomes.map((o) => o.action),
    MORE_SYSCALL_ACTIONS.map((a) => a.name),
  );
  assert.equal(
    outcomes.filter((o) => o.status === 'failed'),
    [],
  );
  assert.is(r.code, 0, r.stderr);
  const unavailable = outcomes.filter((o) => o.status === 'unavailable');
  process.stderr.write(`more actions: ${outcomes.length} actions, ${outcomes.length - unavailable.length} performed, ${unavailable.length} cannot work here:\n`);
  for (const o of unavailable) process.stderr.write(`  ${o.action} (${o.rule}): ${o.reason}\n`);
  // The only reasons: a container is needed, or (the miner pool action) none of the rule's pool
  // names resolves on this node.
  for (const o of unavailable) assert.match(o.reason!, /needs a container|resolves on this node/, o.action);
  assert.ok(outcomes.length - unavailable.length >= 25, `${outcomes.length - unavailable.length} performed`);
  for (const o of outcomes) assert.is(o.maturity, ruleOrigin(o.rule)!.maturity, o.action);
});

test("more actions: every performed action's rule is in rae run's stdout", async () => {
  const want = outcomes.filter((o) => o.status === 'performed').map((o) => o.rule);
  const missing = () => want.filter((r) => !rae.alerts.slice(alertsBefore).some((a) => a.rule === r));
  await rae.waitAlerts(() => missing().length === 0, 'the rules of the performed actions', 60_000).catch(() => undefined);
  assert.equal(missing(), []);
});

test("more actions: the generator's table says every performed action was detected", () => {
  const performed = outcomes.filter((o) => o.status === 'performed');
  for (const o of performed) assert.match(table, new RegExp(`^${o.action.replace('.', '\\.')}\\s+${o.maturity}\\s+performed x1\\s+yes\\s`, 'm'), o.action);
  for (const o of outcomes.filter((x) => x.status === 'unavailable')) assert.match(table, new RegExp(`^${o.action.replace('.', '\\.')}\\s+${o.maturity}\\s+unavailable\\s+-\\s`, 'm'), o.action);
  assert.match(table, `${outcomes.length} action(s) in 1 round(s): ${performed.length} performed, ${performed.length} detected, ${outcomes.length - performed.length} unavailable, 0 failed`);
});

test('more actions: --loop repeats until SIGINT, then prints the table', async () => {
  const g = generator(['run', '^syscall\\.(SetSetuidorSetgidbit|DeleteOrRenameShellHistory)$', '--all', '--loop', '--sleep', '20ms', '--metrics-url', metricsUrl]);
  // Wait for the third round to start (the event itself, not a timer), then interrupt.
  const deadline = Date.now() + 60_000;
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

test('more actions: rae run stops cleanly', async () => {
  assert.is(await rae.stop(), 0, rae.stderr());
});

test.run();
