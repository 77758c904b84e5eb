// What the kernel probe costs the tasks it runs in, apart from the engine (root; a part of
// `capture`: `npm run bench -- capture` runs it too, `npm run bench -- capture-probe` alone). The
// capture bench's open generator (openat + close, unpaced) runs STEP_S seconds in each of four
// states, ROUNDS times over in turn so that the machine's load falls on all of them alike:
//   none         no probe loaded;
//   probe        the probe attached with the stable rules' syscalls (what `rae run` records for
//                them), BPF statistics off: what a node runs;
//   probe_stats  the same with kernel.bpf_stats_enabled on, as the capture bench measures it;
//   idle_stats   the probe with no syscall recorded (every run returns at the table read), on.
// This process drains the ring and drops the records. The generator counts its own CPU time (user
// and system: the probe runs in its syscalls' exits), so the differences between states are what
// the probe costs a syscalling task, whatever else the machine runs. Figures, medians over the
// rounds: probe_task_ns_per_syscall (probe minus none, per generator syscall: the program and the
// syscall slow path that any program on sys_exit puts every syscall of every task through, which
// the statistics never count), probe_stats_ns_per_syscall (what turning the statistics on adds),
// probe_run_ns_per_run and probe_idle_run_ns_per_run (run_time_ns per run of on_sys_exit while
// recording and while recording nothing: the latter is the floor every run pays with the
// statistics on, their clock reads included), probe_run_ns_per_record (the recording state's run
// time less that floor for each run, per record) and generator_ns_per_op per state.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinRulesFiles } from '../host/engine/builtin.js';
import { loadRules } from '../host/engine/index.js';
import { DEFAULT_BUF_SIZE_PRESET, ringBytesFor } from '../host/sources/syscall/addon.js';
import { openCapture, syscallIds, type Capture } from '../host/sources/syscall/index.js';
import { ruleSyscalls } from '../host/sources/syscall/source.js';
import { enableBpfStats, programRuns, runsBetween } from '../support/bpf-stats.js';
import { buildLoadgen, loadgen, probeMissing } from './capture.js';
import { figure, median, progress } from './report.js';

const S = 'capture';
const STEP_S = 2;
const ROUNDS = 3;
/** The open generator's syscalls per op: openat and close (unpaced: no pacing sleeps). */
const SYSCALLS_PER_OP = 2;
const STATES = ['none', 'probe', 'probe_stats', 'idle_stats'] as const;
type State = (typeof STATES)[number];

/** One run of a state: the generator's CPU per op and what on_sys_exit ran meanwhile. */
interface Run {
  nsPerOp: number;
  ops: number;
  runs: number;
  runTimeNs: number;
  records: number;
}

/** Runs the open generator for STEP_S, from its ready line on; resolves with its ops and CPU seconds (its loop's alone). */
async function generate(bin: string, file: string): Promise<{ ops: number; cpu: number }> {
  const g = loadgen(bin, 'open', 0, STEP_S, file);
  await g.ready;
  const { ops, cpu } = await g.go();
  return { ops, cpu };
}

/** The probe attached and drained (records counted, then dropped), recording the syscalls `ids`. */
function attach(ids: readonly number[]): { cap: Capture; records: () => number } {
  const ring = ringBytesFor(DEFAULT_BUF_SIZE_PRESET, cpus().length);
  const cap = openCapture({ ringBufferBytes: ring, wakeupBytes: Math.min(2 << 20, ring / 4), maxLatencyMs: 20 });
  cap.setInterestingSyscalls(ids);
  const view = new Uint8Array(4 << 20);
  const meta = new Uint32Array(1);
  let records = 0;
  cap.watch(() => {
    while (cap.poll(view, meta) > 0) records += meta[0]!;
  });
  return { cap, records: () => records };
}

/** One STEP_S run of the generator in `state`. */
async function runState(state: State, bin: string, file: string, ids: readonly number[]): Promise<Run> {
  const restore = state.endsWith('_stats') ? enableBpfStats() : () => undefined;
  const probe = state === 'none' ? undefined : attach(state === 'idle_stats' ? [] : ids);
  try {
    await new Promise((r) => setTimeout(r, 200)); // what the attach itself queued is drained first
    const before = programRuns(process.pid);
    const records0 = probe?.records() ?? 0;
    const g = await generate(bin, file);
    await new Promise((r) => setTimeout(r, 100)); // the last records drained
    const exit = runsBetween(before, programRuns(process.pid)).find((p) => p.name === 'on_sys_exit');
    const lost = probe?.cap.stats().lost ?? 0;
    if (lost > 0) progress(`capture-probe: ${state}: ${lost} records lost (the ring filled): its figures are low`);
    return { nsPerOp: (g.cpu * 1e9) / g.ops, ops: g.ops, runs: exit?.runCnt ?? 0, runTimeNs: exit?.runTimeNs ?? 0, records: (probe?.records() ?? 0) - records0 };
  } finally {
    probe?.cap.close();
    restore();
  }
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** Runs the scenario (needs root and the built probe). */
export async function run(): Promise<void> {
  if (probeMissing(S, 'probe_unavailable', 'capture-probe')) return;
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-probe-'));
  try {
    const bin = buildLoadgen(dir);
    const file = join(dir, 'some-file-to-open.txt');
    writeFileSync(file, 'x');
    const { ids } = syscallIds(ruleSyscalls(loadRules(builtinRulesFiles(['syscall']).files).ruleset.rules));
    const runs = new Map<State, Run[]>(STATES.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // the order turns each round, so that no state always follows the same one
      for (let i = 0; i < STATES.length; i++) {
        const state = STATES[(i + round) % STATES.length]!;
        progress(`capture-probe: round ${round + 1}/${ROUNDS}: ${state}`);
        runs.get(state)!.push(await runState(state, bin, file, ids));
      }
    }
    report(runs, ids.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints the figures of the rounds' runs. */
function report(runs: ReadonlyMap<State, Run[]>, syscalls: number): void {
  const per = (s: State, f: (r: Run) => number) => median(runs.get(s)!.map(f));
  const opNs = (s: State) => per(s, (r) => r.nsPerOp);
  const detail = { rounds: ROUNDS, step_s: STEP_S, recorded_syscalls: syscalls, ops_per_s: Math.round(per('probe', (r) => r.ops) / STEP_S) };
  for (const s of STATES) figure(S, `probe_generator_ns_per_op_${s}`, round1(opNs(s)), 'ns', detail);
  const task = (opNs('probe') - opNs('none')) / SYSCALLS_PER_OP;
  figure(S, 'probe_task_ns_per_syscall', round1(task), 'ns', { ...detail, cores_per_million_syscalls_per_s: Number((task / 1000).toFixed(4)) });
  figure(S, 'probe_stats_ns_per_syscall', round1((opNs('probe_stats') - opNs('probe')) / SYSCALLS_PER_OP), 'ns', detail);
  const floor = per('idle_stats', (r) => (r.runs > 0 ? r.runTimeNs / r.runs : 0));
  figure(S, 'probe_idle_run_ns_per_run', round1(floor), 'ns', detail);
  figure(S, 'probe_run_ns_per_run', round1(per('probe_stats', (r) => (r.runs > 0 ? r.runTimeNs / r.runs : 0))), 'ns', detail);
  const perRecord = per('probe_stats', (r) => (r.records > 0 ? (r.runTimeNs - r.runs * floor) / r.records : 0));
  figure(S, 'probe_run_ns_per_record', round1(perRecord), 'ns', { ...detail, records_per_op: round1(per('probe_stats', (r) => r.records / r.ops)) });
}
