// Signals to a real `rae run` under load (issue 19, item 2): audit events posted without pause to
// the HTTPS webhook, and kernel events from `cat` of a canary file that a test rule matches.
// SIGHUP reloads (a rules file changed before it is live after it, the process keeps serving);
// SIGTERM and SIGINT stop after draining. Whatever the signal, every audit event the webhook
// answered 200 is evaluated: each one names itself (sig-<n>) and a rule alerts on every one.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditEvent } from '../../host/generator/audit-events.js';
import { auditPoster, webhookClient, type WebhookClient } from '../../host/generator/post.js';
import { startRae, type RaeRun } from '../helpers/rae-run.js';
import { kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('signals.test.ts');
const run_ = gate.run ? test : test.skip;
const root = mkdtempSync(join(tmpdir(), 'rae-signals-'));
/** Every `rae run` the file started: killed by pid at the end whatever a test did, so a failure leaves none behind. */
const started: RaeRun[] = [];
/** Kills `rae` (SIGKILL) unless it has ended; resolves once it has. */
async function reap(rae: RaeRun): Promise<void> {
  if (rae.child.exitCode !== null || rae.child.signalCode !== null) return;
  const exited = new Promise((resolve) => rae.child.once('exit', resolve));
  rae.child.kill('SIGKILL');
  await exited;
}
test.after(async () => {
  await Promise.all(started.map(reap));
  rmSync(root, { recursive: true, force: true });
});

/** The rules file: one audit rule on every posted event, and version `v`'s rule on the canary file. */
function rules(canary: string, v: string): string {
  return `- rule: Sig audit count
  desc: every event the test posts
  condition: ka.target.name startswith "sig-"
  output: posted %ka.target.name
  priority: Notice
  source: k8s_audit
- rule: Sig canary ${v}
  desc: the canary file opened (rules version ${v})
  condition: evt.type in (open, openat, openat2) and fd.name = "${canary}"
  output: canary ${v} opened by %proc.name
  priority: Notice
  source: syscall
`;
}

interface Load {
  /** Names of the events the webhook answered 200. */
  accepted: Set<string>;
  posted: Set<string>;
  /** Names posted without an answer (connection reset, client timeout): each may or may not have been evaluated. */
  unanswered: Set<string>;
  /** Resolves once `n` more events than now are accepted. */
  more(n: number): Promise<void>;
  /** Stops posting and catting; resolves when both loops are done. */
  stop(): Promise<void>;
}

/**
 * Posts batches of 200 events from three concurrent posters and cats the canary, until stopped or
 * the engine stops. Each poster behaves as the API server's webhook backend does on a busy node: a
 * batch answered 429 (queue full) is sent again after the Retry-After second; a batch without an
 * answer (connection reset or refused, client timeout) is given up and the poster goes on; only a
 * 503 (stopping) or the engine's exit ends it. So a slow engine slows the load, never ends it.
 */
function startLoad(rae: RaeRun, url: string, client: WebhookClient, canary: string): Load {
  // The client waits for an answer with a wide margin: a loaded engine is slow, not gone.
  const post = auditPoster(url, client, 300_000);
  const accepted = new Set<string>();
  const posted = new Set<string>();
  const unanswered = new Set<string>();
  const ended = () => rae.child.exitCode !== null || rae.child.signalCode !== null;
  let seq = 0;
  let running = true;
  let failure: Error | undefined;
  const poster = async () => {
    while (running && !ended()) {
      const names = Array.from({ length: 200 }, () => `sig-${++seq}`);
      for (const n of names) posted.add(n);
      const events = names.map((name) => auditEvent({ verb: 'get', resource: 'configmaps', namespace: 'default', name }));
      for (;;) {
        const err = await post(events).then(
          () => undefined,
          (e: Error) => e,
        );
        if (err === undefined) for (const n of names) accepted.add(n);
        else if (/answered 503/.test(err.message))
          return; // refused: the engine is stopping
        else if (/answered 429/.test(err.message)) {
          if (!running || ended()) return; // not accepted, and the load is over
          await new Promise((r) => setTimeout(r, 1000)); // Retry-After: 1, then the same batch again
          continue;
        } else if (!/answered \d+/.test(err.message)) {
          for (const n of names) unanswered.add(n);
          await new Promise((r) => setTimeout(r, 100));
        } else {
          failure = err; // any other answer is a defect the test reports
          return;
        }
        break;
      }
    }
  };
  const catter = async () => {
    while (running && rae.child.exitCode === null && rae.child.signalCode === null) await new Promise((resolve) => spawn('cat', [canary], { stdio: 'ignore' }).on('exit', resolve));
  };
  const loops = Promise.all([poster(), poster(), poster(), catter()]);
  return {
    accepted,
    posted,
    unanswered,
    async more(n) {
      const want = accepted.size + n;
      const deadline = Date.now() + 600_000;
      while (accepted.size < want) {
        if (failure) throw failure;
        if (Date.now() > deadline || ended()) throw new Error(`load: ${accepted.size} of ${want} events accepted\n${rae.stderr()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      running = false;
      await loops;
      if (failure) throw failure;
    },
  };
}

/** `rae run` on a fresh state directory with the test rules only; the load's endpoints once ready. */
async function start(name: string): Promise<{ rae: RaeRun; canary: string; rulesFile: string; cfg: string; url: string; client: WebhookClient; forwarder: string }> {
  const dir = join(root, name);
  const canary = join(root, `${name}-canary.txt`);
  const rulesFile = join(root, `${name}-rules.yaml`);
  const cfg = join(root, `${name}.yaml`);
  writeFileSync(canary, 'canary\n');
  writeFileSync(rulesFile, rules(canary, 'v1'));
  writeFileSync(cfg, `rules:\n  builtIn: []\n  files: [${rulesFile}]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\n`);
  const rae = startRae(['--config', cfg, '--state-dir', join(dir, 'state')]);
  started.push(rae);
  await rae.waitLog(/run: ready/);
  const url = (await rae.waitLog(/run: webhook listening on (\S+)/))[1]!;
  const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
  assert.match(rae.stderr(), 'module: source syscall started');
  return { rae, canary, rulesFile, cfg, url, client: webhookClient(join(dir, 'state', 'webhook-tls')), forwarder };
}

/** The names alerted by the counting rule. */
const alerted = (rae: RaeRun) => new Set(rae.alerts.filter((a) => a.rule === 'Sig audit count').map((a) => String(a.output_fields['ka.target.name'])));

/** A counter's value in the Prometheus text. */
async function counter(forwarder: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${forwarder}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

run_('signals: SIGHUP under audit and kernel load reloads the changed rules file, keeps serving, loses no accepted event', async () => {
  const { rae, canary, rulesFile, cfg, url, client, forwarder } = await start('hup');
  try {
    await hup(rae, canary, rulesFile, cfg, url, client, forwarder);
  } finally {
    await reap(rae);
  }
});

/** The SIGHUP case's steps on its running `rae`. */
async function hup(rae: RaeRun, canary: string, rulesFile: string, cfg: string, url: string, client: WebhookClient, forwarder: string): Promise<void> {
  const load = startLoad(rae, url, client, canary);
  try {
    await rae.waitAlerts((as) => as.some((a) => a.rule === 'Sig canary v1'), 'the v1 canary alert');
    await load.more(1000);
    writeFileSync(rulesFile, rules(canary, 'v2'));
    const mark = rae.stderr().length;
    rae.child.kill('SIGHUP');
    await rae.waitLog(/run: reload done in \d+ ms: the new ruleset is live/, mark);
    // The new rule judges the kernel events once the reload is in force (interpreter, then WASM).
    await rae.waitAlerts((as) => as.some((a) => a.rule === 'Sig canary v2'), 'the v2 canary alert after SIGHUP');
    await load.more(1000);
  } finally {
    await load.stop();
  }
  assert.equal([rae.child.exitCode, rae.child.signalCode], [null, null], 'rae run still runs');
  assert.ok(load.accepted.size >= 2000, `${load.accepted.size} events accepted`);
  // Every accepted event is evaluated once: alerted by the counting rule and counted by the engine.
  // A batch posted without an answer (reset, timeout under load) may have been evaluated too, once.
  const evaluated = () => counter(forwarder, 'enginesecurity_engine_events_evaluated_total', 'source="k8s_audit"');
  await rae.waitAlerts(() => [...load.accepted].every((n) => alerted(rae).has(n)), 'an alert for every accepted event', 600_000);
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline && (await evaluated()) !== alerted(rae).size) await new Promise((r) => setTimeout(r, 50));
  assert.is(await evaluated(), alerted(rae).size, 'each evaluated event alerted once');
  assert.equal(
    [...alerted(rae)].filter((n) => !load.accepted.has(n) && !load.unanswered.has(n)),
    [],
    'only accepted (or unanswered) events evaluated',
  );
  assert.is((await fetch(`${forwarder}/healthz`)).status, 200);
  assert.match(rae.stderr(), /resources: ruleset loaded in \d+ ms: 2 rules/);

  // A key that takes a restart: logged, the run keeps its value; the unchanged rules stay.
  writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('webhook:\n  port: 0', 'webhook:\n  port: 1'));
  let mark = rae.stderr().length;
  rae.child.kill('SIGHUP');
  await rae.waitLog(/run: reload done in \d+ ms: the ruleset is unchanged/, mark);
  assert.match(rae.stderr().slice(mark), 'run: reload: webhook.port changed in the configuration; that takes a restart');
  // An invalid rules file: reported with its location, the running ruleset (v2) keeps alerting.
  writeFileSync(rulesFile, rules(canary, 'v3').replace(/priority: Notice\n {2}source: syscall/, 'priority: Urgent\n  source: syscall'));
  mark = rae.stderr().length;
  rae.child.kill('SIGHUP');
  await rae.waitLog(/run: reload refused after \d+ ms: the new ruleset is invalid/, mark);
  assert.match(rae.stderr().slice(mark), `${rulesFile}:`);
  const before = rae.alerts.filter((a) => a.rule === 'Sig canary v2').length;
  await new Promise((resolve) => spawn('cat', [canary], { stdio: 'ignore' }).on('exit', resolve));
  await rae.waitAlerts((as) => as.filter((a) => a.rule === 'Sig canary v2').length > before, 'a v2 canary alert after the refused reload');
  assert.not.ok(rae.alerts.some((a) => a.rule === 'Sig canary v3'));
  assert.is(await rae.stop(), 0, rae.stderr());
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  run_(`signals: ${signal} under audit and kernel load evaluates every accepted event and logs the drain`, async () => {
    const { rae, canary, url, client } = await start(signal.toLowerCase());
    const load = startLoad(rae, url, client, canary);
    try {
      await rae.waitAlerts((as) => as.some((a) => a.rule === 'Sig canary v1'), 'the v1 canary alert');
      await load.more(2000);
      const exited = new Promise((resolve) => rae.child.on('exit', resolve));
      rae.child.kill(signal);
      assert.is(await exited, 0, rae.stderr());
    } finally {
      await load.stop().finally(() => reap(rae));
    }
    assert.match(rae.stderr(), /run: webhook drained in \d+ ms: \d+ accepted audit events evaluated \(\d+ were queued at the stop\)/);
    assert.match(rae.stderr(), new RegExp(`run: ${signal} received, stopping[^]*run: stopped in \\d+ ms`));
    // Every event answered 200 was evaluated before the exit; a batch whose answer the stop cut
    // off may be evaluated too, but nothing that was not posted.
    const got = alerted(rae);
    const missing = [...load.accepted].filter((n) => !got.has(n));
    assert.equal(missing, [], `${missing.length} of ${load.accepted.size} accepted events not evaluated`);
    assert.equal(
      [...got].filter((n) => !load.posted.has(n)),
      [],
    );
  });
}

test.run();
