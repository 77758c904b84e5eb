// `rae event-generator run --in-container` end to end against a private dockerd and a private
// podman (root, real kernel, the real `rae run` following both, with the three built-in syscall
// sets, every rule matching, and the container actions' rules that their set ships disabled
// turned on by a rules file, as a user would):
// the generator finds the runtime through the configuration's containers section (pointing at
// one private socket only, never a system runtime), loads its busybox image offline, runs each
// container action inside its container, and removes the containers. Every performed action's
// rule fires with a container.id that is not the host's and the generator's container name and
// image; actions that cannot work here say why. A SIGTERM in the middle of a run removes the
// containers too.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ACTIONS, GENERATOR_IMAGE, GENERATOR_LABEL, NO_CONTAINER, type ActionOutcome } from '../../host/generator/index.js';
import { buildImages, dockerPresent, imageToolsPresent, leftovers, netnsNames, podmanPresent, runtimesAvailable, startDockerd, startPodman, type PrivateEngine } from '../../support/containers/index.js';
import { parseOutcomes, startGenerator } from '../helpers/generator.js';
import { everyRuleSection, startRae, type RaeRun } from '../helpers/rae-run.js';
import { kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('in-container.test.ts');
const ready = gate.run && runtimesAvailable() && imageToolsPresent() && dockerPresent() && podmanPresent();
const t = ready ? test : test.skip;
const root = mkdtempSync(join(tmpdir(), 'rae-in-container-'));
const CONTAINER_ACTIONS = ACTIONS.filter((a) => a.container);
const RUNTIMES = ['docker', 'podman'] as const;
type Runtime = (typeof RUNTIMES)[number];
/** The generator's configuration per runtime: that runtime's private socket only. */
const cfg: Record<Runtime, string> = { docker: join(root, 'docker.yaml'), podman: join(root, 'podman.yaml') };
const engines: Partial<Record<Runtime, PrivateEngine>> = {};
/** Per runtime: the run's outcomes and its containers' name prefix (rae-event-generator-<pid>-). */
const runs: Partial<Record<Runtime, { outcomes: ActionOutcome[]; prefix: string }>> = {};
let rae: RaeRun;
let netns: string[] = [];

/**
 * Rules of performed actions the engine cannot fire yet, checked to stay silent so that the day one
 * fires this list is updated. Empty: "Redirect STDOUT/STDIN to Network Connection in Container"
 * was here until the probe gave dup records the duplicated socket's fd.* facts (as libsinsp,
 * parsers.cpp parse_dup_exit; test/sources/syscall/dup.test.ts).
 */
const ENGINE_GAPS: string[] = [];

/** Ids of the containers the generator made that a private runtime still has. */
async function generatorContainers(e: PrivateEngine): Promise<string[]> {
  return (await e.cli(['ps', '-aq', '--filter', `label=${GENERATOR_LABEL}`])).split('\n').filter(Boolean);
}

/** A containers section with these sockets, the other runtimes off. */
const section = (docker: string[], podman: string[]) =>
  `containers:\n  docker:\n    enabled: ${docker.length > 0}\n    sockets: ${JSON.stringify(docker)}\n  cri:\n    enabled: false\n  podman:\n    enabled: ${podman.length > 0}\n    sockets: ${JSON.stringify(podman)}\n`;

test.before(async () => {
  if (!ready) return;
  netns = netnsNames();
  const images = buildImages(join(root, 'images'));
  engines.docker = await startDockerd(images);
  engines.podman = await startPodman(images);
  const [d, p] = [engines.docker.socket, engines.podman.socket];
  writeFileSync(cfg.docker, section([d], []));
  writeFileSync(cfg.podman, section([], [p]));
  // rae run follows both private runtimes, never a system one
  const raeCfg = join(root, 'rae.yaml');
  writeFileSync(
    raeCfg,
    `forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\n${everyRuleSection(
      root,
      CONTAINER_ACTIONS.map((a) => a.rule),
    )}${section([d], [p])}`,
  );
  rae = startRae(['--config', raeCfg, '--state-dir', join(root, 'state')]);
  await rae.waitLog(/run: ready/);
});

test.after(async () => {
  if (!ready) return rmSync(root, { recursive: true, force: true });
  const code = await rae?.stop();
  for (const e of [engines.docker, engines.podman]) {
    if (!e) continue;
    await e.stop();
    assert.equal(leftovers(e.dir, e.cgroups, netns), []);
  }
  rmSync(root, { recursive: true, force: true });
  assert.is(code, 0);
});

test('with --in-container and no runtime answering, the container actions are unavailable with the sockets tried', async () => {
  const none = join(root, 'none.yaml');
  const absent = join(root, 'no-such-dir', 'docker.sock');
  writeFileSync(none, section([absent], []));
  const r = await startGenerator(['run', '--in-container', '^syscall\\.TerminalShell', '--json', '--sleep', '0', '-c', none]).done;
  assert.is(r.code, 0, r.stderr);
  const [o] = parseOutcomes(r.stdout);
  assert.is(o!.status, 'unavailable');
  assert.is(o!.reason, `needs a container runtime with the Docker/Podman Engine API (containers.docker.sockets, containers.podman.sockets): docker ${absent}: absent`);
});

t('with --containers none the container actions are unavailable, with the reason', async () => {
  const r = await startGenerator(['run', '--containers', 'none', '^syscall\\.(TerminalShell|DropAndExecute)', '--json', '--sleep', '0', '-c', cfg.docker]).done;
  assert.is(r.code, 0, r.stderr);
  const out = parseOutcomes(r.stdout);
  assert.equal(
    out.map((o) => [o.action, o.status]),
    [
      ['syscall.TerminalShellInContainer', 'unavailable'],
      ['syscall.DropAndExecuteNewBinaryInContainer', 'unavailable'],
    ],
  );
  assert.is(out[0]!.reason, NO_CONTAINER);
  assert.equal(await generatorContainers(engines.docker!), []);
});

for (const runtime of RUNTIMES) {
  t(`${runtime}: --in-container runs every container action in a container of the private ${runtime} and removes it`, async () => {
    const e = engines[runtime]!;
    const r = await startGenerator(['run', '--in-container', '--all', '--json', '--sleep', '50', '-c', cfg[runtime], `^(${CONTAINER_ACTIONS.map((a) => a.name.replace('.', '\\.')).join('|')})$`]).done;
    const outcomes = parseOutcomes(r.stdout);
    runs[runtime] = { outcomes, prefix: r.stderr.match(/started (?:privileged )?container (rae-event-generator-\d+-)/)?.[1] ?? '(no container started)' };
    const unavailable = outcomes.filter((o) => o.status === 'unavailable');
    process.stderr.write(`in-container (${runtime}): ${outcomes.length} actions, ${outcomes.length - unavailable.length} performed, ${unavailable.length} cannot work here:\n`);
    for (const o of unavailable) process.stderr.write(`  ${o.action} (${o.rule}): ${o.reason}\n`);
    assert.equal(
      outcomes.map((o) => o.action),
      CONTAINER_ACTIONS.map((a) => a.name),
    );
    assert.equal(
      outcomes.filter((o) => o.status === 'failed'),
      [],
    );
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stderr, `containers through ${runtime} at ${e.socket}, image ${GENERATOR_IMAGE}`);
    // the generator's containers are gone; its image stays for the next run
    assert.equal(await generatorContainers(e), []);
    assert.ok((await e.cli(['images', '-q', GENERATOR_IMAGE])).trim().length > 0);
    // every action that could not run says why; only the API server's name may be missing here
    for (const o of unavailable) assert.match(o.reason!, 'kubernetes.default.svc.cluster.local', o.action);
  });

  t(`${runtime}: every performed container action's rule fires in the generator's container, with its name and image`, async () => {
    const { outcomes, prefix } = runs[runtime]!;
    const performed = outcomes.filter((o) => o.status === 'performed' && !ENGINE_GAPS.includes(o.rule));
    assert.ok(performed.length >= CONTAINER_ACTIONS.length - 1, JSON.stringify(outcomes));
    const fromGenerator = (a: RaeRun['alerts'][number], rule: string) => a.rule === rule && String(a.output_fields['container.name']).startsWith(prefix);
    const missing = () => performed.filter((o) => !rae.alerts.some((a) => fromGenerator(a, o.rule))).map((o) => o.rule);
    await rae.waitAlerts(() => missing().length === 0, `${runtime} container action alerts`, 300_000).catch(() => undefined);
    const without = missing().map((rule) => `${rule}: ${JSON.stringify(rae.alerts.filter((a) => a.rule === rule).map((a) => [a.output_fields['container.id'], a.output_fields['container.name']]))}`);
    assert.equal(without, [], "rules without an alert from the generator's container (container.id and .name of any alert of the rule given)");
    for (const o of performed) {
      const f = rae.alerts.find((x) => fromGenerator(x, o.rule))!.output_fields;
      assert.not.equal(f['container.id'], 'host', o.rule);
      assert.match(String(f['container.id']), /^[0-9a-f]{12}$/, o.rule);
      assert.is(f['container.image.repository'], GENERATOR_IMAGE.slice(0, GENERATOR_IMAGE.lastIndexOf(':')), o.rule);
      assert.is(f['container.image.tag'], 'busybox', o.rule);
      const privileged = CONTAINER_ACTIONS.find((x) => x.name === o.action)!.container!.privileged;
      assert.is(f['container.name'], `${prefix}${privileged ? 'privileged' : 'plain'}`, o.rule);
    }
    for (const rule of ENGINE_GAPS) {
      assert.ok(
        outcomes.some((o) => o.rule === rule && o.status === 'performed'),
        rule,
      );
      assert.not.ok(
        rae.alerts.some((a) => fromGenerator(a, rule)),
        `${rule} fires now: take it out of ENGINE_GAPS`,
      );
    }
  });
}

t('SIGTERM during a run removes the containers before the generator exits', async () => {
  // the privileged container is made, then the signal comes while it settles
  const g = startGenerator(['run', '--in-container', '--sleep', '0', '-c', cfg.docker, '^syscall\\.DebugfsLaunched'], (err) => {
    if (/started privileged container/.test(err) && g.child.exitCode === null && !g.child.killed) g.child.kill('SIGTERM');
  });
  const r = await g.done;
  assert.match(r.stderr, 'started privileged container', r.stderr);
  assert.match(r.stderr, /removed container [0-9a-f]{12}/);
  assert.is(r.code, 128 + 15, r.stderr);
  assert.equal(await generatorContainers(engines.docker!), []);
});

test.run();
