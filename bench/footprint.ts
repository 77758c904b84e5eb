// Scenario `footprint`: what one `rae run` costs a node at rest — time to ready and resident
// memory, on a first start (fresh state directory: PGlite initdb, rules compiled) and on a
// restart (the module cache serves the unchanged rules). Every component runs (forwarder, API,
// webhook, the syscall source where the probe loads), with the default configuration except
// ports 0 and compilerIdleSeconds 3, so the idle figure is the steady state the default (60 s)
// reaches a minute after the last rules change. First, what a short command costs: `rae --help`
// and `rae validate` of the built-in syscall rules (CPU seconds and max RSS, via /usr/bin/time).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, median, progress } from './report.js';

const S = 'footprint';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** VmRSS and VmHWM of `pid`, MB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Starts rae run, waits for ready, samples memory with and without the compile worker, stops it. */
async function once(stateDir: string, config: string, label: string): Promise<void> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['bin/rae.js', 'run', '--config', config, '--state-dir', stateDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const deadline = Date.now() + 120_000;
  while (!/\bready\b/.test(err)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`footprint: rae run did not get ready\n${err}`);
    await sleep(20);
  }
  const readyS = (performance.now() - t0) / 1000;
  const loaded = err.match(/ruleset loaded in (\d+) ms/)?.[1];
  const fromCache = /from the module cache/.test(err);
  progress(`${label}: ready in ${readyS.toFixed(2)} s (ruleset ${loaded} ms${fromCache ? ', module cache' : ''})`);
  await sleep(1000);
  const early = memory(child.pid!);
  await sleep(6000); // compilerIdleSeconds 3: the worker, if any, has stopped
  const idle = memory(child.pid!);
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  const extra = { ruleset_ms: Number(loaded), module_cache: fromCache };
  figure(S, `${label}_ready_s`, readyS, 's', extra);
  figure(S, `${label}_rss_1s_after_ready_mb`, early.rss, 'MB');
  figure(S, `${label}_rss_idle_mb`, idle.rss, 'MB', { note: 'compile worker stopped (compilerIdleSeconds 3)' });
  figure(S, `${label}_peak_rss_mb`, idle.peak, 'MB');
}

/** CPU seconds (user + system) and max RSS (MB) of `rae ARGS`, median of `runs` runs under /usr/bin/time. */
function cliCost(label: string, args: string[], runs = 5): void {
  const cpu: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, 'bin/rae.js', ...args], { encoding: 'utf8' });
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

/** Runs the scenario. */
export async function run(): Promise<void> {
  cliCost('cli_help', ['--help']);
  cliCost('cli_validate', ['validate', '-r', 'rules/syscall']);
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-footprint-'));
  try {
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'rules:\n  compilerIdleSeconds: 3\nforwarder:\n  port: 0\napi:\n  port: 0\nwebhook:\n  port: 0\n');
    const state = join(dir, 'state');
    await once(state, config, 'first_start');
    await once(state, config, 'restart');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
