// The suite runner's container context through a real runtime (root, the kernel probe): a
// private dockerd, named to the runner as `rae test --container-runtime-unix-socket` names it,
// never a system one. A test with context.container runs its chain in a privileged container the
// runner creates there (named and imaged as the test says, the base image built offline), and
// the engine the runner starts follows that runtime, so the alerts carry container.name, .image
// and .privileged: Falco's "Debugfs Launched in Privileged Container" and "Drop and execute new
// binary in container" suites pass (in the cgroup box, without runtime metadata and with the
// chain's program bound from the node, both failed). Nothing is left in the runtime: no
// container, no image tag.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GENERATOR_IMAGE } from '../../host/generator/index.js';
import { readTestDocuments } from '../../host/testing/documents.js';
import type { TestOutcome } from '../../host/testing/outcome.js';
import { createSuiteRunner } from '../../host/testing/suite/index.js';
import { buildImages, dockerPresent, imageToolsPresent, leftovers, netnsNames, runtimesAvailable, startDockerd, type PrivateEngine } from '../../support/containers/index.js';
import { kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('suite-container.test.ts');
const ready = gate.run && runtimesAvailable() && imageToolsPresent() && dockerPresent();
const t = ready ? test : test.skip;
const ROOT = join(import.meta.dirname, '../..');
const FALCO = join(ROOT, '../shared/evtgen-suite/falco');
const root = mkdtempSync(join(tmpdir(), 'rae-suite-ctr-'));
const runner = createSuiteRunner({ shared: true });
const logs: string[] = [];
let docker: PrivateEngine;
let netns: string[] = [];

async function run(file: string, text = readFileSync(file, 'utf8')): Promise<TestOutcome[]> {
  const out: TestOutcome[] = [];
  const options = { rulesFiles: [], containerSocket: `unix://${docker.socket}`, log: (l: string) => logs.push(l) };
  for await (const o of runner.run(file, readTestDocuments(file, text)[0], options)) out.push(o);
  return out;
}

const brief = (os: TestOutcome[]) => os.map((o) => `${o.name}: ${o.status}${o.status === 'passed' ? '' : ` (${o.detail})`}`);

test.before(async () => {
  if (!ready) return;
  netns = netnsNames();
  docker = await startDockerd(buildImages(join(root, 'images')));
});

test.after(async () => {
  await runner.close();
  if (docker) {
    await docker.stop();
    assert.equal(leftovers(docker.dir, docker.cgroups, netns), []);
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

test.run();
