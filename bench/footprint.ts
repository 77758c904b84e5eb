// Scenario `footprint`: what one `rae run` costs a node at rest — time to ready and resident
// memory, on a first start (fresh state directory: PGlite initdb, rules compiled) and on a
// restart (the module cache serves the unchanged rules). Every component runs (forwarder, API,
// webhook, the syscall source where the probe loads), with the default configuration except
// ports 0 and compilerIdleSeconds 3, so the idle figure is the steady state the default (60 s)
// reaches a minute after the last rules change. rae runs from a fresh build (npm run build) in a
// temporary directory (with RAE_BENCH_OLD=REF, REF's build too, in turn: figures `old_...`); the start figures: the detection path up, then every component (the API
// comes last); on the restart, a new syscall rule's manifest written -> live on the kernel byte
// path (the first real open it alerts on) and -> on its compiled module. First, what a short command costs from the build and through
// tsx: `rae --help` and `rae validate` of the built-in syscall rules (CPU seconds and max RSS, via
// /usr/bin/time). Before those, the image and the engine in a pod (inPod).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, median, progress } from './report.js';
import { containerdPresent } from '../support/containers/index.js';
import { engineRssMb, startCluster } from '../support/engine-pod.js';
import { imageToolsMissing } from '../support/image.js';
import { buildHead } from './footprint-split.js';
import { manifest } from './reload.js';

const S = 'footprint';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** VmRSS and VmHWM of `pid`, MB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** A running `rae run`: its stderr and stdout so far, a wait for a stderr line (seconds since its start, the match), its stop. */
export interface RaeRun {
  pid: number;
  err(): string;
  out(): string;
  waitFor(re: RegExp, from?: number): Promise<{ s: number; m: RegExpMatchArray }>;
  /** SIGTERM, then its exit. */
  stop(): Promise<void>;
}

/** Starts `rae run` from the build in `build` with `config` and `stateDir`. */
export function startRae(build: string, config: string, stateDir: string): RaeRun {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['bin/rae.js', 'run', '--config', config, '--state-dir', stateDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RAE_BUILD: build } });
  let err = '';
  let out = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise((r) => child.on('exit', r));
  return {
    pid: child.pid!,
    err: () => err,
    out: () => out,
    async waitFor(re, from = 0) {
      const deadline = Date.now() + 300_000;
      while (!re.test(err.slice(from))) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`footprint: rae run: no ${re}\n${err}`);
        await sleep(5);
      }
      return { s: (performance.now() - t0) / 1000, m: err.slice(from).match(re)! };
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Starts rae run (from the build in `build`), waits for ready, samples memory with and without the compile worker, changes a syscall rule (restart), stops it. */
async function once(stateDir: string, config: string, label: string, build: string): Promise<void> {
  const rae = startRae(build, config, stateDir);
  const { err, waitFor } = rae;
  // the detection path (engine, sources, forwarder) is up at 'run: started' or 'run: ready', whichever comes first; the API may come later
  const detection = await waitFor(/run: (started|ready) \(/);
  const readyS = (await waitFor(/run: ready \(/)).s;
  figure(S, `${label}_detection_ready_s`, detection.s, 's', { note: 'engine, webhook, syscall source and forwarder up; the API may still be creating its database' });
  const loaded = err().match(/ruleset loaded in (\d+) ms/)?.[1];
  const fromCache = /from the module cache/.test(err());
  progress(`${label}: ready in ${readyS.toFixed(2)} s (ruleset ${loaded} ms${fromCache ? ', module cache' : ''})`);
  await sleep(1000);
  const early = memory(rae.pid);
  await sleep(6000); // compilerIdleSeconds 3: the worker, if any, has stopped
  const idle = memory(rae.pid);
  if (label.endsWith('restart')) {
    const change = await ruleChange(stateDir, rae);
    const old = label.slice(0, -'restart'.length);
    if (change.byteMs !== undefined) figure(S, `${old}rule_change_to_byte_path_ms`, change.byteMs, 'ms', { note: 'manifest written -> the first open the rule alerts on (a real syscall through the probe), 10 ms resolution' });
    figure(S, `${old}rule_change_to_compiled_ms`, change.compiledMs, 'ms', { engine_load_to_wasm_ms: change.engineMs, note: 'manifest written -> compiled module live; the compile worker restarted (idle-stopped before)' });
  }
  await rae.stop();
  const extra = { ruleset_ms: Number(loaded), module_cache: fromCache };
  figure(S, `${label}_ready_s`, readyS, 's', extra);
  figure(S, `${label}_rss_1s_after_ready_mb`, early.rss, 'MB');
  figure(S, `${label}_rss_idle_mb`, idle.rss, 'MB', { note: 'compile worker stopped (compilerIdleSeconds 3)' });
  figure(S, `${label}_peak_rss_mb`, idle.peak, 'MB');
}

/**
 * A new syscall rule as an EngineAuditRules manifest, written into the resources directory of a
 * running `rae run`: how soon it is live on the kernel byte path, measured by the kernel events
 * themselves. After the write, a new file below the rule's directory is created and read every
 * 10 ms (the read is the open the rule matches); `byteMs` is the time from the write to the
 * read of the first file the rule alerts on (stdout), so it includes the resources watch, the
 * load and the probe's delivery, and is at most 10 ms late; undefined without the syscall source
 * (no probe). `compiledMs`: the write to the ruleset running on its compiled module (a compile
 * worker idle-stopped before starts again); `engineMs`: the engine's own load start to WASM.
 */
export async function ruleChange(stateDir: string, { err, out, waitFor }: RaeRun): Promise<{ byteMs?: number; compiledMs: number; engineMs: number }> {
  const i = Date.now();
  const dir = join(stateDir, 'canary-files');
  mkdirSync(join(dir, `canary-${i}`), { recursive: true });
  const mark = err().length;
  const kernel = /module: source syscall started/.test(err());
  let byteMs: number | undefined;
  const t0 = performance.now();
  writeFileSync(join(stateDir, 'resources', 'canary.yaml'), manifest(i, dir));
  if (kernel) {
    const opened: number[] = [];
    const deadline = t0 + 120_000;
    let hit: number | undefined;
    while (hit === undefined) {
      if (performance.now() > deadline) throw new Error(`footprint: no alert of Canary ${i} within 120 s\n${err().slice(mark)}`);
      const file = join(dir, `canary-${i}`, `f-${opened.length}`);
      writeFileSync(file, 'x');
      opened.push(performance.now());
      readFileSync(file);
      await sleep(10);
      const m = out().match(new RegExp(`canary-${i}/f-(\\d+)`));
      if (m) hit = Number(m[1]);
    }
    byteMs = opened[hit]! - t0;
    progress(`restart: a new syscall rule live on the kernel byte path ${byteMs.toFixed(0)} ms after its manifest was written (the first matching open it alerted on)`);
  } else progress('restart: the syscall source is not running (no probe): rule_change_to_byte_path_ms not measured');
  const live = await waitFor(/resources: ruleset compiled, on WASM (\d+) ms after the load started/, mark);
  const ms = performance.now() - t0;
  progress(`restart: the new rule on its compiled module ${ms.toFixed(0)} ms after its manifest was written (engine: ${live.m[1]} ms after its load started)`);
  return { byteMs, compiledMs: ms, engineMs: Number(live.m[1]) };
}

/** CPU seconds (user + system) and max RSS (MB) of `rae ARGS`, median of `runs` runs under /usr/bin/time; `env` picks the build or tsx. */
function cliCost(label: string, args: string[], env: Record<string, string>, runs = 5): void {
  const cpu: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, 'bin/rae.js', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
    const m = r.stderr
      .trim()
      .split('\n')
      .at(-1)!
      .match(/^([\d.]+) ([\d.]+) (\d+)$/);
    if (r.status !== 0 || !m) throw new Error(`footprint: rae ${args.join(' ')} failed (exit ${r.status})\n${r.stderr}`);
    cpu.push(Number(m[1]) + Number(m[2]));
    rss.push(Number(m[3]) / 1024);
  }
  progress(`${label}: ${median(cpu).toFixed(2)} s CPU, ${median(rss).toFixed(0)} MB max RSS`);
  figure(S, `${label}_cpu_s`, median(cpu), 's', { runs, args: args.join(' ') });
  figure(S, `${label}_max_rss_mb`, median(rss), 'MB', { runs });
}

/**
 * The engine image and the engine as deploy/ runs it: image size and build time
 * (scripts/build-image.sh --base-from-host), then the DaemonSet's pod started through CRI in a
 * private containerd (support/engine-pod.ts): start to ready (/healthz 200, a fresh state
 * directory: the rules are compiled) and the engine's resident memory in the pod.
 */
async function inPod(): Promise<void> {
  const why = imageToolsMissing() ?? (containerdPresent() ? undefined : 'containerd missing');
  if (why) {
    progress(`image and pod figures skipped: ${why}`);
    return;
  }
  const cluster = await startCluster();
  try {
    const size = cluster.image.size() / 1e6;
    progress(`image: ${size.toFixed(0)} MB, built in ${cluster.image.buildSeconds.toFixed(0)} s`);
    figure(S, 'image_size_mb', size, 'MB', { base: 'this machine (--base-from-host)' });
    figure(S, 'image_build_s', cluster.image.buildSeconds, 's');
    const pod = await cluster.startEngine();
    const ready = await cluster.waitReady(pod);
    progress(`pod: ready ${ready.toFixed(1)} s after its start`);
    figure(S, 'pod_start_to_ready_s', ready, 's', { note: 'fresh state directory: rules compiled' });
    await sleep(1000);
    figure(S, 'pod_rss_1s_after_ready_mb', engineRssMb(pod), 'MB');
    await sleep(65_000); // compilerIdleSeconds 60 (the deployed default): the compile worker has stopped
    figure(S, 'pod_rss_idle_mb', engineRssMb(pod), 'MB', { note: 'compile worker stopped' });
  } finally {
    await cluster.close();
  }
}

/** Runs the scenario. */
export async function run(): Promise<void> {
  await inPod();
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-footprint-'));
  try {
    mkdirSync(join(dir, 'new'));
    const { build } = buildHead(join(dir, 'new'));
    for (const [how, env] of [
      ['build', { RAE_BUILD: build }],
      ['tsx', { RAE_TSX: '1' }],
    ] as const) {
      cliCost(`cli_help_${how}`, ['--help'], env);
      cliCost(`cli_validate_${how}`, ['validate', '-r', 'rules/syscall'], env);
    }
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'rules:\n  compilerIdleSeconds: 3\nforwarder:\n  port: 0\napi:\n  port: 0\nwebhook:\n  port: 0\n');
    const heads = [{ prefix: '', build }];
    const ref = process.env.RAE_BENCH_OLD;
    if (ref) {
      // REF's build, measured in turn with this one (figures `old_...`), each on a state directory of its own
      mkdirSync(join(dir, 'old'));
      heads.push({ prefix: 'old_', build: buildHead(join(dir, 'old'), ref).build });
    }
    for (const h of heads) {
      progress(`footprint: ${h.prefix ? `old (${ref})` : 'this checkout'}, every component on`);
      const state = join(dir, `${h.prefix}state`);
      await once(state, config, `${h.prefix}first_start`, h.build);
      await once(state, config, `${h.prefix}restart`, h.build);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
