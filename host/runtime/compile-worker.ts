// The long-lived compile worker: receives generated rule code, builds a checked and warmed
// WebAssembly.Module (build.ts) and posts it back; V8 shares the compiled module between
// threads, so the evaluator gets the tiered-up code without copying it. The AssemblyScript
// compiler stays loaded and JIT-warm for the life of the worker.
import { parentPort } from 'node:worker_threads';
import { buildModule } from './build.js';
import { loadCompiler } from './compile.js';
import type { WarmPlan } from './warm.js';

/** A request from the host. */
export interface CompileRequest {
  id: number;
  code: string;
  plan: WarmPlan | undefined;
}

const port = parentPort!;
void loadCompiler();
port.on('message', (req: CompileRequest) => {
  void buildModule(req.code, req.plan).then(
    (r) => port.postMessage(r.ok ? { id: req.id, ok: true, ...r.built } : { id: req.id, ok: false, error: r.error }),
    (err: unknown) => port.postMessage({ id: req.id, ok: false, error: { code: 'EWORKER', message: String(err) } }),
  );
});
