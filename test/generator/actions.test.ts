// The event generator's actions: every audit action, POSTed by the generator to a real HTTPS
// audit webhook (generated TLS, verified with its CA) feeding the real DetectionEngine with the
// default built-in rules, fires exactly the rule `list` names for it (rule matching `first`);
// every action names a rule of the built-in sets; syscall actions leave nothing behind; the CLI
// lists and runs them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultConfig } from '../../host/config/config.js';
import { BUILTIN_SETS, builtinRulesFiles, DEFAULT_BUILTIN } from '../../host/engine/builtin.js';
import { loadRules } from '../../host/engine/index.js';
import { ACTIONS, auditPoster, maturityOf, NO_CONTAINER, runActions, selectActions } from '../../host/generator/index.js';
import { createMetrics } from '../../host/metrics/index.js';
import type { Alert } from '../../host/output/alert.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { ensureWebhookTls, startWebhook } from '../../host/sources/audit/index.js';
import { tempDir } from '../helpers/temp-dir.js';

test('generator: every action names a rule of the built-in sets, once per rule; the stable ones of the default sets, enabled', () => {
  const all = new Map(loadRules(builtinRulesFiles(BUILTIN_SETS).files).ruleset.rules.map((r) => [r.name, r]));
  const stable = new Map(loadRules(builtinRulesFiles(DEFAULT_BUILTIN).files).ruleset.rules.map((r) => [r.name, r]));
  for (const a of ACTIONS) {
    const r = all.get(a.rule);
    assert.ok(r, `${a.name}: no rule '${a.rule}'`);
    assert.is(r!.source, a.source, a.name);
    // The rule's maturity is its set's: stable exactly when the default sets define it.
    assert.is(maturityOf(a) === 'stable', stable.has(a.rule), a.name);
    if (maturityOf(a) === 'stable') assert.ok(stable.get(a.rule)!.enabled, `${a.name}: '${a.rule}' is disabled`);
  }
  assert.is(new Set(ACTIONS.map((a) => a.rule)).size, ACTIONS.length);
  assert.is(new Set(ACTIONS.map((a) => a.name)).size, ACTIONS.length);
  assert.ok(ACTIONS.filter((a) => a.source === 'k8s_audit').length >= 25);
  assert.ok(ACTIONS.filter((a) => a.source === 'syscall').length >= 70);
  assert.equal([...new Set(ACTIONS.map(maturityOf))].sort(), ['incubating', 'sandbox', 'stable']);
});

test('generator: selection by regular expression', () => {
  assert.equal(
    selectActions(/^syscall\.Ptrace/).map((a) => a.name),
    ['syscall.PtraceAttachedToProcess', 'syscall.PtraceAntiDebugAttempt'],
  );
  // Without `all`, only the actions of stable rules, as upstream without --all.
  assert.is(selectActions(undefined, { all: true }).length, ACTIONS.length);
  assert.equal(
    selectActions(),
    ACTIONS.filter((a) => maturityOf(a) === 'stable'),
  );
  assert.equal(selectActions(/^syscall\.WriteBelow/), []);
  assert.is(selectActions(/^syscall\.WriteBelow/, { all: true }).length, 5);
  assert.is(selectActions(/^k8saudit\./).length, ACTIONS.filter((a) => a.source === 'k8s_audit').length);
});

test('generator: every audit action, POSTed to the real webhook, fires exactly its rule', async () => {
  const alerts: Alert[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'h', onAlert: (a) => alerts.push(a) });
  const loaded = await engine.load(builtinRulesFiles(DEFAULT_BUILTIN).files);
  assert.ok(loaded.swapped);
  const stateDir = tempDir('rae-generator-');
  const settings = { ...defaultConfig({}).webhook, port: 0 };
  const material = ensureWebhookTls({ stateDir, webhook: settings });
  if (!material.ok) throw new Error(material.error);
  const webhook = await startWebhook({ webhook: settings, tls: material.tls, evaluate: (evs) => engine.evaluate(evs), metrics: createMetrics({ processMetrics: false }), log: () => {} });
  try {
    const client = { caPem: material.tls.caPem, certPem: material.tls.clientCertPem, keyPem: material.tls.clientKeyPem };
    const poster = auditPoster(webhook.url, client);
    const actions = selectActions(/^k8saudit\./);
    for (const a of actions) {
      alerts.length = 0;
      const [outcome] = await runActions([a], { poster, sleepMs: 0 });
      assert.is(outcome!.status, 'performed', outcome!.reason);
      await webhook.idle();
      assert.equal(
        alerts.map((x) => x.rule),
        [a.rule],
        a.name,
      );
      assert.is(alerts[0]!.source, 'k8s_audit');
    }
    // A webhook that refuses is a failed action with its answer, not a silent success.
    const wrong = auditPoster(webhook.url.replace('/orchestrator-audit', '/elsewhere'), client);
    const [failed] = await runActions([actions[0]!], { poster: wrong, sleepMs: 0 });
    assert.is(failed!.status, 'failed');
    assert.match(failed!.reason!, 'the webhook answered 404');
  } finally {
    await webhook.close();
    await engine.close();
  }
});

test('generator: without a webhook the audit actions are unavailable, with the reason', async () => {
  const out = await runActions(selectActions(/^k8saudit\.Create/), { auditUnavailable: 'no CA here', sleepMs: 0 });
  assert.ok(out.length > 5);
  assert.ok(out.every((o) => o.status === 'unavailable' && o.reason === 'no CA here'));
});

test('generator: syscall actions run for real and leave nothing behind', async () => {
  const root = tempDir('rae-generator-tmp-');
  const before = readdirSync('/dev/shm').filter((n) => n.startsWith('rae-event-generator-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = root;
  let outcomes: Awaited<ReturnType<typeof runActions>>;
  try {
    // Without the slow one (6 s) and the one that sends a packet off the host.
    outcomes = await runActions(selectActions(/^syscall\.(?!ReadSensitiveFileTrustedAfterStartup|DisallowedSsh)/), { sleepMs: 0 });
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  const failed = outcomes.filter((o) => o.status === 'failed');
  assert.equal(failed, []);
  const unavailable = outcomes.filter((o) => o.status === 'unavailable');
  for (const o of unavailable) assert.ok(o.reason && o.reason.length > 10, o.action);
  assert.ok(outcomes.filter((o) => o.status === 'performed').length >= 10, JSON.stringify(unavailable));
  assert.equal(readdirSync(root), []);
  assert.equal(
    readdirSync('/dev/shm').filter((n) => n.startsWith('rae-event-generator-')),
    before,
  );
});

test('generator: a run its process exits in the middle of (a signal, through the container host) leaves no temporary directory', () => {
  // container-host.ts answers SIGTERM by removing its containers, then process.exit: runActions'
  // finally never runs. Here the action itself exits the process, as that handler does mid-action.
  const root = tempDir('rae-generator-exit-');
  const generator = JSON.stringify(join(import.meta.dirname, '..', '..', 'host', 'generator', 'index.ts'));
  const script = `const { runActions } = await import(${generator});
await runActions([{ name: 'syscall.Exit', source: 'syscall', rule: 'r', description: 'd', run: async ({ tmp }) => { (await import('node:fs')).writeFileSync(tmp + '/file', ''); process.exit(143); } }]);`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, TMPDIR: root } });
  assert.is(r.status, 143, r.stderr);
  // (tsx keeps its cache in the TMPDIR too)
  assert.equal(
    readdirSync(root).filter((n) => n.startsWith('rae-event-generator-')),
    [],
  );
});

function rae(args: string[]) {
  return spawnSync(process.execPath, ['bin/rae.js', ...args], { encoding: 'utf8' });
}

test('generator: rae event-generator list names the rule of each action and its set; --all lists every set', () => {
  const list = (args: string[]) => {
    const r = rae(['event-generator', 'list', '--json', '--state-dir', tempDir('rae-generator-'), ...args]);
    assert.is(r.status, 0, r.stderr);
    return {
      stderr: r.stderr,
      rows: r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { action: string; rule: string; maturity: string; set: string; ruleEnabled: boolean; unavailable: string | null }),
    };
  };
  const { rows, stderr } = list([]);
  const stable = ACTIONS.filter((a) => maturityOf(a) === 'stable');
  assert.equal(
    rows.map((x) => [x.action, x.rule, x.maturity]),
    stable.map((a) => [a.name, a.rule, 'stable']),
  );
  // list makes no container: a container action is unavailable only when none is asked for
  assert.is(rows.find((x) => x.action === 'syscall.TerminalShellInContainer')!.unavailable, null);
  assert.is(list(['--containers', 'none']).rows.find((x) => x.action === 'syscall.TerminalShellInContainer')!.unavailable, NO_CONTAINER);
  assert.match(stderr, 'audit actions need the webhook: no webhook CA certificate at');
  const all = list(['--all']).rows;
  assert.equal(
    all.map((x) => [x.action, x.rule, x.maturity]),
    ACTIONS.map((a) => [a.name, a.rule, maturityOf(a)]),
  );
  assert.equal(
    all.find((x) => x.action === 'syscall.WriteBelowEtc'),
    { ...all.find((x) => x.action === 'syscall.WriteBelowEtc')!, set: 'syscall-sandbox', maturity: 'sandbox', ruleEnabled: true },
  );
  assert.equal(all.find((x) => x.action === 'syscall.ReadShellConfigurationFile')!.ruleEnabled, false);
  assert.equal(all.find((x) => x.action === 'syscall.NonSudoSetuid')!.set, 'syscall-incubating');
  const text = rae(['event-generator', 'list', 'PrivilegedPod']);
  assert.match(text.stdout, /^k8saudit\.CreatePrivilegedPod\s+stable\s+Create Privileged Pod\n$/);
  const sandbox = rae(['event-generator', 'list', '--all', 'ReadShellConfiguration']);
  assert.match(sandbox.stdout, /^syscall\.ReadShellConfigurationFile\s+sandbox\s+Read Shell Configuration File \(disabled by default in its set\)\n$/);
  assert.match(rae(['event-generator', 'list', 'WriteBelowEtc']).stderr, 'no action matches WriteBelowEtc among the actions of stable rules (--all for every set)');
});

test('generator: rae event-generator run without a CA counts the audit actions as unavailable; usage errors', () => {
  const r = rae(['event-generator', 'run', '^k8saudit\\.Secret', '--ca', '/nonexistent/ca.crt', '--sleep', '0']);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, 'unavailable k8saudit.SecretCreated -> K8s Secret Created: no webhook CA certificate at /nonexistent/ca.crt');
  assert.match(r.stderr, 'event-generator: 3 action(s): 0 performed, 3 cannot work here, 0 failed');
  assert.is(rae(['event-generator']).status, 2);
  assert.match(rae(['event-generator', 'explode']).stderr, "unknown subcommand 'explode' (list or run)");
  assert.match(rae(['event-generator', 'run', '(']).stderr, 'invalid REGEX');
  assert.match(rae(['event-generator', 'run', 'nothing-matches-this']).stderr, 'no action matches nothing-matches-this');
  assert.match(rae(['event-generator', 'run', '--sleep', 'soon']).stderr, "--sleep must be a duration (100ms, 1s, 1m30s) or whole milliseconds, not 'soon'");
  assert.match(rae(['event-generator', 'run', '^k8saudit\\.Secret', '--cert', '/nonexistent/client.crt']).stderr, '--cert and --key go together');
  // a client certificate given but unreadable: the audit actions say so
  const dir = mkdtempSync(join(tmpdir(), 'rae-generator-ca-'));
  try {
    writeFileSync(join(dir, 'ca.crt'), 'a placeholder: only read, never parsed, before the client certificate\n');
    const c = rae(['event-generator', 'run', '^k8saudit\\.SecretCreated$', '--ca', join(dir, 'ca.crt'), '--cert', '/nonexistent/client.crt', '--key', '/nonexistent/client.key', '--sleep', '0']);
    assert.match(c.stdout, 'unavailable k8saudit.SecretCreated -> K8s Secret Created: cannot read the client certificate /nonexistent/client.crt and key /nonexistent/client.key');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
