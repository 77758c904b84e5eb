// The overlayfs layer of an executable on real kernel records, both translators: evt.arg.flags of
// execve (libs' execve_flags) and proc.is_exe_lower_layer / proc.is_exe_upper_layer. In a private
// mount namespace (unshare; the overlay goes with it) the test mounts an overlay of directories it
// makes, as libs' drivers test execve_x does (CREATE_OVERLAY_FS: a copy of /bin/true in the lower
// layer, one written through the mount), and runs: the lower file as root (libs expects
// EXE_WRITABLE|EXE_LOWER_LAYER) and as nobody (EXE_LOWER_LAYER: not writable); a lower-layer
// shell whose forked subshell opens a file (the fork keeps the layer); the lower file again once
// opened for writing, which copies it up (EXE_WRITABLE|EXE_UPPER_LAYER); the file written through
// the mount (EXE_WRITABLE|EXE_UPPER_LAYER, libs' execveX_upperlayer_success); and a root-owned
// file of no overlay as nobody (0). Conditions on the flags and on proc.is_exe_lower_layer match
// through the C translator (ingest-arg.c exec_flags, the module's thread-entry read).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { compileAll } from '../../../support/differential.js';
import { kernelGate } from './collector.js';
import { bytesPass, type Recording, recordKernel, translatorsPass, twin } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('exe-layer.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'proc.pid', 'proc.exepath', 'user.uid', 'fd.name', 'evt.arg.flags', 'proc.is_exe_writable', 'proc.is_exe_upper_layer', 'proc.is_exe_lower_layer'];
const refs = FIELDS.map(fieldRef);
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'].join(' ');

const dir = mkdtempSync(join(tmpdir(), 'rae-exe-layer-'));
const merged = join(dir, 'merged');
let rec: Recording | undefined;

test.before(() => {
  if (!gate.run) return;
  chmodSync(dir, 0o755); // nobody runs files under it
  for (const d of ['lower', 'upper', 'work', 'merged', 'plain']) mkdirSync(join(dir, d), { mode: 0o755 });
  copyFileSync('/bin/true', join(dir, 'lower/lowertrue'));
  copyFileSync('/bin/dash', join(dir, 'lower/lowersh'));
  copyFileSync('/bin/true', join(dir, 'plain/true'));
  for (const f of ['lower/lowertrue', 'lower/lowersh', 'plain/true']) chmodSync(join(dir, f), 0o755);
  const script = [
    'set -e',
    `mount -t overlay overlay -o lowerdir=${dir}/lower,upperdir=${dir}/upper,workdir=${dir}/work ${merged}`,
    `${merged}/lowertrue`,
    `${NOBODY} ${merged}/lowertrue`,
    `${merged}/lowersh -c '( : < /etc/hostname ); :'`,
    `: >> ${merged}/lowertrue`, // opened for writing: copied up
    `${merged}/lowertrue`,
    `cp /bin/true ${merged}/uppertrue`,
    `${merged}/uppertrue`,
    `${NOBODY} ${dir}/plain/true`,
    `umount ${merged}`, // and were the script cut short, the namespace takes the mount with it
  ].join('\n');
  rec = recordKernel(['execve', 'openat'], () => {
    execFileSync('unshare', ['--mount', '--propagation', 'private', '/bin/sh', '-c', script], { stdio: ['ignore', 'ignore', 'inherit'] });
  });
});

test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

run_("exe layer: evt.arg.flags of execve names the overlay layer as libs' drivers do, both translators alike; a fork keeps the layer", async () => {
  const r = rec!;
  const m = await compileAll(loadRules([{ name: 'r.yaml', text: '- rule: any exec\n  desc: d\n  condition: evt.type = execve\n  output: x\n  priority: NOTICE\n' }]).ruleset.rules);
  const pass = translatorsPass(r, m, 'exe-layer', refs);
  assert.ok(pass.native.length > 0);
  assert.equal(pass.native.filter((x, i) => x !== pass.oracle[i]).slice(0, 10), []);

  const seen: Array<Record<string, unknown>> = [];
  bytesPass(r, twin(m), new KernelIngest({ native: false, hostname: 'exe-layer' }), (_off, ev) => {
    const v = Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)]));
    if (String(v['proc.exepath']).startsWith(`${dir}/`)) seen.push(v);
  });
  const execs = seen.filter((v) => v['evt.type'] === 'execve').map((v) => [v['proc.exepath'], v['user.uid'], v['evt.arg.flags'], v['proc.is_exe_lower_layer'], v['proc.is_exe_upper_layer']]);
  assert.equal(execs, [
    [`${merged}/lowertrue`, 0, 'EXE_WRITABLE|EXE_LOWER_LAYER', true, false],
    [`${merged}/lowertrue`, 65534, 'EXE_LOWER_LAYER', true, false],
    [`${merged}/lowersh`, 0, 'EXE_WRITABLE|EXE_LOWER_LAYER', true, false],
    [`${merged}/lowertrue`, 0, 'EXE_WRITABLE|EXE_UPPER_LAYER', false, true],
    [`${merged}/uppertrue`, 0, 'EXE_WRITABLE|EXE_UPPER_LAYER', false, true],
    [`${dir}/plain/true`, 65534, '0', false, false],
  ]);
  // the subshell's open of /etc/hostname: a forked process that never exec'd, lower as its parent
  const shell = seen.find((v) => v['evt.type'] === 'execve' && v['proc.exepath'] === `${merged}/lowersh`)!;
  const opens = seen.filter((v) => v['evt.type'] === 'openat' && v['fd.name'] === '/etc/hostname');
  assert.is(opens.length, 1, JSON.stringify(opens));
  assert.is.not(opens[0]!['proc.pid'], shell['proc.pid']);
  assert.is(opens[0]!['proc.is_exe_lower_layer'], true);
  assert.is(opens[0]!['proc.is_exe_upper_layer'], false);
});

run_('exe layer: conditions on evt.arg.flags and proc.is_exe_lower_layer match through the C translator', async () => {
  const r = rec!;
  const rules = [
    ['lower exec', `evt.type = execve and evt.arg.flags = "EXE_WRITABLE|EXE_LOWER_LAYER" and proc.exepath startswith "${dir}/"`],
    ['copied-up exec', `evt.type = execve and evt.arg.flags contains EXE_UPPER_LAYER and proc.exepath startswith "${dir}/"`],
    ['open by a lower-layer process', `evt.type = openat and fd.name = /etc/hostname and proc.is_exe_lower_layer = true and proc.exepath startswith "${dir}/"`],
  ];
  const text = rules.map(([name, cond]) => `- rule: ${name}\n  desc: d\n  condition: ${cond}\n  output: "%evt.arg.flags"\n  priority: NOTICE\n`).join('');
  const loaded = loadRules([{ name: 'layer.yaml', text }]);
  assert.ok(loaded.ok, JSON.stringify(loaded.diagnostics));
  const m = await compileAll(loaded.ruleset.rules);
  const pass = translatorsPass(r, m, 'exe-layer');
  assert.equal(pass.native.filter((x, i) => x !== pass.oracle[i]).slice(0, 10), []);
  const matched = bytesPass(r, m, new KernelIngest({ hostname: 'exe-layer' }), () => {});
  const counts: Record<string, number> = {};
  for (const names of matched.values()) for (const n of names) counts[n] = (counts[n] ?? 0) + 1;
  assert.equal(counts, { 'lower exec': 2, 'copied-up exec': 2, 'open by a lower-layer process': 1 });
});

test.run();
