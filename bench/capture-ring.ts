// The ring buffer's size against drops (a part of `capture`: `npm run bench -- capture` runs it
// too, `npm run bench -- capture-ring` alone), real kernel, root: the live syscall source with the
// stable rules, as capture.ts runs it, at the capture bench's hardest steps (two unpaced
// openat/close generators at once, then unpaced fork+exec) for each syscall.bufSizePreset from 3
// to 6 on this machine's CPUs, the presets interleaved over RAE_BENCH_RING_ROUNDS rounds (default
// 3) so that the machine's load falls on each alike. Figures: each step as capture.ts's (named
// ring_preset_N_...), and ring_preset_N_drops, the kernel-lost and shed records summed over the
// rounds. The smallest preset with no drop is what the default may be (syscall.bufSizePreset,
// host/sources/syscall/addon.ts): the ring's pages are resident twice (the kernel maps them twice
// for the reader), so every preset above it costs the node memory for nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinRulesFiles } from '../host/engine/builtin.js';
import { DetectionEngine } from '../host/runtime/detection-engine.js';
import { DEFAULT_BUF_SIZE_PRESET, ringBytesFor } from '../host/sources/syscall/addon.js';
import { KernelIngest } from '../host/sources/syscall/ingest.js';
import { startSyscallSource } from '../host/sources/syscall/source.js';
import { buildLoadgen, probeMissing, step, type Step } from './capture.js';
import { figure, progress } from './report.js';

const S = 'capture';
const PRESETS = [3, 4, 5, 6];

/** The hardest steps with a ring of `preset` on this machine's CPUs. */
async function withPreset(engine: DetectionEngine, bin: string, file: string, preset: number): Promise<Step[]> {
  const ringBufferBytes = ringBytesFor(preset, cpus().length);
  const src = startSyscallSource({ engine, log: progress, submit: () => undefined, hostname: 'bench', dropAlertIntervalMs: 1000, capture: { ringBufferBytes } });
  const extra = { preset, ring_bytes: ringBufferBytes };
  try {
    await new Promise((r) => setTimeout(r, 300));
    return [await step(src, bin, 'open', 0, file, 'bytes', 2, `ring_preset_${preset}_`, extra), await step(src, bin, 'exec', 0, file, 'bytes', 1, `ring_preset_${preset}_`, extra)];
  } finally {
    await src.stop();
  }
}

/** Runs the scenario (needs root and the built probe). */
export async function run(): Promise<void> {
  if (probeMissing(S, 'ring_unavailable', 'capture-ring')) return;
  const rounds = Number(process.env.RAE_BENCH_RING_ROUNDS ?? 3);
  if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`capture-ring: RAE_BENCH_RING_ROUNDS must be a whole number from 1, not ${process.env.RAE_BENCH_RING_ROUNDS}`);
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-ring-'));
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', kernel: new KernelIngest({ hostname: 'bench' }), hostname: 'bench', onAlert: () => undefined });
  try {
    const bin = buildLoadgen(dir);
    const file = join(dir, 'some-file-to-open.txt');
    writeFileSync(file, 'x');
    if (!(await engine.load(builtinRulesFiles(['syscall']).files)).swapped) throw new Error('capture-ring: the built-in syscall rules did not load');
    const drops = new Map<number, { lost: number; shed: number; recordsPerS: number[] }>(PRESETS.map((p) => [p, { lost: 0, shed: 0, recordsPerS: [] }]));
    for (let round = 0; round < rounds; round++) {
      // each round in another order, so no preset always follows the same one
      const order = round % 2 === 0 ? PRESETS : [...PRESETS].reverse();
      for (const preset of order) {
        progress(`capture-ring: round ${round + 1}/${rounds}, preset ${preset}`);
        const d = drops.get(preset)!;
        for (const s of await withPreset(engine, bin, file, preset)) {
          d.lost += s.lost;
          d.shed += s.shed;
          if (s.mode === 'open') d.recordsPerS.push(s.recordsPerS);
        }
      }
    }
    for (const [preset, d] of drops) {
      figure(S, `ring_preset_${preset}_drops`, d.lost + d.shed, 'records', {
        preset,
        ring_bytes: ringBytesFor(preset, cpus().length),
        cpus: cpus().length,
        rounds,
        lost: d.lost,
        shed: d.shed,
        top_step_records_per_s: d.recordsPerS.map(Math.round),
        default: preset === DEFAULT_BUF_SIZE_PRESET,
      });
    }
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
