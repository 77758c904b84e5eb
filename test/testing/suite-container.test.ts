// The suite runner's container context through a real runtime (root, the kernel probe): a
// private dockerd and a private podman side by side, each named to the runner as
// `rae test --container-runtime-unix-socket` names it, never a system one; the one engine the
// runner starts follows both. A test with context.container runs its chain in a privileged
// container the runner creates there (named and imaged as the test says, the base image built
// offline), so the alerts carry container.name, .image and .privileged: Falco's "Debugfs
// Launched in Privileged Container" and "Drop and execute new binary in container" suites pass
// (in the cgroup box, without runtime metadata and with the chain's program bound from the node,
// both failed), as do its redirect, netcat and release_agent suites, the repository's own suite
// for the container rules (rules/tests/syscall-container-suite.yaml), and the debugfs one through
// podman. The engine resolves the rules' domain names with a DNS server the test starts on
// 127.0.0.1 (rae test --dns-server), which gives kubernetes.default.svc.cluster.local the address
// the suite's "Contact K8S API Server From Container" test connects to on its container's
// loopback: nothing on the node changes. Nothing is left in the runtimes: no container, no image tag.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GENERATOR_IMAGE } from '../../host/generator/index.js';
import { readTestDocuments } from '../../host/testing/documents.js';
import type { TestOutcome } from '../../host/testing/outcome.js';
import { createSuiteRunner, type SuiteRunner } from '../../host/testing/suite/index.js';
import { buildImages, dockerPresent, imageToolsPresent, leftovers, netnsNames, podmanPresent, runtimesAvailable, startDockerd, startPodman, type PrivateEngine } from '../../support/containers/index.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('suite-container.test.ts');
const ready = gate.run && runtimesAvailable() && imageToolsPresent() && dockerPresent() && podmanPresent();
const t = ready ? test : test.skip;
const ROOT = join(import.meta.dirname, '../..');
const FALCO = join(ROOT, '../shared/evtgen-suite/falco');
const root = mkdtempSync(join(tmpdir(), 'rae-suite-ctr-'));
const logs: string[] = [];
let runner: SuiteRunner | undefined;
let docker: PrivateEngine;
let podman: PrivateEngine;
let netns: string[] = [];
/** Gives the cluster's API server name the address of the container suite's test (rules/tests/syscall-container-suite.yaml). */
let dns: DnsServer | undefined;

/** Runs a suite file with its containers made in `via` (default: the private dockerd). */
async function run(file: string, text = readFileSync(file, 'utf8'), via = docker): Promise<TestOutcome[]> {
  if (!runner) throw new Error('no runner: the private runtimes did not start');
  const out: TestOutcome[] = [];
  const options = { rulesFiles: [], containerSocket: `unix://${via.socket}`, dnsServers: [`127.0.0.1:${dns!.port}`], log: (l: string) => logs.push(l) };
  for await (const o of runner.run(file, readTestDocuments(file, text)[0], options)) out.push(o);
  return out;
}

const brief = (os: TestOutcome[]) => os.map((o) => `${o.name}: ${o.status}${o.status === 'passed' ? '' : ` (${o.detail})`}`);

test.before(async () => {
  if (!ready) return;
  netns = netnsNames();
  dns = await startDnsServer({ 'kubernetes.default.svc.cluster.local': ['127.0.100.1'] });
  const images = buildImages(join(root, 'images'));
  docker = await startDockerd(images);
  podman = await startPodman(images);
  // one engine for every run, following both runtimes
  const off = { enabled: false, sockets: [] };
  runner = createSuiteRunner({ shared: true, follow: { callTimeoutMs: 5000, cri: off, docker: { enabled: true, sockets: [docker.socket] }, podman: { enabled: true, sockets: [podman.socket] } } });
});

test.after(async () => {
  await runner?.close();
  await dns?.close();
  for (const e of [docker, podman]) {
    if (!e) continue;
    await e.stop();
    assert.equal(leftovers(e.dir, e.cgroups, netns), []);
  }
  rmSync(root, { recursive: true, force: true });
});

t("Falco's debugfs and drop-and-execute suites pass: their chains run in containers of the private dockerd, which the engine follows", async () => {
  const outcomes = [...(await run(join(FALCO, 'debugfs_launched_in_privileged_container.yaml'))), ...(await run(join(FALCO, 'drop_and_execute_new_binary_in_container.yaml')))];
  assert.equal(brief(outcomes), [
    'debugfs_launched_in_privileged_container: passed',
    'drop_and_execute_new_binary_in_container_testCase#0: passed',
    'drop_and_execute_new_binary_in_container_testCase#1: passed',
    'drop_and_execute_new_binary_in_container_testCase#2: passed',
  ]);
  const ran = logs.filter((l) => / the chain ran in container /.test(l));
  assert.is(ran.length, 4, logs.join('\n'));
  for (const l of ran) assert.match(l, /the chain ran in container event-generator \(docker, id [0-9a-f]{12}\)$/);
  assert.is((await docker.cli(['ps', '-aq'])).trim(), '', 'containers left in the runtime');
});

t("a test's container name and image are the container's as the engine reports them; the image tag goes with the test", async () => {
  const outcomes = await run(
    'named.yaml',
    `tests:
  - name: named_container
    rule: Debugfs Launched in Privileged Container
    runner: HostRunner
    context:
      container: { name: rae-suite-named, image: "localhost/rae-suite-tag:v1" }
      processes: [{ name: debugfs }]
    expectedOutcome:
      outputFields: { container.name: rae-suite-named, container.image: "localhost/rae-suite-tag:v1", proc.name: debugfs }
`,
  );
  assert.equal(brief(outcomes), ['named_container: passed']);
  assert.is((await docker.cli(['images', '-q', 'localhost/rae-suite-tag:v1'])).trim(), '', 'the image tag is left');
  assert.ok((await docker.cli(['images', '-q', GENERATOR_IMAGE])).trim().length > 0, 'the base image stays for the next run');
});

t("Falco's redirect suite passes: dup2 and dup3 of a connected socket onto 0, 1 and 2 in a container", async () => {
  const outcomes = await run(join(FALCO, 'redirect_stdout_stdin_to_network_connection_in_container.yaml'));
  assert.is(outcomes.length, 12);
  assert.equal(
    brief(outcomes).filter((l) => !l.endsWith(': passed')),
    [],
  );
});

t("Falco's netcat and release_agent suites pass in containers of the private dockerd: nc/ncat exec flags, and open/openat/openat2 writes of a release_agent as root and as daemon", async () => {
  const outcomes = [...(await run(join(FALCO, 'netcat_remote_code_execution_in_container.yaml'))), ...(await run(join(FALCO, 'detect_release_agent_file_container_escapes.yaml')))];
  assert.is(outcomes.length, 7 + 12);
  assert.equal(
    brief(outcomes).filter((l) => !l.endsWith(': passed')),
    [],
  );
  assert.is((await docker.cli(['ps', '-aq'])).trim(), '', 'containers left in the runtime');
});

t("rules/tests/syscall-container-suite.yaml passes in containers of the private dockerd, every test (the K8S API server's name resolved by the test's DNS server)", async () => {
  const outcomes = await run(join(ROOT, 'rules/tests/syscall-container-suite.yaml'));
  assert.is(outcomes.length, 11, brief(outcomes).join('\n'));
  assert.equal(
    brief(outcomes).filter((l) => !l.endsWith(': passed')),
    [],
  );
  assert.is((await docker.cli(['ps', '-aq'])).trim(), '', 'containers left in the runtime');
  // the engine asked the test's server, not the node's resolver
  assert.ok(dns!.queries > 0, 'the engine sent no query to the DNS server it was given');
});

t("the container context through Podman: Falco's debugfs suite passes in a container of the private podman, which the engine follows", async () => {
  const outcomes = await run(join(FALCO, 'debugfs_launched_in_privileged_container.yaml'), undefined, podman);
  assert.equal(brief(outcomes), ['debugfs_launched_in_privileged_container: passed']);
  assert.ok(
    logs.some((l) => /^suite: debugfs_launched_in_privileged_container: the chain ran in container event-generator \(podman, id [0-9a-f]{12}\)$/.test(l)),
    logs.join('\n'),
  );
  assert.is((await podman.cli(['ps', '-aq'])).trim(), '', 'containers left in podman');
});

test.run();
