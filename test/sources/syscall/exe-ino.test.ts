// proc.exe_ino.ctime, proc.exe_ino.mtime and proc.exe_ino.ctime_duration_proc_start on real kernel
// records (the stable rule 'Drop and execute new binary in container' prints them): a copy of
// /bin/true whose mtime the test sets is executed; the probe reads its inode's times at the exec,
// as the modern probe fills execve's exe_ino_ctime/mtime, and the duration is libsinsp's
// clone_ts - exe_ino_ctime (parse_execve_exit): the process's start as epoch ns minus the ctime.
// A rule comparing all three matches in the compiled module, its output prints them, both
// translators agree, and the /proc bootstrap reads the same times from /proc/PID/exe.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { HDR, KIND, PROC } from '../../../host/abi/records.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { readProcess } from '../../../host/sources/syscall/procfs.js';
import { compileAll } from '../../../support/differential.js';
import { fieldRef } from '../../helpers/field-ref.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin } from './recording.js';

const gate = kernelGate('exe-ino.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'proc.exe_ino.ctime', 'proc.exe_ino.mtime', 'proc.exe_ino.ctime_duration_proc_start'];
/** 2001-02-03T04:05:06.5Z, the mtime the test gives its binary. */
const MTIME_S = 981_173_106.5;

let dir = '';
test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rae-exe-ino-'));
});
test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A copy of `from` in the test's directory with the test's mtime; its stat (ns times). */
function binary(from: string, name: string): { path: string; ctimeNs: bigint; mtimeNs: bigint } {
  const path = join(dir, name);
  copyFileSync(from, path);
  utimesSync(path, MTIME_S, MTIME_S);
  const st = statSync(path, { bigint: true });
  return { path, ctimeNs: st.ctimeNs, mtimeNs: st.mtimeNs };
}

run_('exe_ino: an exec has its file inode ctime and mtime (epoch ns) and the start minus that ctime; conditions and outputs read them', async () => {
  const bin = binary('/bin/true', 'rae-exe-ino-true');
  assert.is(bin.mtimeNs, 981_173_106_500_000_000n);
  let pid = 0;
  const rec = recordKernel(['execve'], () => {
    pid = spawnSync(bin.path).pid ?? 0;
  });
  assert.ok(pid > 0);
  // the exec record of the child: its start (boot ns) as epoch ns, less the ctime
  const dv = new DataView(rec.buf.buffer);
  let startNs = 0n;
  for (let off = 0; off < rec.fill; off += dv.getUint32(off + HDR.len, true)) if (dv.getUint16(off + HDR.kind, true) === KIND.EXEC && dv.getUint32(off + HDR.pid, true) === pid) startNs = dv.getBigUint64(off + PROC.start_ns, true);
  assert.ok(startNs > 0n, 'the probe recorded the exec');
  const since = startNs + rec.epochNs - bin.ctimeNs;
  assert.ok(since > 0n && since < 600_000_000_000n, `the process started after the copy was made (${since} ns)`);

  const text = [
    '- rule: exe times',
    '  desc: d',
    `  condition: evt.type = execve and proc.exe_ino.mtime = ${bin.mtimeNs} and proc.exe_ino.ctime = ${bin.ctimeNs} and proc.exe_ino.ctime_duration_proc_start = ${since}`,
    '  output: ctime=%proc.exe_ino.ctime mtime=%proc.exe_ino.mtime since=%proc.exe_ino.ctime_duration_proc_start',
    '  priority: NOTICE',
  ].join('\n');
  const loaded = loadRules([{ name: 'r.yaml', text }]);
  assert.ok(loaded.ok, JSON.stringify(loaded.diagnostics));
  const m = await compileAll(loaded.ruleset.rules);
  const refs = FIELDS.map(fieldRef);

  const pass = translatorsPass(rec, m, 'exe-ino', refs);
  assert.equal(
    pass.native.filter((r, i) => r !== pass.oracle[i]),
    [],
  );

  const execs: Array<{ off: number; v: Record<string, unknown> }> = [];
  bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'exe-ino' }), (off, ev) => {
    const v = Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)]));
    if (dv.getUint32(off + HDR.pid, true) === pid && v['evt.type'] === 'execve') execs.push({ off, v });
  });
  assert.is(execs.length, 1, 'one execve event of the child');
  assert.equal(execs[0]!.v, { 'evt.type': 'execve', 'proc.exe_ino.ctime': bin.ctimeNs, 'proc.exe_ino.mtime': bin.mtimeNs, 'proc.exe_ino.ctime_duration_proc_start': since });
  // the compiled module (the C translator) matches the child's exec, and only it
  const matched = bytesPass(rec, m, new KernelIngest({ hostname: 'exe-ino' }), () => {});
  assert.equal(
    [...matched.entries()].filter(([, rules]) => rules.includes('exe times')).map(([off]) => off),
    [execs[0]!.off],
  );
});

run_('exe_ino: the /proc bootstrap reads the exe inode times of a running process', async () => {
  const bin = binary('/bin/sleep', 'rae-exe-ino-sleep');
  const child = spawn(bin.path, ['300'], { stdio: 'ignore' });
  try {
    await new Promise<void>((done, fail) => {
      child.once('spawn', done);
      child.once('error', fail);
    });
    const p = readProcess(child.pid!);
    assert.ok(p, 'the process is readable in /proc');
    assert.is(p!.exeCtimeNs, bin.ctimeNs);
    assert.is(p!.exeMtimeNs, bin.mtimeNs);
  } finally {
    child.kill('SIGKILL');
  }
});

test.run();
