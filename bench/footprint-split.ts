// Scenario `footprint-split` (a part of `footprint`: `npm run bench -- footprint` runs it too, and
// `npm run bench -- footprint-split` alone): where the resident memory of one `rae run` goes, for
// two configurations: `daemonset` (deploy/base/config.yaml's settings that apply off a cluster:
// the API off, the container runtimes' sockets below /host, the kernel source required; the
// process started with the engine container's env from deploy/base/daemonset.yaml, NODE_OPTIONS) and
// `all_on` (npm start's defaults: API on PGlite, console, every source). Each runs from a fresh
// build in a temporary directory with ports 0 and compilerIdleSeconds 3 (the deployed 60 s
// reached sooner), and is measured in phases:
//   ready          1 s after `run: ready` on a first start (the rules compiled in the worker)
//   rest           once the compile worker has stopped (7 s after ready)
//   settled        a minute after ready, nothing asked of the engine (SETTLE_MS)
//   restart_rest   after a restart on the same state directory (the module cache is warm: no
//                  compile worker), 3 s after ready; restart_settled a minute after; then, in that run:
//   load           during LOAD seconds of the capture bench's top step (two unpaced openat/close
//                  load generators, bench/capture.ts): the split at the end and the highest RSS
//                  sampled every second; kernel drops and events evaluated over the phase ride along
//   reload_peak    the peak while a new syscall rule's manifest is loaded and compiled (VmHWM,
//                  reset through /proc/PID/clear_refs just before), with the split at the highest
//                  RSS sampled
//   after_reload_rest  once the compile worker has stopped again
// Each phase's split: VmRSS and, from /proc/PID/smaps by mapping, the ring buffer (the BPF map's
// mappings), each WebAssembly memory (an accessible mapping right below the V8 guard reservation:
// 32 MiB ones are rule modules, others PGlite's), malloc's heap, file-backed pages (code, the
// addon, libraries) and the other anonymous pages (the V8 heaps of every thread among them); from
// the engine's /metrics, the main thread's V8 heap used/total, external and array buffers
// (enginesecurity_engine_memory_bytes; Node's nodejs_* metrics where an older head lacks it).
// Environment: RAE_BENCH_LOAD_SECONDS (default 300: the issue's 5 minutes) sets the load phase;
// RAE_BENCH_OLD=REF measures REF's engine as well, in turn with this one (figures `old_...`):
// REF's tree (git archive) built with this checkout's node_modules and probe build.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { probeSupport } from '../host/sources/syscall/index.js';
import { buildLoadgen } from './capture.js';
import { manifest } from './reload.js';
import { figure, progress } from './report.js';

const S = 'footprint';
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const MB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The configurations measured (YAML, ports 0; compilerIdleSeconds 3 so the worker's idle stop comes within the bench). */
const CONFIGS: Record<string, string> = {
  // deploy/base/config.yaml without what needs the cluster (its TLS Secret, 0.0.0.0, the resources mount)
  daemonset: [
    'rules:\n  builtIn: [syscall, orchestrator-audit]\n  compilerIdleSeconds: 3\n  compileWorkerHeapMb: 384',
    'webhook:\n  port: 0\nforwarder:\n  port: 0\nsyscall:\n  optional: false',
    'containers:\n  cri:\n    sockets: [/host/run/containerd/containerd.sock, /host/run/crio/crio.sock]\n  docker:\n    sockets: [/host/var/run/docker.sock]\n  podman:\n    enabled: false',
    'api:\n  enabled: false\n',
  ].join('\n'),
  all_on: 'rules:\n  compilerIdleSeconds: 3\nwebhook:\n  port: 0\nforwarder:\n  port: 0\napi:\n  port: 0\n',
};

/** Resident memory of one process by component, MB. */
type Split = Record<string, number>;

/** VmRSS and VmHWM of `pid`, MB. */
function status(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(s.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/**
 * Rss of `pid`'s mappings by kind, MB. A WebAssembly memory is V8's reservation of several GiB:
 * the accessible part (the memory's current size) followed by a PROT_NONE guard; a 32 MiB one is
 * a rule module (MEM.bytes), another size PGlite's.
 */
export function smapsSplit(text: string): Split {
  const maps: { size: number; perms: string; path: string; rss: number }[] = [];
  for (const line of text.split('\n')) {
    const head = line.match(/^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/);
    if (head) maps.push({ size: Number.parseInt(head[2]!, 16) - Number.parseInt(head[1]!, 16), perms: head[3]!, path: head[4]!, rss: 0 });
    else if (line.startsWith('Rss:')) maps.at(-1)!.rss = Number(line.match(/(\d+)/)![1]) / 1024;
  }
  const out: Split = { ring_buffer_mb: 0, wasm_rules_mb: 0, wasm_rules_count: 0, wasm_other_mb: 0, wasm_other_count: 0, malloc_heap_mb: 0, file_backed_mb: 0, anon_other_mb: 0 };
  maps.forEach((m, i) => {
    const next = maps[i + 1];
    const wasm = m.path === '' && m.perms.startsWith('rw') && next?.path === '' && next.perms === '---p' && next.size >= 4 * 2 ** 30;
    if (m.path.startsWith('anon_inode:bpf')) out.ring_buffer_mb! += m.rss;
    else if (wasm && m.size === 32 * MB) {
      out.wasm_rules_mb! += m.rss;
      out.wasm_rules_count!++;
    } else if (wasm) {
      out.wasm_other_mb! += m.rss;
      out.wasm_other_count!++;
    } else if (m.path === '[heap]') out.malloc_heap_mb! += m.rss;
    else if (m.path.startsWith('/')) out.file_backed_mb! += m.rss;
    else out.anon_other_mb! += m.rss;
  });
  return out;
}

/** One sample of a metric in an exposition (the first series matching `labels`), or undefined. */
function sample(body: string, name: string, labels = ''): number | undefined {
  const m = body.match(new RegExp(`^${name}${labels ? `\\{${labels}\\}` : '(?:\\{[^}]*\\})?'} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

/** A running `rae run` under measurement. */
class Engine {
  private err = '';
  private out = '';
  readonly child;
  metricsUrl = '';

  constructor(head: Head, config: string, stateDir: string, env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [join(head.root, 'bin/rae.js'), 'run', '--config', config, '--state-dir', stateDir], { stdio: ['ignore', 'pipe', 'pipe'], cwd: head.root, env: { ...process.env, RAE_BUILD: head.build, ...env } });
    this.child.stderr.on('data', (c: Buffer) => (this.err += c.toString('utf8')));
    this.child.stdout.on('data', (c: Buffer) => (this.out = (this.out + c.toString('utf8')).slice(-65536)));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Waits (at most 300 s) for `re` in stderr after offset `from`. */
  async waitFor(re: RegExp, from = 0): Promise<RegExpMatchArray> {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const m = this.err.slice(from).match(re);
      if (m) return m;
      if (this.child.exitCode !== null || Date.now() > deadline) throw new Error(`footprint: rae run: no ${re}\n${this.err.slice(-4000)}`);
      await sleep(20);
    }
  }

  get logLength(): number {
    return this.err.length;
  }

  async ready(): Promise<void> {
    await this.waitFor(/run: ready \(/);
    this.metricsUrl = `${(await this.waitFor(/run: forwarder listening on (\S+)/))[1]}/metrics`;
  }

  async metrics(): Promise<string> {
    const r = await fetch(this.metricsUrl);
    return r.text();
  }

  /** The split of this moment: status, smaps and the engine's memory metrics. */
  async split(): Promise<Split> {
    const body = await this.metrics();
    const area = (a: string, old: string) => (sample(body, 'enginesecurity_engine_memory_bytes', `area="${a}"`) ?? sample(body, old) ?? Number.NaN) / MB;
    return {
      rss_mb: status(this.pid).rss,
      heap_used_mb: area('heap_used', 'nodejs_heap_size_used_bytes'),
      heap_total_mb: area('heap_total', 'nodejs_heap_size_total_bytes'),
      external_mb: area('external', 'nodejs_external_memory_bytes'),
      array_buffers_mb: area('array_buffers', 'no_such_metric'),
      ...smapsSplit(readFileSync(`/proc/${this.pid}/smaps`, 'utf8')),
    };
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    const exited = new Promise((r) => this.child.once('exit', r));
    // a stop waits for a compile in progress: bounded here, then killed
    if (!(await Promise.race([exited.then(() => true), sleep(60_000).then(() => false)]))) {
      this.child.kill('SIGKILL');
      await exited;
    }
  }
}

/** Prints a phase's split as one figure (its RSS) with the components alongside. */
function report(name: string, s: Split, extra: Record<string, unknown> = {}): void {
  const parts = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Number(v.toFixed(1))]));
  progress(
    `${name}: ${s.rss_mb!.toFixed(0)} MB (${Object.entries(parts)
      .filter(([k]) => k !== 'rss_mb')
      .map(([k, v]) => `${k.replace(/_mb$/, '')} ${v}`)
      .join(', ')})`,
  );
  figure(S, `${name}_rss_mb`, s.rss_mb!, 'MB', { ...parts, ...extra });
}

/**
 * The plain values of the engine container's env in `head`'s deploy/base/daemonset.yaml
 * (NODE_OPTIONS among them): the daemonset configuration runs with them, each head with its own.
 */
function daemonSetEnv(head: Head): Record<string, string> {
  const ds = parseAllDocuments(readFileSync(join(head.root, 'deploy/base/daemonset.yaml'), 'utf8'))
    .map((d) => d.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } } })
    .find((d) => d?.kind === 'DaemonSet');
  const env = ds?.spec?.template?.spec?.containers?.[0]?.env ?? [];
  return Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
}

/**
 * The `settled` samples' time after ready. `rest`, 7 s after ready, still holds what the start
 * grew: resident memory fell by 25-30 MB between 8 and 15 s after ready with the live heap
 * unchanged (the DaemonSet configuration, sampled every few seconds), or stayed up for a minute
 * when no collection came; V8's heap total went from 55 to 22 MB (the young generation's
 * semi-spaces, grown while the start allocated, shrunk once it stopped). A node agent is at rest
 * for days, so both are reported.
 */
const SETTLE_MS = 60_000;
const SETTLED_NOTE = 'a minute after ready, nothing asked of the engine: the start-up garbage collected or not';

/** The whole sequence of phases for one build and configuration (`env`: the process's extra environment). */
async function measure(prefix: string, head: Head, config: string, dir: string, env: Record<string, string>, loadgen: string | undefined, loadSeconds: number): Promise<void> {
  const state = join(dir, 'state');
  rmSync(state, { recursive: true, force: true });
  const first = new Engine(head, config, state, env);
  try {
    await first.ready();
    const readyAt = Date.now();
    await sleep(1000);
    report(`${prefix}ready`, await first.split(), { note: 'first start: the rules compiled; the compile worker idles 3 s after its last compile' });
    await sleep(6000); // compilerIdleSeconds 3: the worker has stopped
    report(`${prefix}rest`, await first.split(), { note: 'first start, the compile worker stopped' });
    await sleep(readyAt + SETTLE_MS - Date.now());
    report(`${prefix}settled`, await first.split(), { note: SETTLED_NOTE });
  } finally {
    await first.stop();
  }
  const e = new Engine(head, config, state, env);
  try {
    await e.ready();
    const readyAt = Date.now();
    await sleep(3000);
    report(`${prefix}restart_rest`, await e.split(), { note: 'restart: the module cache is warm, no compile worker' });
    await sleep(readyAt + SETTLE_MS - Date.now());
    report(`${prefix}restart_settled`, await e.split(), { note: SETTLED_NOTE });
    if (loadgen) await underLoad(prefix, e, loadgen, dir, loadSeconds);
    await reload(prefix, e, state, dir);
    await sleep(7000);
    report(`${prefix}after_reload_rest`, await e.split(), { note: 'the reload done, the compile worker stopped' });
  } finally {
    await e.stop();
  }
}

/**
 * The peak while a new syscall rule's manifest is loaded and compiled: VmHWM (reset first), and
 * the split sampled at the highest RSS seen. A compile that fails (on a starved machine, its
 * deadline: rules.compileTimeoutSeconds) ends the phase with the peak up to the failure and the
 * engine's reason (`compiled: false`); the ruleset stays on the reference interpreter then.
 */
async function reload(prefix: string, e: Engine, state: string, dir: string): Promise<void> {
  const files = join(dir, 'canary-files');
  mkdirSync(files, { recursive: true });
  writeFileSync(`/proc/${e.pid}/clear_refs`, '5');
  const mark = e.logLength;
  const t0 = performance.now();
  writeFileSync(join(state, 'resources', 'canary.yaml'), manifest(Date.now(), files));
  let top: Split | undefined;
  const done = e.waitFor(/resources: ruleset compiled, on WASM|engine: compile-worker \((E[A-Z]+)\): (.*)/, mark);
  const finished = done.then(() => true);
  while (!(await Promise.race([finished, sleep(250).then(() => false)]))) {
    // a sample whose scrape fails (a reset connection while the engine is busy compiling) is skipped
    const now = await e.split().catch(() => undefined);
    if (now && (!top || now.rss_mb! > top.rss_mb!)) top = now;
  }
  const peak = status(e.pid).hwm;
  const failed = await done;
  const outcome = failed[1] ? { compiled: false, error: `${failed[1]}: ${failed[2]}` } : { compiled: true };
  if (failed[1]) progress(`${prefix}reload: the compile failed (${outcome.error}); the ruleset stays on the reference interpreter`);
  report(
    `${prefix}reload_peak`,
    { ...(top ?? (await e.split())), rss_mb: peak },
    {
      ...outcome,
      reload_s: Number(((performance.now() - t0) / 1000).toFixed(1)),
      load_average: Number(loadavg()[0]!.toFixed(1)),
      note: 'VmHWM from the manifest write (clear_refs reset it) to the new rules on their compiled module (or the compile failing); the parts: the split sampled (every 250 ms) at the highest RSS',
    },
  );
}

/** The load phase: two unpaced openat/close generators for `seconds`; RSS sampled every second. */
async function underLoad(prefix: string, e: Engine, loadgen: string, dir: string, seconds: number): Promise<void> {
  const file = join(dir, 'some-file-to-open.txt');
  writeFileSync(file, 'x');
  const before = await e.metrics();
  const gens = [0, 1].map(() => spawn(loadgen, ['open', '0', String(seconds), file], { stdio: 'ignore' }));
  const done = Promise.all(gens.map((g) => new Promise((r) => g.once('exit', r))));
  let max = 0;
  const t0 = Date.now();
  while (Date.now() - t0 < (seconds - 2) * 1000) {
    max = Math.max(max, status(e.pid).rss);
    await sleep(1000);
  }
  const last = await e.split();
  await done;
  const after = await e.metrics();
  const delta = (name: string, labels = '') => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
  const extra = { seconds, max_rss_mb: Number(Math.max(max, last.rss_mb!).toFixed(1)), kernel_drops: delta('falcosecurity_scap_n_drops_total'), events_evaluated: delta('enginesecurity_engine_events_evaluated_total', 'source="syscall"') };
  report(`${prefix}load`, last, extra);
  figure(S, `${prefix}load_max_rss_mb`, extra.max_rss_mb, 'MB', { seconds, kernel_drops: extra.kernel_drops });
}

/**
 * The sources of git ref `ref` in `dir`/src: its tree unpacked from `git archive` (which leaves the
 * repository as it was), sharing this checkout's node_modules and probe build.
 */
export function headSources(dir: string, ref: string): string {
  const root = join(dir, 'src');
  mkdirSync(root);
  const tree = spawnSync('git', ['archive', '--format=tar', ref], { cwd: ROOT, maxBuffer: 1 << 30 });
  if (tree.status !== 0) throw new Error(`bench: git archive ${ref}: ${tree.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', root], { input: tree.stdout });
  if (untar.status !== 0) throw new Error(`bench: unpacking ${ref}: ${untar.stderr}`);
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  if (existsSync(join(ROOT, 'probes/build'))) symlinkSync(join(ROOT, 'probes/build'), join(root, 'probes/build'));
  return root;
}

/** A head to run: its sources and its build (scripts/build.mjs --out). */
export interface Head {
  root: string;
  build: string;
}

/**
 * A build of this checkout, or of git ref `ref` (its tree unpacked from `git archive`, which leaves
 * the repository as it was, sharing this checkout's node_modules and probe build), in `dir`.
 */
export function buildHead(dir: string, ref?: string): Head {
  const root = ref ? headSources(dir, ref) : ROOT;
  const out = join(dir, 'dist');
  const r = spawnSync(process.execPath, [join(root, 'scripts/build.mjs'), '--out', out], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`footprint: the build of ${ref ?? 'this checkout'} failed\n${r.stdout}${r.stderr}`);
  return { root, build: out };
}

/** Runs the scenario. */
export async function run(): Promise<void> {
  const loadSeconds = Number(process.env.RAE_BENCH_LOAD_SECONDS ?? 300);
  if (!(loadSeconds >= 5)) throw new Error(`footprint: RAE_BENCH_LOAD_SECONDS must be at least 5, not ${process.env.RAE_BENCH_LOAD_SECONDS}`);
  const old = process.env.RAE_BENCH_OLD;
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-split-'));
  const oldDir = join(dir, 'old');
  const failures: string[] = [];
  try {
    const support = probeSupport();
    const loadgen = support.available ? buildLoadgen(dir) : undefined;
    if (!support.available) progress(`footprint: no kernel probe (${support.code}): the load phase is skipped`);
    mkdirSync(join(dir, 'new'));
    const heads = [{ prefix: '', head: buildHead(join(dir, 'new')) }];
    if (old) {
      mkdirSync(oldDir);
      heads.push({ prefix: 'old_', head: buildHead(oldDir, old) });
    }
    for (const [name, yaml] of Object.entries(CONFIGS)) {
      const config = join(dir, `${name}.yaml`);
      writeFileSync(config, yaml);
      for (const h of heads) {
        // the DaemonSet's configuration as its pod runs it: with the container's env (NODE_OPTIONS)
        const env = name === 'daemonset' ? daemonSetEnv(h.head) : {};
        progress(`footprint: ${h.prefix ? `old (${old})` : 'this checkout'}, ${name}${Object.keys(env).length ? ` (env ${JSON.stringify(env)})` : ''}`);
        const work = join(dir, `${h.prefix}${name}`);
        mkdirSync(work);
        // a head that fails one configuration (an engine that never gets ready) still leaves the other figures
        try {
          await measure(`${h.prefix}${name}_`, h.head, config, work, env, loadgen, loadSeconds);
        } catch (err) {
          failures.push(`${h.prefix}${name}: ${(err as Error).message}`);
          progress(`footprint: ${h.prefix}${name} failed: ${(err as Error).message}`);
        }
      }
    }
    if (failures.length > 0) throw new Error(`footprint: ${failures.length} measurement(s) failed:\n${failures.join('\n')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
