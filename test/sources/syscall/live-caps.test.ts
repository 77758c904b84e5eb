// Live detection of the stable CRITICAL rule 'Detect release_agent File Container Escapes' (root,
// real kernel, cgroup v2, the real `rae run` with the bundled rules): the rule reads
// thread.cap_effective, which both paths now provide, so the run stays on the byte path. A
// temporary cgroup named like a Docker container scope (docker-<64 hex>.scope, from which
// container.id is derived: thread-table.ts containerId) holds a short-lived
// shell that moves itself in and then execs a shell (the new image's record carries the new
// cgroup) that opens for writing a file named release_agent in a temporary directory. Nothing
// escapes anything: the file is an ordinary temp file and the cgroup is removed afterwards.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { cgroup2Mount } from '../../../host/sources/syscall/procfs.js';
import { kernelGate } from './collector.js';

const gate = kernelGate('live-caps.test.ts');
/** The cgroup v2 mount (/sys/fs/cgroup on unified hosts, /sys/fs/cgroup/unified on hybrid ones). */
const cgroup2 = cgroup2Mount();
const run_ = gate.run && cgroup2 ? test : test.skip;
if (gate.run && !cgroup2) process.stderr.write('\n!!! live-caps.test.ts: SKIPPING: no cgroup2 mount in /proc/mounts\n\n');
const root = mkdtempSync(join(tmpdir(), 'rae-live-caps-'));
let rae: RaeRun;

/** Runs a command and resolves with its exit code. */
function run(cmd: string, args: string[]): Promise<number | null> {
  return new Promise((done) => spawn(cmd, args, { stdio: 'ignore' }).on('exit', (code) => done(code)));
}

run_('live caps: rae run with the bundled rules reads thread.cap_* from kernel events', async () => {
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\n');
  rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')]);
  await rae.waitLog(/run: ready/);
  assert.match(rae.stderr(), /module: source syscall started/);
  assert.not.match(rae.stderr(), /kernel events do not provide (thread\.|user\.|proc\.)/);
});

run_("live caps: a root shell in a container-named cgroup writing a release_agent file gives 'Detect release_agent File Container Escapes'", async () => {
  const hex = randomBytes(32).toString('hex');
  const cg = join(cgroup2!, `docker-${hex}.scope`);
  const dir = mkdtempSync(join(root, 'ra-'));
  const file = join(dir, 'release_agent');
  mkdirSync(cg);
  try {
    // the shell moves itself into the cgroup, then execs the writer (whose exec record carries the cgroup)
    const code = await run('/bin/sh', ['-c', `echo $$ > ${cg}/cgroup.procs && exec /bin/sh -c 'echo x > ${file}'`]);
    assert.is(code, 0);
    assert.ok(existsSync(file));
    const rule = 'Detect release_agent File Container Escapes';
    const seen = (as: RaeRun['alerts']) => as.some((a) => a.rule === rule && a.output_fields['fd.name'] === file);
    await rae.waitAlerts(seen, `${rule} on ${file}`, 10_000).catch((err: Error) => {
      throw new Error(`${err.message.split('\n')[0]}; alerts seen: ${rae.alerts.map((a) => `${a.rule} ${JSON.stringify(a.output_fields)}`).join(' ; ') || 'none'}`);
    });
    const a = rae.alerts.find((x) => x.rule === rule && x.output_fields['fd.name'] === file)!;
    assert.is(a.source, 'syscall');
    const caps = String(a.output_fields['thread.cap_effective']).split(' ');
    assert.ok(caps.includes('CAP_SYS_ADMIN') && caps.includes('CAP_DAC_OVERRIDE'), String(a.output_fields['thread.cap_effective']));
    assert.is(a.output_fields['evt.type'], 'openat');
    assert.is(a.output_fields['proc.name'], 'sh');
    assert.is(a.output_fields['user.uid'], 0);
    // Falco adds the container fields to a rule's output fields (container.id from the cgroup name)
    assert.is(a.output_fields['container.id'], hex.slice(0, 12));
  } finally {
    // the writer has exited: the cgroup is empty once the kernel has reaped it
    for (let i = 0; i < 100 && existsSync(cg); i++) {
      try {
        rmdirSync(cg);
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  assert.not.ok(existsSync(cg), `${cg} removed`);
});

run_('live caps: rae run stops cleanly', async () => {
  assert.is(await rae.stop(), 0, rae.stderr());
  rmSync(root, { recursive: true, force: true });
});

test.run();
