// Rules to a CompiledRuleset: code generation on the caller's thread (pure and fast), then the
// AssemblyScript build in a long-lived worker (or in-process when asked). The worker is started
// on first use, kept referenced only while a compile is pending, and recycled if it dies. It is
// stopped after `idleMs` without a request: with the compiler loaded and JIT-warm it holds about
// 200 MB (measured in `rae run`: 436 -> 239 MB RSS once it stops), and rules change rarely, so
// the next change pays a worker start instead (about 1 s more to the compiled tier; the
// interpreter tier keeps change-to-live unchanged).
// Bounds: a build that runs past `timeoutMs` (counted from when the worker takes it up) and a
// build whose caller aborted it (a newer ruleset came) stop the worker, which is the only way to
// stop the compiler mid-build; requests queued behind it go to a fresh worker. The worker's heap
// is capped (`maxHeapMb`, resourceLimits): a build that exhausts it ends the worker, not the
// process, and fails with EWORKER like any other exit; the next request starts a new worker.
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { generateModule, type GeneratedModule } from '../engine/codegen/index.js';
import type { LoadedRule } from '../engine/index.js';
import { evtTypeId } from '../abi/module.js';
import { findSplit, splitStat } from './asc-loader.js';
import { buildModule, fromWasm, type Built, type BuildResult } from './build.js';
import { compileKey } from './compile.js';
import type { CompileRequest, CompileWorkerData } from './compile-worker.js';
import { runtimeError, type RuntimeError } from './errors.js';
import type { CompiledRuleset } from './evaluator.js';
import { ModuleCache } from './module-cache.js';
import type { WarmPlan } from './warm.js';

/** Default deadline of one build in the worker (asc on a 10,000-term rule: about 10 s). */
const DEFAULT_COMPILE_TIMEOUT_MS = 120_000;
/** Default V8 old-generation cap of the compile worker, MB. */
const DEFAULT_WORKER_HEAP_MB = 2048;
/**
 * V8 young generation of the compile worker, MB. The compiler allocates fast and V8 grows its
 * default young generation (48 MB on 64-bit) all the way during a build: capped at 8 MB, the peak
 * of a build of the built-in rules was 47 MB lower (357 -> 310 MB, process VmHWM, busy machine) at
 * no measurable cost in compile time; 4 MB saved less (335 MB).
 */
const WORKER_YOUNG_MB = 8;

/**
 * Warm-up budget of a module from the disk cache, ms. It warms on this (the main) thread, before
 * `rae run` is ready: measured on a restart under load, the default 1.5 s budget was about 90% of
 * the cached module's load (compile + checks + warm 2.1 s, warm 1.9 s). A short warm-up tiers up
 * the entry points; V8's dynamic tiering does the rest as events come.
 */
const DISK_WARM_BUDGET_MS = 300;

/** How long after a module came from a module cache the compiler split is checked, ms (checkLater). */
const SPLIT_CHECK_DELAY_MS = 2000;

/** How often `whileBuilding` runs while a build is in the worker, ms. */
const WHILE_BUILDING_MS = 250;

/** A build request in a worker. */
interface Request {
  id: number;
  code: string;
  plan: WarmPlan | undefined;
  resolve: (r: BuildResult) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  worker?: Worker;
  timer?: NodeJS.Timeout;
}

const canceled = (): RuntimeError => runtimeError('ECANCELED', 'a newer ruleset superseded this one; its compile was stopped');

/** `p`, or ECANCELED as soon as `signal` aborts (the wait ends; `p` itself runs on). */
function untilAborted<T extends { r: BuildResult }>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T | { r: BuildResult; from: 'build' }> {
  if (!signal) return p;
  if (signal.aborted) return Promise.resolve({ r: { ok: false, error: canceled() }, from: 'build' });
  return new Promise((resolve) => {
    const onAbort = () => resolve({ r: { ok: false, error: canceled() }, from: 'build' });
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    });
  });
}

/** Where a compiled module came from: this compiler's memory, the on-disk module cache, the build's shipped module cache, or a build. */
export type ModuleFrom = 'memory' | 'disk' | 'shipped' | 'build';

/** Result of compiling a ruleset. */
export type CompileOutcome = { ok: true; compiled: CompiledRuleset; codegenMs: number; from: ModuleFrom } | { ok: false; errors: RuntimeError[] };

/** The warm plan of a generated module. */
export function warmPlan(g: GeneratedModule): WarmPlan {
  const ids = new Set<number>();
  for (const r of g.rules) for (const t of r.evttypes ?? []) ids.add(evtTypeId(t));
  ids.delete(0);
  return {
    syscallStride: g.layouts.syscall.stride,
    auditStride: g.layouts.k8s_audit.stride,
    typeIds: [...ids].sort((a, b) => a - b),
    profileSlots: g.counters ? g.countSlots.map((c) => c.slot) : [],
  };
}

/** Compiles rulesets, in a worker thread unless `inProcess`. */
export class RuleCompiler {
  private worker: Worker | undefined;
  private nextId = 1;
  /** Built modules by code hash: reloading rules that generate the same code skips the compiler. */
  private readonly cache = new Map<string, Built>();
  /** Requests in flight, by the worker they were sent to (an old worker's exit fails only its own); the first is being built. */
  private readonly pending = new Map<Worker, Map<number, Request>>();

  private idleTimer: NodeJS.Timeout | undefined;
  /** Runs `whileBuilding` while any worker has a request pending. */
  private busyTimer: NodeJS.Timeout | undefined;

  private readonly disk: ModuleCache | undefined;
  /** The build's shipped modules (module-cache.ts SHIPPED_MODULE_DIR), read only. */
  private readonly shipped: ModuleCache | undefined;
  private buildCount = 0;
  /** The check for a compiler split before a worker starts, shared by the requests that wait for it. */
  private splitCheck: Promise<{ url: string; stat: string } | undefined> | undefined;
  /** The split URL the last check found (asc-loader.ts; undefined: none, the worker loads the compiler's package). */
  private split: string | undefined;
  /** The files of the split the last check found sound, as stat saw them then: while they stay so, a new worker takes it without hashing it again. */
  private splitSeen: string | undefined;
  private loadedFrom: 'split' | 'package' | undefined;
  /** binaryen's module of the split `of`, compiled on this thread and kept (keepBackend). */
  private backend: { of: string; module: Promise<WebAssembly.Module | undefined> } | undefined;
  /** Times close() was called: a request that waited for the split check across one starts no worker. */
  private closes = 0;
  /** Builds in progress by code hash. */
  private readonly inflight = new Map<string, Promise<{ r: BuildResult; from: ModuleFrom }>>();

  /** Build deadline in ms (0: none); read at each request, so it can change between compiles. */
  timeoutMs: number;

  /**
   * `idleMs`: stop the worker after this long without a request (0 or absent: keep it);
   * `cacheDir`: keep built modules' wasm there and take them from there (module-cache.ts);
   * `shippedDir`: take modules from there too, never writing or removing (a build's shipped cache);
   * `timeoutMs`: a worker build's deadline (default 120 s, 0: none); `maxHeapMb`: the worker's
   * V8 old-generation cap (default 2048); `counters`: modules count their rule figures (default
   * true; GenerateOptions.counters); `onIdleStop`: runs once an idle worker has exited (its memory
   * is free then, though the C library may still hold it: rae run releases it there);
   * `whileBuilding`: runs every 250 ms while a build is in the worker, and once when it ends
   * (rae run releases there what the build's threads freed so far: see start-engine.ts);
   * `compilerCacheDir`, `shippedCompilerDir`: where the worker finds a compiler split
   * (asc-loader.ts), the first writable: without one sound, the worker writes one there;
   * `keepBackend`: binaryen's module of the split kept on this thread (keepBackendModule).
   */
  constructor(
    private readonly opts: {
      inProcess?: boolean;
      idleMs?: number;
      cacheDir?: string;
      shippedDir?: string;
      timeoutMs?: number;
      maxHeapMb?: number;
      counters?: boolean;
      onIdleStop?: () => void;
      whileBuilding?: () => void;
      compilerCacheDir?: string;
      shippedCompilerDir?: string;
      keepBackend?: boolean;
    } = {},
  ) {
    this.disk = opts.cacheDir ? new ModuleCache(opts.cacheDir) : undefined;
    this.shipped = opts.shippedDir ? new ModuleCache(opts.shippedDir) : undefined;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_COMPILE_TIMEOUT_MS;
  }

  /**
   * Generates, builds, checks and warms. Rules are evaluated in the given order. Aborting
   * `signal` ends the wait with ECANCELED and stops the build it started (not one it shares).
   */
  async compile(rules: readonly LoadedRule[], signal?: AbortSignal): Promise<CompileOutcome> {
    const t0 = performance.now();
    const gen = generateModule(rules, { counters: this.opts.counters });
    const codegenMs = performance.now() - t0;
    if (!gen.module) return { ok: false, errors: gen.errors.map((e) => runtimeError('ECODEGEN', e.message)) };
    const plan = warmPlan(gen.module);
    const hash = gen.module.hash;
    const hit = this.cache.get(hash);
    let got: { r: BuildResult; from: ModuleFrom } | undefined = hit ? { r: { ok: true, built: hit }, from: 'memory' } : undefined;
    if (!got) {
      // the same module asked for again while it builds (rae run's early compile, then its load) waits for that build
      let p = this.inflight.get(hash);
      if (!p) {
        p = this.obtain(gen.module.code, plan, signal).finally(() => this.inflight.delete(hash));
        this.inflight.set(hash, p);
      }
      got = await untilAborted(p, signal);
    }
    const { r, from } = got;
    if (!r.ok) return { ok: false, errors: [r.error] };
    this.cache.delete(hash);
    this.cache.set(hash, r.built);
    if (this.cache.size > 8) this.cache.delete(this.cache.keys().next().value!);
    return { ok: true, codegenMs, from, compiled: { generated: gen.module, module: r.built.module, wasm: r.built.wasm, compileMs: r.built.compileMs + codegenMs, warmMs: r.built.warmMs } };
  }

  /** The module of `code` from the disk cache, else the shipped one, else built (and then written to the disk cache). */
  private async obtain(code: string, plan: WarmPlan, signal: AbortSignal | undefined): Promise<{ r: BuildResult; from: ModuleFrom }> {
    const key = this.disk || this.shipped ? compileKey(code) : undefined;
    const cached = key !== undefined && this.disk ? await this.fromCache(this.disk, key, plan) : undefined;
    // no worker needed now: the split is checked meanwhile, so the next rules change starts one at once (prestart)
    if (cached) {
      this.checkLater();
      return { r: cached, from: 'disk' };
    }
    const shipped = key !== undefined && this.shipped ? await this.fromCache(this.shipped, key, plan) : undefined;
    if (shipped) {
      this.checkLater();
      return { r: shipped, from: 'shipped' };
    }
    this.buildCount++;
    const r = this.opts.inProcess ? await buildModule(code, plan) : await this.inWorker(code, plan, signal);
    if (r.ok && key !== undefined) this.disk?.put(key, r.built.wasm);
    return { r, from: 'build' };
  }

  /** The module of `key` in `cache`, checked and warmed, or undefined (none, or it failed: then removed, unless shipped). */
  private async fromCache(cache: ModuleCache, key: string, plan: WarmPlan): Promise<{ ok: true; built: Built } | undefined> {
    const wasm = cache.get(key);
    if (!wasm) return undefined;
    const r = await fromWasm(wasm, plan, undefined, DISK_WARM_BUDGET_MS);
    if (r.ok) return r;
    if (cache !== this.shipped) cache.remove(key);
    return undefined;
  }

  /**
   * Checks the split in the background (its reads and hashing are off this thread), unless a worker
   * runs or a split is in hand: two seconds on, so that it does not compete with the rest of a
   * start (`rae run` takes its first module from a module cache while its other parts start).
   */
  private checkLater(): void {
    if (this.opts.inProcess || this.worker || this.splitSeen !== undefined) return;
    setTimeout(() => {
      if (!this.worker && this.splitSeen === undefined) void this.checkSplit();
    }, SPLIT_CHECK_DELAY_MS).unref();
  }

  /**
   * A build is coming (a rules change): starts the worker now, unless one runs, so that it boots
   * and loads the compiler (0.3-0.5 s) while this thread parses the rules and generates their code.
   * With a split checked before (and unchanged since) it starts at once; else after the check.
   * A worker started for nothing (the rules were refused) stops `idleMs` after it loaded the compiler.
   */
  prestart(): void {
    if (this.opts.inProcess || this.worker) return;
    const closes = this.closes;
    const start = () => {
      if (!this.worker && this.closes === closes) this.worker = this.spawn();
    };
    if (this.splitStillSeen()) start();
    else void this.checkSplit().then(start);
  }

  /** Builds arbitrary module source (tools and tests): compile and the sandbox checks, no warm-up. */
  buildSource(code: string): Promise<BuildResult> {
    return this.opts.inProcess ? buildModule(code, undefined) : this.inWorker(code, undefined);
  }

  private spawn(): Worker {
    this.keepBackendModule();
    // From the build (npm run build) the worker imports its JavaScript entry. From the sources it
    // registers tsx's loader first; the compiler (a 2 MB ES module) is imported before that,
    // outside tsx, which would otherwise transform it on every start (measured: 12.6 s instead of 0.8 s).
    // A compiler split loads first, and the package if that fails (compile.ts loadCompiler does the same).
    const url = (spec: string) => JSON.stringify(import.meta.resolve(spec));
    const built = import.meta.url.endsWith('.js');
    const entry = JSON.stringify(new URL(built ? './compile-worker.js' : './compile-worker.ts', import.meta.url).href);
    const asc = this.split ? `import(${JSON.stringify(this.split)}).catch(() => import(${url('assemblyscript/asc')}))` : `import(${url('assemblyscript/asc')})`;
    const boot = built ? `${asc}.then(() => import(${entry}));` : `${asc}.then(() => import(${url('tsx/esm/api')})).then((m) => { m.register(); return import(${entry}); });`;
    const workerData: CompileWorkerData = { split: this.split, splitTo: this.split ? undefined : this.opts.compilerCacheDir };
    const w = new Worker(boot, { eval: true, workerData, resourceLimits: { maxOldGenerationSizeMb: this.opts.maxHeapMb ?? DEFAULT_WORKER_HEAP_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_MB } });
    const mine = new Map<number, Request>();
    this.pending.set(w, mine);
    w.on('message', (m: { id: number; ok: boolean; compilerFrom?: 'split' | 'package' } & Partial<Built> & { error?: RuntimeError }) => {
      if (m.compilerFrom) {
        this.loadedFrom = m.compilerFrom;
        // a worker started ahead of its build (prestart) idles from here, its compiler loaded
        if (mine.size === 0) this.armIdle(w);
        return;
      }
      const req = mine.get(m.id);
      if (!req) return;
      this.settle(mine, req, m.ok ? { ok: true, built: { module: m.module!, wasm: m.wasm!, compileMs: m.compileMs!, warmMs: m.warmMs! } } : { ok: false, error: m.error! });
      const head = mine.values().next().value;
      if (head) this.startClock(w, head);
      else {
        w.unref();
        this.armIdle(w);
      }
    });
    const fail = (why: string) => {
      if (this.worker === w) this.worker = undefined;
      this.pending.delete(w);
      for (const req of [...mine.values()]) this.settle(mine, req, { ok: false, error: runtimeError('EWORKER', `the compile worker stopped: ${why}`) });
    };
    w.on('error', (err) => fail((err as Error & { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? `out of memory (heap cap ${this.opts.maxHeapMb ?? DEFAULT_WORKER_HEAP_MB} MB)` : err.message));
    w.on('exit', (code) => fail(`exit code ${code}`));
    w.unref();
    return w;
  }

  /**
   * With `keepBackend`, binaryen's wasm of the split (the compiler's back end, 8.9 MB) compiled on
   * this thread (off it: WebAssembly.compile) and its module kept. V8 compiles wasm once per
   * process for the same bytes while a module of them lives, code tiered up included: so each
   * new worker gets binaryen's code as the earlier ones left it, optimised, instead of starting
   * it from its baseline compiler again.
   */
  private keepBackendModule(): void {
    if (!this.opts.keepBackend || !this.split || this.backend?.of === this.split) return;
    const wasm = new URL('./binaryen.wasm', this.split);
    this.backend = {
      of: this.split,
      module: readFile(wasm)
        .then((bytes) => WebAssembly.compile(bytes))
        .catch(() => undefined),
    };
  }

  /** binaryen's module kept on this thread (keepBackend), once compiled; undefined without one. */
  async keptBackend(): Promise<WebAssembly.Module | undefined> {
    return this.backend?.module;
  }

  /** Ends a request: its timer and abort listener go, its caller gets `r`. */
  private settle(mine: Map<number, Request>, req: Request, r: BuildResult): void {
    mine.delete(req.id);
    clearTimeout(req.timer);
    req.signal?.removeEventListener('abort', req.onAbort);
    req.resolve(r);
    this.busyCheck();
  }

  /** Whether a worker has a request pending (one is being built). */
  get building(): boolean {
    for (const m of this.pending.values()) if (m.size > 0) return true;
    return false;
  }

  /** Starts or stops the `whileBuilding` ticks as requests come and go (a last tick when they end). */
  private busyCheck(): void {
    const run = this.opts.whileBuilding;
    if (!run) return;
    const busy = this.building;
    if (busy && !this.busyTimer) this.busyTimer = setInterval(run, WHILE_BUILDING_MS).unref();
    else if (!busy && this.busyTimer) {
      clearInterval(this.busyTimer);
      this.busyTimer = undefined;
      run();
    }
  }

  /** The worker takes up `req` now: its deadline starts. */
  private startClock(w: Worker, req: Request): void {
    const ms = this.timeoutMs;
    if (ms > 0 && !req.timer) {
      req.timer = setTimeout(() => this.drop(w, req, runtimeError('ECOMPILETIMEOUT', `the compile ran past its deadline of ${ms} ms (rules.compileTimeoutSeconds); the compile worker was stopped and the running ruleset stays`)), ms).unref();
    }
  }

  /**
   * Fails `req` with `error`. A queued request is skipped by the worker; the one being built can
   * only be stopped with the worker: it is terminated and the requests queued behind go to a new one.
   */
  private drop(w: Worker, req: Request, error: RuntimeError): void {
    const mine = this.pending.get(w);
    if (!mine?.has(req.id)) return;
    const building = mine.keys().next().value === req.id;
    this.settle(mine, req, { ok: false, error });
    if (!building) {
      w.postMessage({ cancel: req.id });
      return;
    }
    const rest = [...mine.values()];
    mine.clear();
    this.pending.delete(w);
    if (this.worker === w) this.worker = undefined;
    void w.terminate();
    for (const r of rest) this.send(r);
    this.busyCheck();
  }

  /** Stops `w` after `idleMs` unless a request comes first. */
  private armIdle(w: Worker): void {
    const idleMs = this.opts.idleMs ?? 0;
    if (idleMs <= 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.worker !== w || (this.pending.get(w)?.size ?? 0) > 0) return;
      this.worker = undefined;
      void w.terminate().then(() => this.opts.onIdleStop?.());
    }, idleMs).unref();
  }

  /** Modules built by the compiler so far (not from memory or disk). */
  get builds(): number {
    return this.buildCount;
  }

  /** Where the last worker loaded the compiler from: a compiler split (asc-loader.ts) or its package; undefined before a worker loaded it. */
  get compilerLoadedFrom(): 'split' | 'package' | undefined {
    return this.loadedFrom;
  }

  /** Whether the worker is running (tests and metrics). */
  get workerRunning(): boolean {
    return this.worker !== undefined;
  }

  private async inWorker(code: string, plan: WarmPlan | undefined, signal?: AbortSignal): Promise<BuildResult> {
    // before a worker starts, the compiler split it is to load is checked (hashed, off this thread: 20-50 ms)
    const closes = this.closes;
    if (!this.worker) await this.checkSplit();
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve({ ok: false, error: canceled() });
      // closed meanwhile: as if its worker had been stopped under it
      if (this.closes !== closes) return resolve({ ok: false, error: runtimeError('EWORKER', 'the compile worker stopped: the compiler was closed') });
      const req: Request = { id: 0, code, plan, resolve, signal, onAbort: () => this.drop(req.worker!, req, canceled()) };
      signal?.addEventListener('abort', req.onAbort, { once: true });
      this.send(req);
    });
  }

  /**
   * Looks for a sound compiler split (asc-loader.ts findSplit), once for the requests waiting
   * together; a split found sound before whose files stat the same is taken without hashing its
   * 10 MB again (40-60 ms on the way to a worker; a file rewritten since changes its stat).
   */
  private async checkSplit(): Promise<void> {
    const roots = [this.opts.compilerCacheDir, this.opts.shippedCompilerDir].filter((d): d is string => d !== undefined);
    if (roots.length === 0 || this.splitStillSeen()) return;
    this.splitCheck ??= findSplit(roots).finally(() => {
      this.splitCheck = undefined;
    });
    const found = await this.splitCheck;
    this.split = found?.url;
    this.splitSeen = found?.stat;
  }

  /** Whether the split the last check found sound is there unchanged (stat). */
  private splitStillSeen(): boolean {
    return this.split !== undefined && this.splitSeen !== undefined && splitStat(this.split) === this.splitSeen;
  }

  /** Posts `req` to the current worker (started if needed) under a fresh id. */
  private send(req: Request): void {
    clearTimeout(this.idleTimer);
    clearTimeout(req.timer);
    req.timer = undefined;
    this.worker ??= this.spawn();
    const w = this.worker;
    const mine = this.pending.get(w)!;
    req.id = this.nextId++;
    req.worker = w;
    mine.set(req.id, req);
    w.ref();
    w.postMessage({ id: req.id, code: req.code, plan: req.plan } satisfies CompileRequest);
    if (mine.size === 1) this.startClock(w, req);
    this.busyCheck();
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    this.closes++;
    clearTimeout(this.idleTimer);
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}
