// Benchmark `compile`: the cost of one big rule, `evt.type = openat and (t0 or t1 or ...)` with
// terms cycling over five fields and four operators (proc.name = aI, fd.name = /xI,
// proc.cmdline startswith sI-, fd.name contains /cI/, proc.pid = I), for 1,000, 3,000 and
// 10,000 terms (COMPILE_TERMS=1000,3000 to choose). Per size, through DetectionEngine.load
// (compile first, a fresh engine and compile worker each, so every figure includes a worker
// start): load_ms (load() call to the ruleset live on WASM), and the engine's split of it:
// rules_ms (reader to checker, on the calling thread), compile_ms (codegen + AssemblyScript +
// WebAssembly.compile), warm_ms (the worker's warm-up).
import { loadRules } from '../host/engine/index.js';
import { DetectionEngine } from '../host/runtime/detection-engine.js';
import { figure, progress } from './report.js';

const S = 'compile';

/** The benchmark's rule with n terms. */
export function bigRuleText(n: number): string {
  const terms = [(i: number) => `proc.name=a${i}`, (i: number) => `fd.name=/x${i}`, (i: number) => `proc.cmdline startswith s${i}-`, (i: number) => `fd.name contains /c${i}/`, (i: number) => `proc.pid=${100000 + i}`];
  return `- rule: big\n  desc: d\n  condition: evt.type = openat and (${Array.from({ length: n }, (_, i) => terms[i % terms.length]!(i)).join(' or ')})\n  output: big %proc.name\n  priority: WARNING\n`;
}

export async function run(): Promise<void> {
  const sizes = (process.env.COMPILE_TERMS ?? '1000,3000,10000').split(',').map(Number);
  for (const n of sizes) {
    const files = [{ name: 'big.yaml', text: bigRuleText(n) }];
    const r0 = performance.now();
    loadRules(files);
    const rulesMs = performance.now() - r0;
    const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'bench', onAlert: () => undefined, compileTimeoutMs: 0 });
    progress(`${n} terms`);
    const t0 = performance.now();
    const r = await engine.load(files);
    const loadMs = performance.now() - t0;
    await engine.close();
    if (!r.swapped) {
      figure(S, `load_failed_${n}`, loadMs, 'ms', { errors: r.errors?.map((e) => e.code) });
      continue;
    }
    figure(S, `load_ms_${n}`, loadMs, 'ms', { terms: n });
    figure(S, `rules_ms_${n}`, rulesMs, 'ms', { terms: n });
    figure(S, `compile_ms_${n}`, engine.stats.lastCompileMs, 'ms', { terms: n });
    figure(S, `warm_ms_${n}`, engine.stats.lastWarmMs, 'ms', { terms: n });
  }
}
