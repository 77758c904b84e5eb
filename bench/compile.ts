// Benchmark `compile`: the cost of one big rule, `evt.type = openat and (t0 or t1 or ...)` with
// terms cycling over five fields and four operators (proc.name = aI, fd.name = /xI,
// proc.cmdline startswith sI-, fd.name contains /cI/, proc.pid = I), for 1,000, 3,000 and
// 10,000 terms (COMPILE_TERMS=1000,3000 to choose). Per size, through DetectionEngine.load
// (compile first, a fresh engine and compile worker each, so every figure includes a worker
// start): load_ms (load() call to the ruleset live on WASM), and the engine's split of it:
// rules_ms (reader to checker, on the calling thread), compile_ms (codegen + AssemblyScript +
// WebAssembly.compile), warm_ms (the worker's warm-up). The worker loads the compiler from a
// compiler split as `rae run`'s does; each figure with _package is the same load with the
// compiler from its package, measured right after (the split's gain on the worker's start).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRules, type RulesFile } from '../host/engine/index.js';
import { splitCompiler } from '../host/runtime/asc-loader.js';
import { DetectionEngine } from '../host/runtime/detection-engine.js';
import { figure, progress } from './report.js';

const S = 'compile';

/** The benchmark's rule with n terms. */
export function bigRuleText(n: number): string {
  const terms = [(i: number) => `proc.name=a${i}`, (i: number) => `fd.name=/x${i}`, (i: number) => `proc.cmdline startswith s${i}-`, (i: number) => `fd.name contains /c${i}/`, (i: number) => `proc.pid=${100000 + i}`];
  return `- rule: big\n  desc: d\n  condition: evt.type = openat and (${Array.from({ length: n }, (_, i) => terms[i % terms.length]!(i)).join(' or ')})\n  output: big %proc.name\n  priority: WARNING\n`;
}

/** One load of `files` in a fresh engine (and compile worker), its figures named with `suffix`. */
async function measure(files: RulesFile[], n: number, rulesMs: number, suffix: string, compilerCacheDir: string | undefined): Promise<void> {
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'bench', onAlert: () => undefined, compileTimeoutMs: 0, compilerCacheDir });
  progress(`${n} terms${suffix ? ` (${suffix.slice(1)})` : ''}`);
  const t0 = performance.now();
  const r = await engine.load(files);
  const loadMs = performance.now() - t0;
  await engine.close();
  if (!r.swapped) {
    figure(S, `load_failed_${n}${suffix}`, loadMs, 'ms', { errors: r.errors?.map((e) => e.code) });
    return;
  }
  figure(S, `load_ms_${n}${suffix}`, loadMs, 'ms', { terms: n });
  if (!suffix) figure(S, `rules_ms_${n}`, rulesMs, 'ms', { terms: n });
  figure(S, `compile_ms_${n}${suffix}`, engine.stats.lastCompileMs, 'ms', { terms: n });
  figure(S, `warm_ms_${n}${suffix}`, engine.stats.lastWarmMs, 'ms', { terms: n });
}

export async function run(): Promise<void> {
  const sizes = (process.env.COMPILE_TERMS ?? '1000,3000,10000').split(',').map(Number);
  // The worker loads the compiler from a split, as `rae run`'s does from the build's
  // (host/runtime/asc-loader.ts); the same load with the compiler from its package is measured
  // after it, as the ..._package figures.
  const splitRoot = mkdtempSync(join(tmpdir(), 'rae-bench-compile-'));
  try {
    if (!splitCompiler(splitRoot)) progress('compile: no compiler split could be made; both loads take the package');
    for (const n of sizes) {
      const files = [{ name: 'big.yaml', text: bigRuleText(n) }];
      const r0 = performance.now();
      loadRules(files);
      const rulesMs = performance.now() - r0;
      await measure(files, n, rulesMs, '', splitRoot);
      await measure(files, n, rulesMs, '_package', undefined);
    }
  } finally {
    rmSync(splitRoot, { recursive: true, force: true });
  }
}
