// Rules to a CompiledRuleset: code generation on the caller's thread (pure and fast), then the
// AssemblyScript build in a long-lived worker (or in-process when asked). The worker is started
// on first use, kept referenced only while a compile is pending, and recycled if it dies. It is
// stopped after `idleMs` without a request: with the compiler loaded and JIT-warm it holds about
// 200 MB (measured in `rae run`: 436 -> 239 MB RSS once it stops), and rules change rarely, so
// the next change pays a worker start instead (about 1 s more to the compiled tier; the
// interpreter tier keeps change-to-live unchanged).
import { Worker } from 'node:worker_threads';
import { generateModule, type GeneratedModule } from '../engine/codegen/index.js';
import type { LoadedRule } from '../engine/index.js';
import { evtTypeId } from './abi.js';
import { buildModule, fromWasm, type Built, type BuildResult } from './build.js';
import { compileKey } from './compile.js';
import type { CompileRequest } from './compile-worker.js';
import { runtimeError, type RuntimeError } from './errors.js';
import type { CompiledRuleset } from './evaluator.js';
import { ModuleCache } from './module-cache.js';
import type { WarmPlan } from './warm.js';

/** Where a compiled module came from: this compiler's memory, the on-disk module cache, or a build. */
export type ModuleFrom = 'memory' | 'disk' | 'build';

/** Result of compiling a ruleset. */
export type CompileOutcome = { ok: true; compiled: CompiledRuleset; codegenMs: number; from: ModuleFrom } | { ok: false; errors: RuntimeError[] };

/** The warm plan of a generated module. */
export function warmPlan(g: GeneratedModule): WarmPlan {
  const ids = new Set<number>();
  for (const r of g.rules) for (const t of r.evttypes ?? []) ids.add(evtTypeId(t));
  ids.delete(0);
  return { syscallStride: g.layouts.syscall.stride, auditStride: g.layouts.k8s_audit.stride, typeIds: [...ids].sort((a, b) => a - b) };
}

/** Compiles rulesets, in a worker thread unless `inProcess`. */
export class RuleCompiler {
  private worker: Worker | undefined;
  private nextId = 1;
  /** Built modules by code hash: reloading rules that generate the same code skips the compiler. */
  private readonly cache = new Map<string, Built>();
  /** Requests in flight, by the worker they were sent to (an old worker's exit fails only its own). */
  private readonly pending = new Map<Worker, Map<number, (r: BuildResult) => void>>();

  private idleTimer: NodeJS.Timeout | undefined;

  private readonly disk: ModuleCache | undefined;
  private buildCount = 0;
  /** Builds in progress by code hash. */
  private readonly inflight = new Map<string, Promise<{ r: BuildResult; from: ModuleFrom }>>();

  /**
   * `idleMs`: stop the worker after this long without a request (0 or absent: keep it);
   * `cacheDir`: keep built modules' wasm there and take them from there (module-cache.ts).
   */
  constructor(private readonly opts: { inProcess?: boolean; idleMs?: number; cacheDir?: string } = {}) {
    this.disk = opts.cacheDir ? new ModuleCache(opts.cacheDir) : undefined;
  }

  /** Generates, builds, checks and warms. Rules are evaluated in the given order. */
  async compile(rules: readonly LoadedRule[]): Promise<CompileOutcome> {
    const t0 = performance.now();
    const gen = generateModule(rules);
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
        p = this.obtain(gen.module.code, plan).finally(() => this.inflight.delete(hash));
        this.inflight.set(hash, p);
      }
      got = await p;
    }
    const { r, from } = got;
    if (!r.ok) return { ok: false, errors: [r.error] };
    this.cache.delete(hash);
    this.cache.set(hash, r.built);
    if (this.cache.size > 8) this.cache.delete(this.cache.keys().next().value!);
    return { ok: true, codegenMs, from, compiled: { generated: gen.module, module: r.built.module, wasm: r.built.wasm, compileMs: r.built.compileMs + codegenMs, warmMs: r.built.warmMs } };
  }

  /** The module of `code` from the disk cache, else built (and then written to the disk cache). */
  private async obtain(code: string, plan: WarmPlan): Promise<{ r: BuildResult; from: ModuleFrom }> {
    const key = this.disk ? compileKey(code) : undefined;
    const cached = key !== undefined ? await this.fromDisk(key, plan) : undefined;
    if (cached) return { r: cached, from: 'disk' };
    this.buildCount++;
    const r = this.opts.inProcess ? await buildModule(code, plan) : await this.inWorker(code, plan);
    if (r.ok && key !== undefined) this.disk!.put(key, r.built.wasm);
    return { r, from: 'build' };
  }

  /** The cached module of `key` checked and warmed, or undefined (none, or it failed: then removed). */
  private async fromDisk(key: string, plan: WarmPlan): Promise<{ ok: true; built: Built } | undefined> {
    const wasm = this.disk!.get(key);
    if (!wasm) return undefined;
    const r = await fromWasm(wasm, plan);
    if (r.ok) return r;
    this.disk!.remove(key);
    return undefined;
  }

  /** Builds arbitrary module source (tools and tests): compile and the sandbox checks, no warm-up. */
  buildSource(code: string): Promise<BuildResult> {
    return this.opts.inProcess ? buildModule(code, undefined) : this.inWorker(code, undefined);
  }

  private spawn(): Worker {
    // The worker runs TypeScript too: it registers tsx's loader, then imports the entry. The
    // compiler (a 2 MB ES module) is imported first, outside tsx, which would otherwise
    // transform it on every start (measured: 12.6 s instead of 0.8 s).
    const url = (spec: string) => JSON.stringify(import.meta.resolve(spec));
    const entry = JSON.stringify(new URL('./compile-worker.ts', import.meta.url).href);
    const boot = `import(${url('assemblyscript/asc')}).then(() => import(${url('tsx/esm/api')})).then((m) => { m.register(); return import(${entry}); });`;
    const w = new Worker(boot, { eval: true });
    const mine = new Map<number, (r: BuildResult) => void>();
    this.pending.set(w, mine);
    w.on('message', (m: { id: number; ok: boolean } & Partial<Built> & { error?: RuntimeError }) => {
      const done = mine.get(m.id);
      mine.delete(m.id);
      if (mine.size === 0) {
        w.unref();
        this.armIdle(w);
      }
      done?.(m.ok ? { ok: true, built: { module: m.module!, wasm: m.wasm!, compileMs: m.compileMs!, warmMs: m.warmMs! } } : { ok: false, error: m.error! });
    });
    const fail = (why: string) => {
      if (this.worker === w) this.worker = undefined;
      this.pending.delete(w);
      for (const [id, done] of mine) {
        mine.delete(id);
        done({ ok: false, error: runtimeError('EWORKER', `the compile worker stopped: ${why}`) });
      }
    };
    w.on('error', (err) => fail(err.message));
    w.on('exit', (code) => fail(`exit code ${code}`));
    w.unref();
    return w;
  }

  /** Stops `w` after `idleMs` unless a request comes first. */
  private armIdle(w: Worker): void {
    const idleMs = this.opts.idleMs ?? 0;
    if (idleMs <= 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.worker !== w || (this.pending.get(w)?.size ?? 0) > 0) return;
      this.worker = undefined;
      void w.terminate();
    }, idleMs).unref();
  }

  /** Modules built by the compiler so far (not from memory or disk). */
  get builds(): number {
    return this.buildCount;
  }

  /** Whether the worker is running (tests and metrics). */
  get workerRunning(): boolean {
    return this.worker !== undefined;
  }

  private inWorker(code: string, plan: WarmPlan | undefined): Promise<BuildResult> {
    clearTimeout(this.idleTimer);
    this.worker ??= this.spawn();
    const w = this.worker;
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.get(w)!.set(id, resolve);
      w.ref();
      w.postMessage({ id, code, plan } satisfies CompileRequest);
    });
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}
