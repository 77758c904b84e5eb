// Kernel capture end to end (root, real kernel): the live syscall source (host/sources/syscall/
// source.ts) with the bundled syscall rules in a DetectionEngine, in this process, against a C
// load generator in a child process: an openat/close loop and a fork+exec(/bin/true) loop, each
// paced at increasing rates and then unpaced, 3 s per step, and two unpaced openat/close
// generators at once (the highest rate this machine produces; each generator also reports its
// own CPU time, to show whether it, not the engine, limits the rate). A generator starts, then waits
// for a go line before its timed loop: its fork, exec and loading fall before the step, and its CPU
// and ops are its loop's alone. Per step: generator ops/s, records
// captured/s and syscall events evaluated/s, kernel-lost and shed records, this process's CPU
// (process.cpuUsage: JS thread plus the addon's watcher thread) as cores, and RSS. Figures:
// max_events_per_s_no_drops (highest captured records/s of a step with no drop) and
// cores_per_million_events_per_s (engine cores per M records/s at that step) through the byte
// path `rae run` uses, then the same with every built-in syscall set loaded (stable, incubating,
// sandbox: all_sets_...), and the stable rules and every set once more with the probe's open filter
// off (unfiltered_... and all_sets_unfiltered_...: every read-only open recorded, as before that
// filter; the generator's opens are of a file no bundled rule reads, by a process no rule names,
// which the filter leaves in the kernel). What the node pays in all: kernel.bpf_stats_enabled is on for the bench
// (restored after, support/bpf-stats.ts), each step reports the probe's kernel run time as cores
// and per program (runs/s, ns per run), and node_cores_per_million_syscalls_per_s sums the engine's
// CPU and the probe's per million generator syscalls/s, with each apart, and probe_ns_per_run_NAME
// each program's cost per run at that step. Then the cost of capturing proc.env: the exec steps again with the
// probe's environment capture on and off (capture option env), each reporting the engine's CPU
// per exec and the exec'ing processes' CPU per exec (RUSAGE_CHILDREN: the probe reads the new
// image's environment in the exec'ing task), and env_capture_cost_* the differences. Local only.
// The loadgen and the step are shared with capture-buffer.ts (the cost of I/O buffer capture) and
// capture-ring.ts (drops by ring size): `npm run bench -- capture` runs them too. The ring buffer is
// `rae run`'s default (syscall.bufSizePreset 4 on this machine's CPUs; ring_bytes on each step).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinRulesFiles } from '../host/engine/builtin.js';
import { DetectionEngine } from '../host/runtime/detection-engine.js';
import { DEFAULT_BUF_SIZE_PRESET, ringBytesFor } from '../host/sources/syscall/addon.js';
import { probeSupport } from '../host/sources/syscall/index.js';
import { KernelIngest } from '../host/sources/syscall/ingest.js';
import { startSyscallSource, type SyscallSource } from '../host/sources/syscall/source.js';
import { loadRules } from '../host/engine/index.js';
import { RuleCompiler } from '../host/runtime/compiler.js';
import { RuleModule } from '../host/runtime/evaluator.js';
import { HDR, KIND } from '../host/abi/records.js';
import { encodeProcRecord, readProcess } from '../host/sources/syscall/procfs.js';
import { enableBpfStats, programRuns, runsBetween, type ProgramRun } from '../support/bpf-stats.js';
import { figure, progress } from './report.js';

const S = 'capture';
const STEP_S = 3;
/** The ring buffer `rae run` takes here by default. */
const RING_BYTES = ringBytesFor(DEFAULT_BUF_SIZE_PRESET, cpus().length);

const LOADGEN_C = String.raw`
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu_s(const struct rusage *r) { return r->ru_utime.tv_sec + r->ru_stime.tv_sec + (r->ru_utime.tv_usec + r->ru_stime.tv_usec) / 1e6; }
int main(int argc, char **argv) {
  int exec_mode = strcmp(argv[1], "exec") == 0;
  int write_mode = strcmp(argv[1], "write") == 0;
  double rate = atof(argv[2]), secs = atof(argv[3]);
  const char *path = argv[4];
  char payload[256];
  memset(payload, 'x', sizeof(payload));
  int wfd = write_mode ? open(path, O_WRONLY) : -1;
  /* Started (exec'd, loaded, file opened): say so, then wait for the go line, so that none of
     this falls inside the step; the CPU counted is the loop's alone (usage at the go subtracted). */
  char go[8];
  printf("ready\n");
  fflush(stdout);
  if (!fgets(go, sizeof(go), stdin)) return 1;
  struct rusage ru0, rc0; getrusage(RUSAGE_SELF, &ru0); getrusage(RUSAGE_CHILDREN, &rc0);
  double start = now(), end = start + secs;
  long ops = 0, sleeps = 0;
  for (;;) {
    double t = now();
    if (t >= end) break;
    long due = rate > 0 ? (long)((t - start) * rate) + 1 : ops + 64;
    while (ops < due) {
      if (write_mode) {
        if (write(wfd, payload, sizeof(payload)) < 0) return 1;
      } else if (exec_mode) {
        pid_t p = fork();
        if (p == 0) { char *a[] = {"true", NULL}; execv("/bin/true", a); _exit(127); }
        waitpid(p, NULL, 0);
      } else {
        int fd = openat(AT_FDCWD, path, O_RDONLY);
        if (fd >= 0) close(fd);
      }
      ops++;
    }
    if (rate > 0) { struct timespec d = {0, 200000}; nanosleep(&d, NULL); sleeps++; }
  }
  double secs_run = now() - start;
  struct rusage ru, rc; getrusage(RUSAGE_SELF, &ru); getrusage(RUSAGE_CHILDREN, &rc);
  printf("%ld %.6f %.6f %.6f %ld\n", ops, secs_run, cpu_s(&ru) - cpu_s(&ru0), cpu_s(&rc) - cpu_s(&rc0), sleeps);
  return 0;
}
`;

/** A load generator mode: openat+close of a file, fork+exec of /bin/true, or write(2) of 256 bytes to a file. */
export type LoadMode = 'open' | 'exec' | 'write';

/**
 * The generator's syscalls per op, besides one nanosleep per pacing pause (counted): openat and
 * close; one write. An exec's are unknown here (fork, execve and wait4, and what /bin/true and its
 * loader make), so exec steps have no per-syscall figure.
 */
const SYSCALLS_PER_OP: Record<LoadMode, number | undefined> = { open: 2, write: 1, exec: undefined };

/** Compiles the load generator into `dir`; returns its path. */
export function buildLoadgen(dir: string): string {
  const bin = join(dir, 'loadgen');
  writeFileSync(`${bin}.c`, LOADGEN_C);
  execFileSync('cc', ['-O2', '-o', bin, `${bin}.c`]);
  return bin;
}

/** One step's measurements. */
export interface Step {
  mode: LoadMode;
  target: number;
  generators: number;
  opsPerS: number;
  /** The generator's syscalls per second (SYSCALLS_PER_OP), undefined for exec. */
  syscallsPerS: number | undefined;
  /** Generator CPU time per wall second, summed over generators (1 = one core busy). */
  generatorCores: number;
  /** CPU time of the generators' waited-for children (the exec'd processes) per wall second. */
  childCores: number;
  recordsPerS: number;
  eventsPerS: number;
  lost: number;
  shed: number;
  cores: number;
  /** The step's wall time, s (the generators' run and the last drain). */
  wallS: number;
  /** The probe's run time in the kernel per wall second (BPF statistics; 0 while they are off). */
  probeCores: number;
  /** What each of the probe's programs ran during the step. */
  programs: ProgramRun[];
  rssMb: number;
}

/** Generator figures of one run: ops, wall seconds, its CPU seconds, its children's, its pacing sleeps. */
interface LoadgenRun {
  ops: number;
  secs: number;
  cpu: number;
  childCpu: number;
  sleeps: number;
}

/** A started generator: ready (exec'd and loaded) once `ready` resolves; go() starts its timed loop. */
interface StartedLoadgen {
  ready: Promise<void>;
  go(): Promise<LoadgenRun>;
}

/**
 * Starts a generator, which prints "ready" once loaded and then waits for a line on stdin before
 * its timed loop: its start-up (fork, exec, dynamic loading) stays outside the step's figures.
 */
export function loadgen(bin: string, mode: string, rate: number, secs: number, path: string): StartedLoadgen {
  const child = spawn(bin, [mode, String(rate), String(secs), path], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let readySeen!: () => void;
  const ready = new Promise<void>((r) => (readySeen = r));
  const done = new Promise<LoadgenRun>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.startsWith('ready\n')) readySeen();
    });
    // 'close', not 'exit': the exit can come before the last line of stdout has been read
    child.on('close', (code) => {
      const [ops, s, cpu, childCpu, sleeps] = out
        .replace(/^ready\n/, '')
        .trim()
        .split(' ')
        .map(Number);
      readySeen(); // an early exit ends the wait too; the rejection says why
      if (code !== 0 || !ops) reject(new Error(`loadgen ${mode} exited ${code}: ${out}`));
      else resolve({ ops, secs: s!, cpu: cpu ?? 0, childCpu: childCpu ?? 0, sleeps: sleeps ?? 0 });
    });
  });
  done.catch(() => undefined); // awaited through go(); not an unhandled rejection before that
  return {
    ready,
    go: () => {
      child.stdin.end('go\n');
      return done;
    },
  };
}

/** n generators started together; go() runs them at once: ops summed, the longest wall time. */
function loadgens(n: number, bin: string, mode: string, rate: number, secs: number, path: string): { ready: Promise<void>; go(): Promise<LoadgenRun> } {
  const started = Array.from({ length: n }, () => loadgen(bin, mode, rate, secs, path));
  return {
    ready: Promise.all(started.map((g) => g.ready)).then(() => undefined),
    go: async () => {
      const all = await Promise.all(started.map((g) => g.go()));
      const sum = (k: 'ops' | 'cpu' | 'childCpu' | 'sleeps') => all.reduce((a, g) => a + g[k], 0);
      return { ops: sum('ops'), secs: Math.max(...all.map((g) => g.secs)), cpu: sum('cpu'), childCpu: sum('childCpu'), sleeps: sum('sleeps') };
    },
  };
}

/** Per probe program (by name): its runs per second over `wall` and its mean run time. */
function programFigures(programs: readonly ProgramRun[], wall: number): Record<string, { runs_per_s: number; ns_per_run: number }> {
  return Object.fromEntries(programs.map((p) => [p.name, { runs_per_s: Math.round(p.runCnt / wall), ns_per_run: p.runCnt > 0 ? Math.round(p.runTimeNs / p.runCnt) : 0 }]));
}

/** Runs `generators` load generators for STEP_S against the running source; prints the step's figure (named `${label}${mode}_step`, with `extra`). */
export async function step(src: SyscallSource, bin: string, mode: LoadMode, target: number, file: string, path: string, generators = 1, label = '', extra: Record<string, unknown> = {}): Promise<Step> {
  // The generators start first (their start-up is not the step's), then, from an empty ring (wait
  // up to 5 s until the previous step's backlog and their start-up's records are drained), go.
  const gens = loadgens(generators, bin, mode, target, STEP_S, file);
  await gens.ready;
  for (let i = 0, last = -1; i < 50 && src.stats().records !== last; i++) {
    last = src.stats().records;
    await new Promise((r) => setTimeout(r, 100));
  }
  const before = src.stats();
  const runs0 = programRuns(process.pid);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const g = await gens.go();
  await new Promise((r) => setTimeout(r, 150)); // let the last wakeup drain
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const after = src.stats();
  const programs = runsBetween(runs0, programRuns(process.pid));
  const perOp = SYSCALLS_PER_OP[mode];
  const s: Step = {
    mode,
    target,
    generators,
    opsPerS: g.ops / g.secs,
    syscallsPerS: perOp === undefined ? undefined : (g.ops * perOp + g.sleeps) / g.secs,
    generatorCores: g.cpu / g.secs,
    childCores: g.childCpu / g.secs,
    recordsPerS: (after.records - before.records) / wall,
    eventsPerS: (after.events - before.events) / wall,
    lost: after.lost - before.lost,
    shed: after.shed - before.shed,
    cores: (cpu.user + cpu.system) / 1e6 / wall,
    wallS: wall,
    probeCores: programs.reduce((n, p) => n + p.runTimeNs, 0) / 1e9 / wall,
    programs,
    rssMb: process.memoryUsage().rss / 2 ** 20,
  };
  figure(S, `${label}${mode}_step`, s.recordsPerS, 'records/s', {
    path,
    ...extra,
    target_ops_per_s: target || 'unpaced',
    generators,
    generator_cores: Number(s.generatorCores.toFixed(3)),
    child_cores: Number(s.childCores.toFixed(3)),
    generator_ns_per_op: Math.round((s.generatorCores * 1e9) / s.opsPerS),
    ops_per_s: Math.round(s.opsPerS),
    generator_syscalls_per_s: s.syscallsPerS === undefined ? null : Math.round(s.syscallsPerS),
    events_evaluated_per_s: Math.round(s.eventsPerS),
    lost: s.lost,
    shed: s.shed,
    engine_cores: Number(s.cores.toFixed(3)),
    probe_kernel_cores: Number(s.probeCores.toFixed(3)),
    probe_programs: programFigures(s.programs, wall),
    rss_mb: Math.round(s.rssMb),
    ring_bytes: extra.ring_bytes ?? RING_BYTES, // a caller's own ring (capture-ring.ts) names its size
  });
  return s;
}

/** Whether the kernel probe cannot run here; if so, says why on stderr (as `bench`) and as figure `name` of `scenario` (a capture bench then stops). */
export function probeMissing(scenario: string, name: string, bench = scenario): boolean {
  const support = probeSupport();
  if (support.available) return false;
  progress(`${bench}: cannot run: ${support.code}: ${support.reason}`);
  figure(scenario, name, 0, '', { code: support.code, reason: support.reason });
  return true;
}

/** Runs the scenario (needs root and the built probe). */
export async function run(): Promise<void> {
  if (probeMissing(S, 'unavailable')) return;
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-capture-'));
  const bin = buildLoadgen(dir);
  const target = join(dir, 'some-file-to-open.txt');
  writeFileSync(target, 'x');
  // the probe's run time is counted while kernel.bpf_stats_enabled is on: for this bench only
  const restoreBpfStats = enableBpfStats();
  try {
    await scenario(bin, target);
    // the stable rules again with every read-only open recorded (the probe's open filter off: the
    // record path of the commits before it), so that its effect is measured in the same run
    await scenario(bin, target, ['syscall'], false);
    const all = ['syscall', 'syscall-incubating', 'syscall-sandbox'];
    await scenario(bin, target, all);
    // every set with the filter off too (all_sets_unfiltered_...): the record path before two of
    // their rules, which read opens by process name, could leave the filter on
    await scenario(bin, target, all, false);
    await envCost(bin, target);
    await envTableCost();
  } finally {
    restoreBpfStats();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** All steps with the rule sets `sets` loaded (read-only opens no rule can match left in the kernel unless not `filterOpens`: figures `unfiltered_...`); prints their figures. */
async function scenario(bin: string, target: string, sets = ['syscall'], filterOpens = true): Promise<void> {
  const used = 'bytes';
  let alerts = 0;
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', kernel: new KernelIngest({ hostname: 'bench' }), hostname: 'bench', onAlert: () => void alerts++ });
  progress(`capture: loading the built-in rule sets ${sets.join(', ')}`);
  const out = await engine.load(builtinRulesFiles(sets).files);
  if (!out.swapped) throw new Error(`the built-in rule sets ${sets.join(', ')} did not load`);
  // the steps' figures take `label`, the scenario's `prefix` (all_sets_ steps share the stable rules' step names)
  const label = filterOpens ? '' : 'unfiltered_';
  const prefix = `${sets.length > 1 ? 'all_sets_' : ''}${label}`;
  const src = startSyscallSource({ engine, log: progress, submit: () => undefined, hostname: 'bench', dropAlertIntervalMs: 1000, capture: { ringBufferBytes: RING_BYTES, filterOpens } });
  const steps: Step[] = [];
  try {
    await new Promise((r) => setTimeout(r, 300));
    const idle0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 1000));
    const idle = process.cpuUsage(idle0);
    figure(S, `${prefix}idle_engine_cores`, (idle.user + idle.system) / 1e6, 'cores', { path: used });
    for (const rate of [25_000, 50_000, 100_000, 0]) steps.push(await step(src, bin, 'open', rate, target, used, 1, label));
    steps.push(await step(src, bin, 'open', 0, target, used, 2, label));
    for (const rate of [500, 0]) steps.push(await step(src, bin, 'exec', rate, target, used, 1, label));
  } finally {
    await src.stop();
    await engine.close();
  }
  const clean = steps.filter((s) => s.lost === 0 && s.shed === 0);
  const best = clean.reduce<Step | undefined>((b, s) => (!b || s.recordsPerS > b.recordsPerS ? s : b), undefined);
  const drops = steps.reduce((n, s) => n + s.lost + s.shed, 0);
  figure(S, `${prefix}max_events_per_s_no_drops`, best?.recordsPerS ?? 0, 'records/s', { path: used, mode: best?.mode, generators: best?.generators, ops_per_s: Math.round(best?.opsPerS ?? 0), total_drops_all_steps: drops, alerts });
  // CPU per event at the busiest step without drops (a saturated step measures the ceiling).
  const at = best ?? [...steps].sort((a, b) => b.recordsPerS - a.recordsPerS)[0]!;
  figure(S, `${prefix}cores_per_million_events_per_s`, at.cores / (at.recordsPerS / 1e6), 'cores', { path: used, at_records_per_s: Math.round(at.recordsPerS), engine_cores: Number(at.cores.toFixed(3)), mode: at.mode });
  nodeCost(steps, prefix);
  figure(S, `${prefix}rss_mb_max`, Math.max(...steps.map((s) => s.rssMb)), 'MiB', { path: used });
}

/**
 * What a node pays per million generator syscalls per second, at the busiest step without drops
 * whose generator's syscalls are known (not exec): the engine process's CPU (user and system, every
 * thread: process.cpuUsage) and the probe's run time in the kernel (BPF statistics: spent in the
 * syscalling tasks, so not in the former), apart and summed; the probe's programs' run time per
 * run beside. The probe runs on every task's syscalls, so on a busy machine its time includes the
 * other tasks' (on_sys_exit's runs per second against the generator's syscalls per second say how much).
 */
function nodeCost(steps: readonly Step[], prefix: string): void {
  const known = steps.filter((s) => s.syscallsPerS !== undefined && s.lost === 0 && s.shed === 0);
  const at = known.reduce<Step | undefined>((b, s) => (!b || s.syscallsPerS! > b.syscallsPerS! ? s : b), undefined);
  if (!at) return progress(`capture: no step without drops has a known syscall count: ${prefix}node_cores_per_million_syscalls_per_s not measured`);
  const perM = (cores: number) => Number((cores / (at.syscallsPerS! / 1e6)).toFixed(4));
  const detail = { mode: at.mode, generators: at.generators, at_syscalls_per_s: Math.round(at.syscallsPerS!), at_records_per_s: Math.round(at.recordsPerS) };
  figure(S, `${prefix}node_cores_per_million_syscalls_per_s`, perM(at.cores + at.probeCores), 'cores', {
    ...detail,
    engine_cores_per_million: perM(at.cores),
    probe_kernel_cores_per_million: perM(at.probeCores),
    engine_cores: Number(at.cores.toFixed(3)),
    probe_kernel_cores: Number(at.probeCores.toFixed(3)),
  });
  const records = at.recordsPerS * at.wallS;
  for (const p of at.programs) {
    figure(S, `${prefix}probe_ns_per_run_${p.name}`, p.runCnt > 0 ? p.runTimeNs / p.runCnt : 0, 'ns', { ...detail, runs: p.runCnt, ns_per_record: Math.round(p.runTimeNs / records) });
  }
}

/**
 * The cost of proc.env: the exec steps with every built-in syscall set (the environment rules are
 * incubating) with the probe's environment capture on, then off (the bench process's environment
 * is what each exec'd /bin/true inherits). Per rate: env_capture_cost_engine_us_per_exec (this
 * process: records to copy, environments for the thread table) and
 * env_capture_cost_exec_us_per_exec (the exec'ing processes: the probe's read of the environment),
 * each the CPU per exec with capture minus without.
 */
async function envCost(bin: string, target: string): Promise<void> {
  const sets = ['syscall', 'syscall-incubating', 'syscall-sandbox'];
  const envBytes = Object.entries(process.env).reduce((n, [k, v]) => n + k.length + (v ?? '').length + 2, 0);
  const byRate = new Map<number, Partial<Record<'on' | 'off', Step>>>();
  for (const env of [true, false]) {
    const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', kernel: new KernelIngest({ hostname: 'bench' }), hostname: 'bench', onAlert: () => undefined });
    progress(`capture: exec steps with the environment capture ${env ? 'on' : 'off'}`);
    const out = await engine.load(builtinRulesFiles(sets).files);
    if (!out.swapped) throw new Error(`the built-in rule sets ${sets.join(', ')} did not load`);
    const src = startSyscallSource({ engine, log: progress, submit: () => undefined, hostname: 'bench', dropAlertIntervalMs: 1000, capture: { env, ringBufferBytes: RING_BYTES } });
    try {
      await new Promise((r) => setTimeout(r, 300));
      for (const rate of [500, 0]) {
        const s = await step(src, bin, 'exec', rate, target, 'bytes', 1, 'env_', { env_capture: env, env_bytes: envBytes, sets: sets.length });
        byRate.set(rate, { ...byRate.get(rate), [env ? 'on' : 'off']: s });
      }
    } finally {
      await src.stop();
      await engine.close();
    }
  }
  for (const [rate, { on, off }] of byRate) {
    if (!on || !off) continue;
    const us = (s: Step, cores: number) => (cores / s.opsPerS) * 1e6;
    const detail = { target_ops_per_s: rate || 'unpaced', env_bytes: envBytes, ops_per_s_on: Math.round(on.opsPerS), ops_per_s_off: Math.round(off.opsPerS) };
    figure(S, 'env_capture_cost_engine_us_per_exec', us(on, on.cores) - us(off, off.cores), 'us', { ...detail, on: Number(us(on, on.cores).toFixed(2)), off: Number(us(off, off.cores).toFixed(2)) });
    figure(S, 'env_capture_cost_exec_us_per_exec', us(on, on.childCores) - us(off, off.childCores), 'us', {
      ...detail,
      on: Number(us(on, on.childCores).toFixed(2)),
      off: Number(us(off, off.childCores).toFixed(2)),
    });
  }
}

/**
 * The host's share of proc.env per exec, apart from the kernel and the machine's exec rate: EXEC
 * records of 2,000 processes applied to the thread table 10 times over (as the translator applies
 * them), with this process's environment made distinct per record (no sharing: the worst case),
 * with it shared by all, and without one. env_thread_table_us_per_exec: the time per record with
 * a distinct environment minus without.
 */
async function envTableCost(): Promise<void> {
  const rules = loadRules([{ name: 'env.yaml', text: '- rule: env\n  desc: d\n  condition: evt.type = execve and proc.env icontains GLIBC_TUNABLES\n  output: x\n  priority: NOTICE\n' }]).ruleset.rules;
  const compiler = new RuleCompiler();
  const c = await compiler.compile(rules);
  await compiler.close();
  if (!c.ok) throw new Error(c.errors.map((e) => e.message).join('\n'));
  const self = readProcess(process.pid)!;
  const n = 2000;
  const rounds = 10;
  const env = self.env ?? Buffer.alloc(0);
  const us: Record<string, number> = {};
  for (const kind of ['distinct', 'shared', 'none'] as const) {
    const created = RuleModule.create(c.compiled);
    if (!created.ok) throw new Error(created.error.message);
    const ki = new KernelIngest({ native: true, hostname: 'bench' });
    const buf = new Uint8Array(n * 8192);
    let total = 0;
    for (let round = 0; round < rounds; round++) {
      let len = 0;
      for (let i = 0; i < n; i++) {
        const own = kind === 'none' ? undefined : kind === 'shared' ? env : Buffer.concat([env, Buffer.from(`\0RAE_BENCH=${round}-${i}`)]);
        const at = len;
        len += encodeProcRecord({ ...self, pid: 100_000 + i, ppid: 1, env: own }, buf, len, 1n);
        new DataView(buf.buffer, at).setUint16(HDR.kind, KIND.EXEC, true);
      }
      const t0 = performance.now();
      ki.ingest(created.module, buf, len);
      total += performance.now() - t0;
    }
    us[kind] = (total * 1000) / (n * rounds);
    figure(S, 'env_thread_table_step', us[kind]!, 'us', { environment: kind, env_bytes: env.length, records: n * rounds });
  }
  figure(S, 'env_thread_table_us_per_exec', us.distinct! - us.none!, 'us', { env_bytes: env.length, distinct: Number(us.distinct!.toFixed(3)), shared: Number(us.shared!.toFixed(3)), none: Number(us.none!.toFixed(3)) });
}
