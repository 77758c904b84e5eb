// A container's start judged with its metadata when the runtime answers late (root, real kernel,
// the real `rae run`, a private containerd with CRI from support/containers/): rae run follows the
// runtime through a proxy in front of its socket that holds every answer (CRI calls, the event
// stream) while the test says so (heldAnswersProxy), as a runtime slowed down by a loaded node
// answers. A privileged container of pod late/slow-pod is created and started while the answers are
// held; its init's exec is judged at once without its metadata (a rule of this file that needs no
// metadata fires for it, with container.name missing), then the answers go: 'Launch Privileged
// Container' (incubating rules) fires for that exec, exactly once, with the exec's own evt.time,
// container.name and k8s.ns.name, and the rule that fired without the metadata does not fire again.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { corpusPath } from '../../../support/corpus.js';
import { kernelGate } from '../syscall/collector.js';
import { buildImages, BUSYBOX_IMAGE, containerdPresent, imageToolsPresent, leftovers, netnsNames, runtimesAvailable, startContainerd, type PrivateContainerd } from '../../../support/containers/index.js';

const gate = kernelGate('late-metadata.test.ts');
const ready = gate.run && runtimesAvailable() && imageToolsPresent() && containerdPresent();
const t = ready ? test : test.skip;
/** Deadline of each wait: wide, for a busy CI machine. */
const WAIT_MS = 120_000;
const root = mkdtempSync(join(tmpdir(), 'rae-late-metadata-'));
let rt: PrivateContainerd;
let proxy: HeldAnswersProxy;
let forwarder = '';
let rae: RaeRun;
let netns: string[] = [];

const INIT_RULE = `- rule: Init exec in a container
  desc: test rule, a container's start judged without its metadata (reads none of it)
  condition: evt.type in (execve, execveat) and proc.vpid=1 and container.id != host
  output: init of %container.id
  priority: NOTICE
`;

/** A unix-socket proxy in front of a runtime's socket that holds every answer (runtime to client bytes) from hold() to release(). */
interface HeldAnswersProxy {
  socket: string;
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

async function heldAnswersProxy(upstream: string, socket: string): Promise<HeldAnswersProxy> {
  let held: Array<() => void> | undefined;
  const conns = new Set<Socket>();
  const server: Server = createServer((client) => {
    const up = connect(upstream);
    for (const s of [client, up]) {
      conns.add(s);
      s.on('close', () => conns.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
    client.on('data', (b) => up.write(b));
    up.on('data', (b) => (held ? held.push(() => client.write(b)) : client.write(b)));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
  return {
    socket,
    hold: () => void (held ??= []),
    release: () => {
      const answers = held ?? [];
      held = undefined;
      for (const send of answers) send();
    },
    close: async () => {
      for (const s of conns) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test.before(async () => {
  if (!ready) return;
  netns = netnsNames();
  rt = await startContainerd(buildImages(join(root, 'images')));
  proxy = await heldAnswersProxy(rt.socket, join(root, 'late-cri.sock'));
  const rules = join(root, 'init-rule.yaml');
  writeFileSync(rules, INIT_RULE);
  const cfg = join(root, 'config.yaml');
  const files = [corpusPath('falco-incubating_rules.yaml'), rules];
  // a call's deadline longer than the answers are held: the engine's lookups wait for them
  writeFileSync(
    cfg,
    `rules:\n  builtIn: [syscall]\n  files: ${JSON.stringify(files)}\n  ruleMatching: all\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\ncontainers:\n  callTimeoutMs: ${WAIT_MS}\n  cri:\n    sockets: [${JSON.stringify(proxy.socket)}]\n  docker:\n    enabled: false\n  podman:\n    enabled: false\n`,
  );
  rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')]);
  forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
  await rae.waitLog(/run: ready/);
  await rae.waitLog(/container metadata: cri at .*: \d+ containers/);
});

test.after(async () => {
  if (!ready) return;
  proxy?.release();
  const code = await rae?.stop();
  await proxy?.close();
  await rt.stop();
  assert.equal(leftovers(rt.dir, rt.cgroups, netns), []);
  rmSync(root, { recursive: true, force: true });
  assert.is(code, 0);
});

/** The alerts of `rule` for container `id` (12 characters). */
const alertsOf = (rule: string, id: string) => rae.alerts.filter((a) => a.rule === rule && a.output_fields['container.id'] === id);

/** Waits for the first alert of `rule` for container `id`. */
async function alertOf(rule: string, id: string): Promise<RaeRun['alerts'][number]> {
  await rae.waitAlerts(() => alertsOf(rule, id).length > 0, `${rule} for container ${id}`, WAIT_MS);
  return alertsOf(rule, id)[0]!;
}

t("a privileged container started before the runtime answers: 'Launch Privileged Container' fires once its metadata comes, once, with the exec's time, the container and the pod", async () => {
  const pod = await rt.cri.runPod({ name: 'slow-pod', namespace: 'late', labels: { app: 'slow' } });
  proxy.hold();
  const id = (await rt.cri.createContainer(pod, { name: 'priv', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'], privileged: true })).slice(0, 12);
  await rt.cri.startContainer(id);
  // the start was judged while no answer could reach the engine: without the container's metadata
  const init = await alertOf('Init exec in a container', id);
  assert.is(init.output_fields['container.name'], null, JSON.stringify(init.output_fields));
  assert.not.ok(alertsOf('Launch Privileged Container', id).length);
  proxy.release();
  const launch = await alertOf('Launch Privileged Container', id);
  assert.is(launch.output_fields['container.name'], 'priv');
  assert.is(launch.output_fields['k8s.ns.name'], 'late');
  assert.is(launch.output_fields['k8s.pod.name'], 'slow-pod');
  assert.is(launch.output_fields['proc.name'], 'sleep');
  assert.is(launch.output_fields['evt.time'], init.output_fields['evt.time']);
  // an event of the container after the late judgment: its alert comes after any duplicate would
  const r = await rt.cri.execSync(id, ['cat', '/etc/shadow']);
  assert.is(r.exitCode, 0);
  const read = await alertOf('Read sensitive file untrusted', id);
  assert.is(read.output_fields['container.name'], 'priv');
  assert.is(alertsOf('Launch Privileged Container', id).length, 1);
  assert.is(alertsOf('Init exec in a container', id).length, 1);
  // and the operator sees it: the start held, then judged again
  const metrics = await (await fetch(`${forwarder}/metrics`)).text();
  const late = (result: string) => Number(new RegExp(`^enginesecurity_engine_container_late_starts_total\\{result="${result}"\\} (\\d+)`, 'm').exec(metrics)?.[1]);
  assert.ok(
    late('held') >= 1 && late('judged') >= 1,
    metrics
      .split('\n')
      .filter((l) => l.includes('late_starts'))
      .join('\n'),
  );
});

test.run();
