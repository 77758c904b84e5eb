// AssemblyScript compile step: generated rule source + the assembly/ runtime to wasm bytes,
// through the compiler's programmatic API (no disk access besides reading assembly/ once).
// Options follow reference/wasm-evaluator-notes.md §1: the stub runtime, no assertions and
// `abort=` so the module has zero imports, and a fixed memory (minimum = maximum) at the ABI's
// size. No optimiser: measured to buy nothing after V8's tier-up, at a large compile cost. No
// Binaryen validation (10-20 ms for the built-in sets): WebAssembly.compile validates the binary.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MEM } from './abi.js';

const ASSEMBLY_DIR = fileURLToPath(new URL('../../assembly/', import.meta.url));

/** The assembly/ runtime sources by file name, read once. */
let runtimeFiles: Map<string, string> | undefined;
function runtime(): Map<string, string> {
  if (!runtimeFiles) {
    runtimeFiles = new Map();
    for (const f of readdirSync(ASSEMBLY_DIR)) if (f.endsWith('.ts')) runtimeFiles.set(f, readFileSync(ASSEMBLY_DIR + f, 'utf8'));
  }
  return runtimeFiles;
}

/** What one compile produced. */
export type AscResult =
  | { ok: true; wasm: Uint8Array; ms: number }
  | { ok: false; code: 'ECOMPILE'; message: string; ms: number };

type Asc = typeof import('assemblyscript/asc');
let ascModule: Promise<Asc> | undefined;

/** Loads the compiler (a 0.3-0.5 s import; kept for the life of the process or worker). */
export function loadCompiler(): Promise<Asc> {
  ascModule ??= import('assemblyscript/asc');
  return ascModule;
}

/** Compiles a generated entry file (named rules.ts, importing "./index") to wasm. */
export async function compileAssemblyScript(code: string, extraArgs: readonly string[] = []): Promise<AscResult> {
  const asc = (await loadCompiler()).default ?? (await loadCompiler());
  const t0 = performance.now();
  const files = runtime();
  let wasm: Uint8Array | undefined;
  const stderr = asc.createMemoryStream();
  const { error } = await asc.main(
    [
      'rules.ts',
      '--outFile', 'rules.wasm',
      '--runtime', 'stub',
      '--noAssert',
      '--use', 'abort=',
      '--noValidate',
      '--initialMemory', String(MEM.pages),
      '--maximumMemory', String(MEM.pages),
      ...extraArgs,
    ],
    {
      stderr,
      stdout: asc.createMemoryStream(),
      readFile: (name: string) => (name === 'rules.ts' ? code : (files.get(name) ?? null)),
      writeFile: (name: string, contents: Uint8Array | string) => {
        if (name.endsWith('.wasm') && typeof contents !== 'string') wasm = contents;
      },
      listFiles: () => [],
    },
  );
  const ms = performance.now() - t0;
  if (error || !wasm) return { ok: false, code: 'ECOMPILE', message: `AssemblyScript compile failed: ${error?.message ?? 'no output'}\n${stderr.toString()}`, ms };
  return { ok: true, wasm, ms };
}
