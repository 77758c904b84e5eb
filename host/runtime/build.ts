// One compile of generated rule code to a checked, warmed WebAssembly.Module: AssemblyScript,
// WebAssembly.compile, the sandbox checks, then warming on synthetic batches. Runs in the compile
// worker (compile-worker.ts) and, for tools and tests, in-process; fromWasm is the part after
// the compiler, which also checks modules from the on-disk cache (module-cache.ts).
import { MEM } from '../abi/module.js';
import { compileAssemblyScript } from './compile.js';
import { runtimeError, type RuntimeError } from './errors.js';
import { checkInstance, checkModule } from './validate.js';
import { warmInstance, type WarmPlan } from './warm.js';

/** A built module with its timings. */
export interface Built {
  module: WebAssembly.Module;
  wasm: Uint8Array;
  compileMs: number;
  warmMs: number;
}

/** A build's outcome. */
export type BuildResult = { ok: true; built: Built } | { ok: false; error: RuntimeError };

/** Compiles, checks and warms; never throws. */
export async function buildModule(code: string, plan: WarmPlan | undefined): Promise<BuildResult> {
  const t0 = performance.now();
  const asc = await compileAssemblyScript(code);
  if (!asc.ok) return { ok: false, error: runtimeError('ECOMPILE', asc.message) };
  return fromWasm(asc.wasm, plan, t0);
}

/**
 * WebAssembly.compile, the sandbox checks and warming of wasm bytes (a fresh build's or the
 * module cache's); `compileMs` counts from `t0`; `warmBudgetMs` bounds the warm-up (default:
 * warmInstance's). Never throws.
 */
export async function fromWasm(wasm: Uint8Array, plan: WarmPlan | undefined, t0 = performance.now(), warmBudgetMs?: number): Promise<BuildResult> {
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(wasm as Uint8Array<ArrayBuffer>);
  } catch (err) {
    return { ok: false, error: runtimeError('EWASM', `module refused: ${(err as Error).message}`) };
  }
  const bad = checkModule(module, wasm, MEM.pages);
  if (bad) return { ok: false, error: bad };
  const compileMs = performance.now() - t0;
  let warmMs = 0;
  if (plan) {
    try {
      const inst = new WebAssembly.Instance(module, {});
      const badInst = checkInstance(inst.exports);
      if (badInst) return { ok: false, error: badInst };
      warmMs = warmBudgetMs === undefined ? warmInstance(inst.exports, plan) : warmInstance(inst.exports, plan, undefined, undefined, warmBudgetMs);
    } catch (err) {
      return { ok: false, error: runtimeError('ETRAP', `the module trapped while warming: ${(err as Error).message}`) };
    }
  }
  return { ok: true, built: { module, wasm, compileMs, warmMs } };
}
