// Container and pod fields end to end (root, real kernel, the real `rae run`, a private
// containerd with CRI from support/containers/): rae run follows the private runtime
// (containers.cri.sockets), a pod shop/web-7d4b9c (label app=web) runs a privileged container
// with the host's /etc and /proc mounted and a container without mounts. `cat /etc/shadow` through
// ExecSync gives 'Read sensitive file untrusted' with the container and pod in its output fields,
// and a rule of this file judging on container.privileged and k8s.pod.label[app] in its condition
// (the compiled rules read the container table) fires with them in its output, and with
// container.start_ts (the container's pid-namespace init, between the two CRI calls that started
// it) and container.duration; a pty shell (`kubectl exec -it`: CRI Exec with a tty over the
// streaming server) gives 'Terminal shell in container' and, for its `cat /etc/shadow`, the same
// alerts with the terminal in proc.tty; 'Launch Privileged
// Container' (incubating) fires for the privileged container; 'Launch Sensitive Mount Container'
// (sandbox) fires for it and not for the container without mounts; 'Drop and execute new binary
// in container' fires for a binary copied into the container's writable layer and run, and not
// for the image's own binaries (proc.is_exe_upper_layer from the probe's overlayfs check).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { until } from '../../helpers/until.js';
import { corpusPath } from '../../../support/corpus.js';
import { kernelGate } from '../syscall/collector.js';
import { buildImages, BUSYBOX_IMAGE, containerdPresent, imageToolsPresent, leftovers, netnsNames, runtimesAvailable, startContainerd, type Pod, type PrivateContainerd } from '../../../support/containers/index.js';

const gate = kernelGate('live-cri.test.ts');
const ready = gate.run && runtimesAvailable() && imageToolsPresent() && containerdPresent();
const t = ready ? test : test.skip;
const WAIT_MS = 300_000;
const root = mkdtempSync(join(tmpdir(), 'rae-live-cri-'));
let rt: PrivateContainerd;
let rae: RaeRun;
let pod: Pod;
let netns: string[] = [];
let privileged = '';
let plain = '';
/** Epoch ns just before and after the privileged container was created and started. */
let startedAfter = 0n;
let startedBefore = 0n;

const POD_RULE = `- rule: Shadow read in a web pod
  desc: test rule judging on container table fields
  condition: evt.type in (open, openat, openat2) and evt.is_open_read=true and fd.name=/etc/shadow and container.privileged=true and k8s.pod.label[app]=web and k8s.ns.name=shop
  output: shadow read (privileged=%container.privileged app=%k8s.pod.label[app] mounts=%container.mounts tty=%proc.tty start=%container.start_ts duration=%container.duration)
  priority: WARNING
- rule: Container started in shop
  desc: test rule, the first process of every container of namespace shop
  condition: evt.type in (execve, execveat) and proc.vpid=1 and container.id != host and k8s.ns.name=shop
  output: started %container.name
  priority: NOTICE
`;

test.before(async () => {
  if (!ready) return;
  netns = netnsNames();
  rt = await startContainerd(buildImages(join(root, 'images')));
  const rules = join(root, 'pod-rule.yaml');
  writeFileSync(rules, POD_RULE);
  const cfg = join(root, 'config.yaml');
  const files = [corpusPath('falco-incubating_rules.yaml'), corpusPath('falco-sandbox_rules.yaml'), rules];
  writeFileSync(
    cfg,
    `rules:\n  builtIn: [syscall]\n  files: ${JSON.stringify(files)}\n  ruleMatching: all\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\ncontainers:\n  cri:\n    sockets: [${JSON.stringify(rt.socket)}]\n  docker:\n    enabled: false\n  podman:\n    enabled: false\n`,
  );
  rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')]);
  const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
  await rae.waitLog(/run: ready/);
  await rae.waitLog(/container metadata: cri at .*: \d+ containers/);
  // a pod uid of its own: the kubelet-style cgroup parent is named by it, and cri.test.ts (which may
  // run beside this file) has a fixed one; sharing the cgroup, one file's teardown killed the other's containers
  pod = await rt.cri.runPod({ name: 'web-7d4b9c', namespace: 'shop', labels: { app: 'web' } });
  // Each container starts once the engine holds its metadata (learned from the runtime's create
  // event): a start judged before it reads container.* and k8s.* as missing, as in Falco, and
  // container_started rules would not fire (a race with the runtime's answer on a loaded machine).
  const known = async () => Number(/^enginesecurity_engine_containers (\d+)/m.exec(await (await fetch(`${forwarder}/metrics`)).text())?.[1] ?? -1);
  const runKnown = async (spec: Parameters<PrivateContainerd['cri']['createContainer']>[1]) => {
    const before = await known();
    const id = await rt.cri.createContainer(pod, spec);
    await until(known, (n) => n > before, `the engine to learn container ${spec.name}'s metadata (enginesecurity_engine_containers above ${before})`, WAIT_MS);
    await rt.cri.startContainer(id);
    return id.slice(0, 12);
  };
  plain = await runKnown({ name: 'sidecar', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'] });
  startedAfter = BigInt(Date.now()) * 1_000_000n;
  privileged = await runKnown({
    name: 'nginx',
    image: BUSYBOX_IMAGE,
    command: ['sleep'],
    args: ['3600'],
    privileged: true,
    mounts: [
      { containerPath: '/host/etc', hostPath: '/etc', readonly: true },
      { containerPath: '/host/proc', hostPath: '/proc', readonly: true },
    ],
  });
  startedBefore = BigInt(Date.now()) * 1_000_000n;
});

test.after(async () => {
  if (!ready) return;
  const code = await rae?.stop();
  await rt.stop();
  assert.equal(leftovers(rt.dir, rt.cgroups, netns), []);
  rmSync(root, { recursive: true, force: true });
  assert.is(code, 0);
});

/** The first alert of `rule` whose output fields include `want`. */
async function alertOf(rule: string, want: Record<string, unknown>): Promise<RaeRun['alerts'][number]> {
  const matches = (a: RaeRun['alerts'][number]) => a.rule === rule && Object.entries(want).every(([k, v]) => a.output_fields[k] === v);
  await rae
    .waitAlerts((as) => as.some(matches), `${rule} with ${JSON.stringify(want)}`, WAIT_MS)
    .catch((err: Error) => {
      const seen = rae.alerts.filter((a) => a.rule === rule).map((a) => JSON.stringify(a.output_fields));
      throw new Error(`${err.message.split('\n')[0]}; alerts of this rule seen: ${seen.join(' ; ') || 'none'}`);
    });
  return rae.alerts.find(matches)!;
}

t("cat /etc/shadow through ExecSync: 'Read sensitive file untrusted' carries the container and the pod", async () => {
  const r = await rt.cri.execSync(`${privileged}`, ['cat', '/etc/shadow']);
  assert.is(r.exitCode, 0);
  const a = await alertOf('Read sensitive file untrusted', { 'container.id': privileged, 'proc.name': 'cat' });
  assert.is(a.output_fields['container.name'], 'nginx');
  assert.is(a.output_fields['container.image.repository'], 'localhost/rae-busybox');
  assert.is(a.output_fields['container.image.tag'], '1.35');
  assert.is(a.output_fields['k8s.pod.name'], 'web-7d4b9c');
  assert.is(a.output_fields['k8s.ns.name'], 'shop');
});

t('a rule judging on container.privileged and k8s.pod.label[app] fires with them in its output', async () => {
  const a = await alertOf('Shadow read in a web pod', { 'container.id': privileged });
  assert.is(a.output_fields['container.privileged'], true);
  assert.is(a.output_fields['k8s.pod.label[app]'], 'web');
  assert.is(a.output_fields['container.mounts'], '/etc:/host/etc::false:private,/proc:/host/proc::false:private');
  assert.is(a.output_fields['k8s.pod.name'], 'web-7d4b9c');
});

t('container.start_ts is the start of the container (its pid-namespace init), container.duration the time since', async () => {
  const a = await alertOf('Shadow read in a web pod', { 'container.id': privileged });
  const start = BigInt(String(a.output_fields['container.start_ts']));
  const duration = BigInt(String(a.output_fields['container.duration']));
  // the container's init started between the CreateContainer call and StartContainer's answer (1 s of margin for the clocks' offsets)
  assert.ok(start >= startedAfter - 1_000_000_000n && start <= startedBefore + 1_000_000_000n, `start_ts ${start} not within [${startedAfter}, ${startedBefore}]`);
  assert.ok(duration > 0n, `duration ${duration}`);
  assert.ok(start + duration <= BigInt(Date.now()) * 1_000_000n + 1_000_000_000n, `start_ts + duration ${start + duration} is in the future`);
});

t('a pty shell (exec -it) running cat /etc/shadow: Terminal shell in container and the shadow reads carry the container, the pod and the terminal', async () => {
  // a path, not `cat`: busybox ash runs a bare applet name through /proc/self/exe (proc.name exe)
  const r = await rt.cri.execTty(privileged, ['sh'], '/bin/cat /etc/shadow >/dev/null; exit\n');
  assert.is(r.status.status, 'Success', JSON.stringify(r));
  const shell = await alertOf('Terminal shell in container', { 'container.id': privileged, 'proc.name': 'sh' });
  assert.ok(Number(shell.output_fields['proc.tty']) > 0, `proc.tty ${shell.output_fields['proc.tty']}`);
  const tty = shell.output_fields['proc.tty'];
  const read = await alertOf('Read sensitive file untrusted', { 'container.id': privileged, 'proc.name': 'cat', 'proc.tty': tty });
  const pod = await alertOf('Shadow read in a web pod', { 'container.id': privileged, 'proc.tty': tty });
  for (const a of [shell, read, pod]) {
    assert.is(a.output_fields['container.name'], 'nginx');
    assert.is(a.output_fields['container.image.repository'], 'localhost/rae-busybox');
    assert.is(a.output_fields['container.image.tag'], '1.35');
    assert.is(a.output_fields['k8s.pod.name'], 'web-7d4b9c');
    assert.is(a.output_fields['k8s.ns.name'], 'shop');
  }
  assert.is(pod.output_fields['container.privileged'], true);
  assert.is(pod.output_fields['k8s.pod.label[app]'], 'web');
});

t("'Launch Privileged Container' fires for the privileged container, 'Launch Sensitive Mount Container' for it and not for the one without mounts", async () => {
  const p = await alertOf('Launch Privileged Container', { 'container.id': privileged });
  assert.is(p.output_fields['container.name'], 'nginx');
  const m = await alertOf('Launch Sensitive Mount Container', { 'container.id': privileged });
  assert.match(String(m.output_fields['container.mounts']), /\/proc:\/host\/proc/);
  // the plain container's start was judged with its metadata (it started before the privileged one)
  await alertOf('Container started in shop', { 'container.id': plain, 'container.name': 'sidecar' });
  assert.not.ok(rae.alerts.some((a) => a.rule === 'Launch Sensitive Mount Container' && a.output_fields['container.id'] === plain));
  assert.not.ok(rae.alerts.some((a) => a.rule === 'Launch Privileged Container' && a.output_fields['container.id'] === plain));
});

t("'Drop and execute new binary in container' fires for a binary copied into the container and run, not for the image's own", async () => {
  const r = await rt.cri.execSync(privileged, ['sh', '-c', 'mkdir -p /tmp/drop && cp /bin/busybox /tmp/drop/cat && /tmp/drop/cat /etc/hostname']);
  assert.is(r.exitCode, 0, r.stderr);
  const a = await alertOf('Drop and execute new binary in container', { 'container.id': privileged, 'proc.exepath': '/tmp/drop/cat' });
  assert.is(a.output_fields['container.name'], 'nginx');
  const start = BigInt(String(a.output_fields['container.start_ts']));
  assert.ok(start >= startedAfter - 1_000_000_000n && start <= startedBefore + 1_000_000_000n, `container_start_ts ${start}`);
  // the image's own binaries (sh, mkdir, cp, and the cat of the first test) ran in the same container
  // (the kernel probe sees every process of the machine: only this container's alerts count)
  const drops = rae.alerts.filter((x) => x.rule === 'Drop and execute new binary in container' && x.output_fields['container.id'] === privileged);
  assert.equal(
    drops.map((x) => x.output_fields['proc.exepath']).filter((p) => p !== '/tmp/drop/cat'),
    [],
  );
});

test.run();
