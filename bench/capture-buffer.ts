// The cost of I/O buffer capture (evt.buffer, evt.arg.data), real kernel, root: the live syscall
// source with the stable rules plus one rule on write(2), against a write(2) load generator (256
// bytes to /dev/null per call), paced at 50k/s and then unpaced, 3 s per step. Twice: the extra
// rule reads no buffer (`buffer_off_`: the probe records write without its data, as for any rule
// set that reads none) and reads evt.buffer (`buffer_on_`: the probe copies the first snaplen,
// 80, bytes of each write, the translator writes evt.buffer). Figures per step as capture.ts's
// (generator ns per op is the kernel-side cost, charged to the writer), then the difference of
// the unpaced steps: buffer_capture_generator_ns_per_event and buffer_capture_engine_cores_per_million.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinRulesFiles } from '../host/engine/builtin.js';
import { DetectionEngine } from '../host/runtime/detection-engine.js';
import { KernelIngest } from '../host/sources/syscall/ingest.js';
import { startSyscallSource } from '../host/sources/syscall/source.js';
import { enableBpfStats } from '../support/bpf-stats.js';
import { buildLoadgen, probeMissing, step, type Step } from './capture.js';
import { figure, progress } from './report.js';

const S = 'capture';

/** The extra rule on write: reading evt.buffer or not (it never matches the generator's bytes). */
function writeRule(buffer: boolean): { name: string; text: string } {
  const condition = buffer ? 'evt.type = write and evt.buffer bcontains cafebabe' : 'evt.type = write and proc.name = rae-no-such-process';
  return { name: 'bench-write.yaml', text: `- rule: bench write\n  desc: d\n  condition: ${condition}\n  output: w\n  priority: NOTICE\n` };
}

/** The write steps with the buffer read or not. */
async function scenario(bin: string, buffer: boolean): Promise<Step[]> {
  const label = buffer ? 'buffer_on_' : 'buffer_off_';
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', kernel: new KernelIngest({ hostname: 'bench' }), hostname: 'bench', onAlert: () => undefined });
  const out = await engine.load([...builtinRulesFiles(['syscall']).files, writeRule(buffer)]);
  if (!out.swapped) throw new Error('the rules did not load');
  const src = startSyscallSource({ engine, log: progress, submit: () => undefined, hostname: 'bench', dropAlertIntervalMs: 1000 });
  const steps: Step[] = [];
  try {
    await new Promise((r) => setTimeout(r, 300));
    for (const rate of [50_000, 0]) steps.push(await step(src, bin, 'write', rate, '/dev/null', 'bytes', 1, label));
  } finally {
    await src.stop();
    await engine.close();
  }
  return steps;
}

/** Runs the scenario (needs root and the built probe). */
export async function run(): Promise<void> {
  if (probeMissing(S, 'buffer_unavailable', 'capture-buffer')) return;
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-buffer-'));
  const restoreBpfStats = enableBpfStats(); // the steps' probe figures (capture.ts)
  try {
    const bin = buildLoadgen(dir);
    const off = (await scenario(bin, false)).at(-1)!;
    const on = (await scenario(bin, true)).at(-1)!;
    const nsPerOp = (s: Step) => (s.generatorCores * 1e9) / s.opsPerS;
    const coresPerM = (s: Step) => s.cores / (s.recordsPerS / 1e6);
    figure(S, 'buffer_capture_generator_ns_per_event', nsPerOp(on) - nsPerOp(off), 'ns', {
      snaplen: 80,
      off_ns_per_op: Math.round(nsPerOp(off)),
      on_ns_per_op: Math.round(nsPerOp(on)),
      off_ops_per_s: Math.round(off.opsPerS),
      on_ops_per_s: Math.round(on.opsPerS),
    });
    figure(S, 'buffer_capture_engine_cores_per_million', coresPerM(on) - coresPerM(off), 'cores', {
      off: Number(coresPerM(off).toFixed(3)),
      on: Number(coresPerM(on).toFixed(3)),
      off_records_per_s: Math.round(off.recordsPerS),
      on_records_per_s: Math.round(on.recordsPerS),
      drops: off.lost + off.shed + on.lost + on.shed,
    });
  } finally {
    restoreBpfStats();
    rmSync(dir, { recursive: true, force: true });
  }
}
