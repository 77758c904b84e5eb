// Container and pod fields end to end (root, real kernel, the real `rae run`, a private
// containerd with CRI from test/helpers/containers): rae run follows the private runtime
// (containers.cri.sockets), a pod shop/web-7d4b9c (label app=web) runs a privileged container
// with the host's /etc and /proc mounted and a container without mounts. `cat /etc/shadow` through
// ExecSync gives 'Read sensitive file untrusted' with the container and pod in its output fields,
// and a rule of this file judging on container.privileged and k8s.pod.label[app] in its condition
// (the compiled rules read the container table) fires with them in its output; 'Launch Privileged
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
import { corpusPath } from '../../helpers/corpus.js';
import { kernelGate } from '../syscall/collector.js';
import { buildImages, BUSYBOX_IMAGE, containerdPresent, imageToolsPresent, leftovers, netnsNames, runtimesAvailable, startContainerd, type Pod, type PrivateContainerd } from '../../helpers/containers/index.js';

const gate = kernelGate('live-cri.test.ts');
const ready = gate.run && runtimesAvailable() && imageToolsPresent() && containerdPresent();
const t = ready ? test : test.skip;
const WAIT_MS = 60_000;
const root = mkdtempSync(join(tmpdir(), 'rae-live-cri-'));
let rt: PrivateContainerd;
let rae: RaeRun;
let pod: Pod;
let netns: string[] = [];
let privileged = '';
let plain = '';

const POD_RULE = `- rule: Shadow read in a web pod
  desc: test rule judging on container table fields
  condition: evt.type in (open, openat, openat2) and evt.is_open_read=true and fd.name=/etc/shadow and container.privileged=true and k8s.pod.label[app]=web and k8s.ns.name=shop
  output: shadow read (privileged=%container.privileged app=%k8s.pod.label[app] mounts=%container.mounts)
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
  await rae.waitLog(/run: ready/);
  await rae.waitLog(/container metadata: cri at .*: \d+ containers/);
  pod = await rt.cri.runPod({ name: 'web-7d4b9c', namespace: 'shop', uid: '0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10', labels: { app: 'web' } });
  plain = (await rt.cri.runContainer(pod, { name: 'sidecar', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'] })).slice(0, 12);
  privileged = (
    await rt.cri.runContainer(pod, {
      name: 'nginx',
      image: BUSYBOX_IMAGE,
      command: ['sleep'],
      args: ['3600'],
      privileged: true,
      mounts: [
        { containerPath: '/host/etc', hostPath: '/etc', readonly: true },
        { containerPath: '/host/proc', hostPath: '/proc', readonly: true },
      ],
    })
  ).slice(0, 12);
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
  // the image's own binaries (sh, mkdir, cp, and the cat of the first test) ran in the same container
  const drops = rae.alerts.filter((x) => x.rule === 'Drop and execute new binary in container');
  assert.equal(
    drops.map((x) => x.output_fields['proc.exepath']).filter((p) => p !== '/tmp/drop/cat'),
    [],
  );
});

test.run();
