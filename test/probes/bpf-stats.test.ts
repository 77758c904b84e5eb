// BPF program statistics (support/bpf-stats.ts), as the capture bench reads them: with
// kernel.bpf_stats_enabled on, the real probe attached in this process has each of its programs
// found by this process's fds and counted (runs and run time) once real processes fork, exec, make
// syscalls and exit; the setting goes back to what it was after, and also when the process that
// turned it on fails or is stopped by SIGINT. Figures are checked for presence and plausibility,
// never against a time. Skipped loudly where the probe cannot run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { abi, syscallIds } from '../../host/sources/syscall/index.js';
import { bpfStatsSetting, enableBpfStats, programRuns, runsBetween } from '../../support/bpf-stats.js';
import type { EventRecord, ExitRecord } from '../helpers/record-decoder.js';
import { Collector, kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('bpf-stats.test.ts');
const t = gate.run ? test : test.skip;
const PROGRAMS = ['on_exec', 'on_exit', 'on_fork', 'on_sys_exit'];

/** Runs `cmd` to its exit; resolves with its pid. */
function run(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve(child.pid!));
  });
}

t("the probe's own programs are found by this process's fds and counted while the statistics are on", async () => {
  const before = bpfStatsSetting();
  const restore = enableBpfStats();
  let c: Collector | undefined;
  try {
    assert.is(bpfStatsSetting(), '1');
    assert.equal(programRuns(process.pid), [], 'no program before the probe is attached');
    c = new Collector();
    c.cap.setInterestingSyscalls(syscallIds(['openat']).ids);
    const attached = programRuns(process.pid);
    assert.equal(attached.map((p) => p.name).sort(), PROGRAMS, 'the four programs of probes/src/probe.bpf.c, once each');
    // a fork, an exec, openat calls and an exit, waited for through the probe's own records
    const pid = await run('/bin/cat', ['/etc/hostname']);
    await c.waitFor(
      (r: EventRecord): r is ExitRecord => r.kind === abi.KIND.EXIT && r.pid === pid,
      (rs) => rs.length > 0,
    );
    const ran = runsBetween(attached, programRuns(process.pid));
    for (const p of ran) {
      assert.ok(p.runCnt > 0, `${p.name} ran (${p.runCnt} runs)`);
      assert.ok(p.runTimeNs > 0, `${p.name} has run time (${p.runTimeNs} ns)`);
      // plausible: a program run is well under a millisecond, and the clock counts at least 1 ns a run
      assert.ok(p.runTimeNs / p.runCnt < 1e6, `${p.name}: ${p.runTimeNs / p.runCnt} ns per run`);
    }
    const sysExit = ran.find((p) => p.name === 'on_sys_exit')!;
    assert.ok(sysExit.runCnt >= ran.find((p) => p.name === 'on_exec')!.runCnt, 'every exec ends in a syscall exit');
  } finally {
    c?.close();
    restore();
  }
  assert.equal(programRuns(process.pid), [], 'the programs go with the probe');
  assert.is(bpfStatsSetting(), before, 'the setting is back as it was');
});

/**
 * A node process that turns the statistics on, says `on` and waits: `stop` then either sends it
 * SIGINT or has it throw (a line on its stdin). Resolves with its exit, its output and the setting
 * seen while it waited.
 */
function child(stop: 'SIGINT' | 'throw'): Promise<{ code: number | null; out: string; seen: string }> {
  const mod = JSON.stringify(fileURLToPath(new URL('../../support/bpf-stats.ts', import.meta.url)));
  const code = `const m = await import(${mod}); m.enableBpfStats(); process.stdin.once('data', () => { throw new Error('failing after enabling'); }); process.stdout.write('on\\n');`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let seen = '';
    p.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (seen || !out.includes('on\n')) return;
      seen = bpfStatsSetting();
      if (stop === 'SIGINT') p.kill('SIGINT');
      else p.stdin!.write('now\n');
    });
    p.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    p.on('error', reject);
    p.on('exit', (code) => resolve({ code, out, seen }));
  });
}

/**
 * Waits until kernel.bpf_stats_enabled is off: another process measuring (a capture bench on the
 * same machine) holds it on, and a child finding it on leaves it alone, which is not the case
 * this test is about. Up to ten minutes, then fails saying so.
 */
async function statsOff(): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (bpfStatsSetting() !== '0') {
    if (Date.now() > deadline) throw new Error('kernel.bpf_stats_enabled stayed on for 10 minutes: another process is measuring BPF statistics');
    await new Promise((r) => setTimeout(r, 1000));
  }
}

t('the setting is restored when the process that turned it on is stopped by SIGINT or fails', async () => {
  await statsOff();
  const before = bpfStatsSetting();
  const stopped = await child('SIGINT');
  assert.is(stopped.seen, '1', `on while the child ran\n${stopped.out}`);
  assert.is(stopped.code, 130, `the child exits as stopped by SIGINT\n${stopped.out}`);
  assert.is(bpfStatsSetting(), before, 'back as it was after SIGINT');
  await statsOff();
  const failed = await child('throw');
  assert.is(failed.seen, '1', `on while the child ran\n${failed.out}`);
  assert.is(failed.code, 1, `the child failed\n${failed.out}`);
  assert.match(failed.out, 'failing after enabling');
  assert.is(bpfStatsSetting(), before, 'back as it was after the failure');
});

test.run();
