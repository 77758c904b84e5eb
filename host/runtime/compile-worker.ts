// The long-lived compile worker: receives generated rule code, builds a checked and warmed
// WebAssembly.Module (build.ts) and posts it back; V8 shares the compiled module between
// threads, so the evaluator gets the tiered-up code without copying it. The AssemblyScript
// compiler stays loaded and JIT-warm for the life of the worker: after its first build the
// worker compiles an empty ruleset once while idle, which tiers up the compiler's parser on the
// std lib (measured: the next real compile of the 73 built-in rules 1.1 s -> 0.5-0.55 s). Not
// before the first build: that one would wait behind it (measured under load: an empty compile
// 4.1 s, then the built-in rules 6.7 s, against 7.3 s for the rules alone): `rae run`'s first start.
import { parentPort, workerData } from 'node:worker_threads';
import { generateModule } from '../engine/codegen/index.js';
import { splitCompiler } from './asc-loader.js';
import { buildModule } from './build.js';
import { compileAssemblyScript, loadCompiler } from './compile.js';
import type { WarmPlan } from './warm.js';

/** A request from the host. */
export interface CompileRequest {
  id: number;
  code: string;
  plan: WarmPlan | undefined;
}

/**
 * What the host tells a new worker (compiler.ts): the compiler split to load the compiler from
 * (asc-loader.ts; absent: its package), or, when there was none sound, where to write one.
 */
export interface CompileWorkerData {
  split?: string;
  splitTo?: string;
}

const port = parentPort!;
const data = (workerData ?? {}) as CompileWorkerData;
// the host learns where the compiler came from (RuleCompiler.compilerLoadedFrom)
void loadCompiler(data.split).then((from) => port.postMessage({ compilerFrom: from }));

/** One throw-away compile of an empty ruleset, started after the current macrotask. */
function warmCompiler(): Promise<unknown> {
  const empty = generateModule([]).module;
  if (!empty) return Promise.resolve();
  return compileAssemblyScript(empty.code).catch(() => undefined);
}
/** Requests queue behind each other and the compiler warm-up. */
let idle: Promise<unknown> = Promise.resolve();
let warmed = false;

/** Requests the host no longer wants (superseded before their turn): skipped, no answer. */
const canceled = new Set<number>();

port.on('message', (msg: CompileRequest | { cancel: number }) => {
  if ('cancel' in msg) {
    canceled.add(msg.cancel);
    return;
  }
  const req = msg;
  idle = idle.then(() => {
    if (canceled.delete(req.id)) return;
    return buildModule(req.code, req.plan).then(
      (r) => port.postMessage(r.ok ? { id: req.id, ok: true, ...r.built } : { id: req.id, ok: false, error: r.error }),
      (err: unknown) => port.postMessage({ id: req.id, ok: false, error: { code: 'EWORKER', message: String(err) } }),
    );
  });
  if (!warmed) {
    warmed = true;
    idle = idle.then(warmCompiler);
    // the next worker loads the compiler from the split (1-2 s CPU once, while idle)
    const to = data.splitTo;
    if (to) idle = idle.then(() => splitCompiler(to)).catch(() => undefined);
  }
});
