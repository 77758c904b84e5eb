// Cgroup boxes (host/generator/cgroup-box.ts): the event generator's containers without a runtime,
// end to end (root, real kernel, the real `rae run` with the default built-in rules). A box's
// processes are in a cgroup named like a container's, so every performed container action's rule
// fires with the box's container.id (the first 12 of the cgroup's 64-hex name); the actions
// whose rule needs a runtime's container say why (Action.container.runtimeOnly). The plain box
// has no CAP_SYS_ADMIN, the privileged one has it. Nothing is left behind: no cgroup, no process,
// no mount, also after a SIGTERM in the middle of a run.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ACTIONS, CgroupBoxes, NO_CONTAINER, runtimeOnly, type ActionOutcome } from '../../host/generator/index.js';
import { cgroup2Mount } from '../../host/sources/syscall/procfs.js';
import { parseOutcomes, startGenerator } from '../helpers/generator.js';
import { everyRuleSection, startRae, type RaeRun } from '../helpers/rae-run.js';
import { kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('cgroup-box.test.ts');
const opening = gate.run ? await CgroupBoxes.open() : undefined;
if (opening?.unavailable) process.stderr.write(`\n!!! cgroup-box.test.ts: SKIPPING: ${opening.unavailable}\n\n`);
await opening?.runner?.close();
const ready = gate.run && opening?.runner !== undefined;
const t = ready ? test : test.skip;
const root = mkdtempSync(join(tmpdir(), 'rae-cgroup-box-'));
const cfg = join(root, 'rae.yaml');
const CONTAINER_ACTIONS = ACTIONS.filter((a) => a.container);
/** Every container action, by exact name. */
const SELECT = `^(${CONTAINER_ACTIONS.map((a) => a.name.replace('.', '\\.')).join('|')})$`;
/** The pids of the generators this file started: their boxes' cgroups are named after them. */
const generators: number[] = [];
let rae: RaeRun;

/** startGenerator, its pid kept for the leftovers check. */
function generator(args: string[], onStderr?: (all: string) => void) {
  const g = startGenerator(args, onStderr);
  generators.push(g.child.pid!);
  return g;
}

/** The boxes a generator's stderr says it started: kind -> container.id and cgroup directory. */
function boxesOf(stderr: string): Map<string, { id: string; cgroup: string }> {
  const boxes = new Map<string, { id: string; cgroup: string }>();
  for (const m of stderr.matchAll(/started (?:privileged )?container rae-event-generator-\d+-(plain|privileged) \(([0-9a-f]{12})\), a cgroup box \(no runtime\) in (\S+)/g)) boxes.set(m[1]!, { id: m[2]!, cgroup: m[3]! });
  return boxes;
}

/** What the generators of this file left: cgroups named after them, processes in such cgroups, overlay mounts of a box. */
function leftovers(): string[] {
  const out: string[] = [];
  const mount = cgroup2Mount()!;
  const ours = (name: string) => generators.some((pid) => name === `rae-event-generator-${pid}`);
  for (const d of readdirSync(mount)) if (ours(d)) out.push(`cgroup ${join(mount, d)}`);
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cg = '';
    try {
      // a zombie has exited: it holds nothing but its pid until its new parent (pid 1) reaps it
      if (/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1'))) continue;
      cg = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
    } catch {
      continue; // exited
    }
    const path = /^0::(.*)$/m.exec(cg)?.[1] ?? '';
    if (path.split('/').some(ours)) out.push(`process ${pid} in ${path}`);
  }
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) if (line.includes('rae-event-generator-box')) out.push(`mount ${line}`);
  return out;
}

test.before(async () => {
  if (!ready) return;
  // every syscall set, and the container actions' rules that their set ships disabled turned on
  writeFileSync(
    cfg,
    `forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\ncontainers:\n  enabled: false\n${everyRuleSection(
      root,
      CONTAINER_ACTIONS.map((a) => a.rule),
    )}`,
  );
  rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')]);
  await rae.waitLog(/run: ready/);
});

test.after(async () => {
  const code = ready ? await rae?.stop() : 0;
  rmSync(root, { recursive: true, force: true });
  assert.is(code, 0);
});

test('--containers none: container actions are unavailable, with the reason', async () => {
  const r = await generator(['run', '--containers', 'none', '^syscall\\.TerminalShell', '--json', '--sleep', '0', '--state-dir', root]).done;
  assert.is(r.code, 0, r.stderr);
  assert.equal(
    parseOutcomes(r.stdout).map((o) => [o.status, o.reason]),
    [['unavailable', NO_CONTAINER]],
  );
  const bad = await generator(['run', '--containers', 'podman', '--state-dir', root]).done;
  assert.is(bad.code, 2);
  assert.match(bad.stderr, "--containers must be one of auto, runtime, cgroup, none, not 'podman'");
});

t('a box: plain without CAP_SYS_ADMIN, privileged with it; its cgroup, argv, tty and timeout', async () => {
  const o = await CgroupBoxes.open();
  try {
    const boxes = o.runner!;
    const plain = await boxes.container(false);
    const privileged = await boxes.container(true);
    // exit status: bit 21 (CAP_SYS_ADMIN) of CapPrm, plus twice that of CapBnd, plus 4 times that of CapInh
    const sysAdmin =
      "p=$(sed -n 's/^CapPrm:\\t//p' /proc/self/status); b=$(sed -n 's/^CapBnd:\\t//p' /proc/self/status); i=$(sed -n 's/^CapInh:\\t//p' /proc/self/status); exit $(( (0x$p >> 21 & 1) + 2 * (0x$b >> 21 & 1) + 4 * (0x$i >> 21 & 1) ))";
    assert.is(await plain.exec(sysAdmin), 0);
    assert.is(await privileged.exec(sysAdmin), 3);
    for (const c of [plain, privileged]) {
      assert.match(c.id, /^[0-9a-f]{64}$/);
      assert.is(await c.exec(`grep -qx '0::/.*/${c.id}' /proc/self/cgroup`), 0, c.name);
    }
    assert.not.equal(plain.id, privileged.id);
    assert.is(await plain.exec(['/bin/sh', '-c', 'exit 7']), 7);
    assert.is(await plain.exec('[ -t 0 ]', { tty: true }), 0);
    assert.is(await plain.exec('[ -t 0 ]'), 1);
    const late = await plain.exec('sleep 60', { timeoutMs: 300 }).then(
      (code) => `exited with ${code}`,
      (err: Error) => err.message,
    );
    assert.is(late, `sh -c 'sleep 60' in ${plain.name} did not end in 300 ms`);
  } finally {
    await o.runner?.close();
  }
  const mount = cgroup2Mount()!;
  assert.not.ok(readdirSync(mount).includes(`rae-event-generator-${process.pid}`));
});

t("--containers cgroup: every container action runs in a box or says why; each performed action's rule fires with the box's container.id", async () => {
  const r = await generator(['run', '--containers', 'cgroup', '--all', '--json', '--sleep', '50', '-c', cfg, '--state-dir', join(root, 'state'), '--detect-wait', '0', SELECT]).done;
  const outcomes = parseOutcomes(r.stdout);
  assert.equal(
    outcomes.map((o) => o.action),
    CONTAINER_ACTIONS.map((a) => a.name),
  );
  assert.equal(
    outcomes.filter((o) => o.status === 'failed'),
    [],
  );
  assert.is(r.code, 0, r.stderr);
  for (const o of outcomes) {
    const a = CONTAINER_ACTIONS.find((x) => x.name === o.action)!;
    // a runtime-only action is never run in a box; any other one runs unless it cannot work on this node
    if (a.container!.runtimeOnly) assert.equal([o.status, o.reason], ['unavailable', runtimeOnly(a.container!.runtimeOnly)], o.action);
    else if (o.status === 'unavailable') assert.is(o.reason, a.unavailable?.(), o.action);
  }
  const boxes = boxesOf(r.stderr);
  for (const [kind, box] of boxes) assert.is(box.id, basename(box.cgroup).slice(0, 12), kind);
  const performed = outcomes.filter((o) => o.status === 'performed');
  assert.ok(performed.length >= 6, JSON.stringify(outcomes));
  const idOf = (action: string) => boxes.get(CONTAINER_ACTIONS.find((x) => x.name === action)!.container!.privileged ? 'privileged' : 'plain')?.id;
  const fromBox = (o: ActionOutcome) => rae.alerts.some((al) => al.rule === o.rule && al.output_fields['container.id'] === idOf(o.action));
  await rae.waitAlerts(() => performed.every(fromBox), 'cgroup box alerts', 300_000).catch(() => undefined);
  assert.equal(
    performed.filter((o) => !fromBox(o)).map((o) => `${o.rule}: ${JSON.stringify(rae.alerts.filter((al) => al.rule === o.rule).map((al) => al.output_fields['container.id']))}`),
    [],
    "rules without an alert from the box's container.id (container.id of any alert of the rule given)",
  );
  assert.equal(leftovers(), []);
});

t('--containers auto without a runtime: container actions run in a box', async () => {
  const none = join(root, 'no-runtime.yaml');
  const absent = join(root, 'no-such-dir', 'docker.sock');
  writeFileSync(none, `containers:\n  docker:\n    enabled: true\n    sockets: ["${absent}"]\n  cri:\n    enabled: false\n  podman:\n    enabled: false\n`);
  const r = await generator(['run', '--json', '--sleep', '0', '-c', none, '--state-dir', join(root, 'state'), '--detect-wait', '0', '^syscall\\.DropAndExecuteNewBinaryInContainer$']).done;
  assert.is(r.code, 0, r.stderr);
  assert.equal(
    parseOutcomes(r.stdout).map((o) => o.status),
    ['performed'],
  );
  assert.match(r.stderr, `container actions in cgroup boxes (no runtime: needs a container runtime with the Docker/Podman Engine API (containers.docker.sockets, containers.podman.sockets): docker ${absent}: absent)`);
  assert.ok(boxesOf(r.stderr).has('plain'), r.stderr);
  assert.equal(leftovers(), []);
});

t('SIGTERM during a run removes the boxes before the generator exits', async () => {
  // --loop: the run goes on until the signal, which comes once the privileged box is there
  const action = CONTAINER_ACTIONS.find((a) => a.container!.privileged && !a.container!.runtimeOnly)!;
  const g = generator(['run', '--containers', 'cgroup', '--all', '--loop', '--sleep', '200ms', '--detect-wait', '0', '-c', cfg, '--state-dir', join(root, 'state'), `^${action.name.replace('.', '\\.')}$`], (err) => {
    if (/started privileged container/.test(err) && g.child.exitCode === null && !g.child.killed) g.child.kill('SIGTERM');
  });
  const r = await g.done;
  assert.match(r.stderr, 'started privileged container');
  assert.match(r.stderr, /removed container [0-9a-f]{12}/);
  assert.is(r.code, 128 + 15, r.stderr);
  assert.equal(leftovers(), []);
});

test.run();
