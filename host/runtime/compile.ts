// AssemblyScript compile step: generated rule source + the assembly/ runtime to wasm bytes,
// through the compiler's programmatic API (no disk access besides reading assembly/ and the
// top-level asconfig.json once). The options are asconfig.json's target `rules` (AssemblyScript's
// config format, so `asc --config asconfig.json --target rules` builds the same way by hand).
// They follow reference/wasm-evaluator-notes.md §1: the stub runtime, no assertions and
// `abort=` so the module has zero imports, and a fixed memory (minimum = maximum) at the ABI's
// size. No optimiser: measured to buy nothing after V8's tier-up, at a large compile cost. No
// Binaryen validation (10-20 ms for the built-in sets): WebAssembly.compile validates the binary.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MEM } from '../abi/module.js';

const ASSEMBLY_DIR = fileURLToPath(new URL('../../assembly/', import.meta.url));
const ASCONFIG = new URL('../../asconfig.json', import.meta.url);

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
export type AscResult = { ok: true; wasm: Uint8Array; ms: number } | { ok: false; code: 'ECOMPILE'; message: string; ms: number };

/** asconfig.json's target `rules` as command-line options: `--name value`, `--name` for true, lists joined by commas. */
export function ascArgs(config: { targets?: Record<string, Record<string, unknown>> }, target = 'rules'): string[] {
  const opts = config.targets?.[target];
  if (!opts) throw new Error(`asconfig.json has no target "${target}"`);
  // the module's memory is fixed at the ABI's size: the config must say so (abi/module.ts MEM.pages)
  if (opts.initialMemory !== MEM.pages || opts.maximumMemory !== MEM.pages) throw new Error(`asconfig.json target "${target}": initialMemory and maximumMemory must be ${MEM.pages} (MEM.pages)`);
  return Object.entries(opts).flatMap(([k, v]) => (v === true ? [`--${k}`] : v === false ? [] : [`--${k}`, Array.isArray(v) ? v.join(',') : String(v)]));
}

/** The compiler options every build uses (extraArgs come after them). */
const ASC_ARGS = ascArgs(JSON.parse(readFileSync(ASCONFIG, 'utf8')) as Parameters<typeof ascArgs>[0]);

/**
 * A key for the wasm that compiling `code` yields: sha256 over the compiler's version, the
 * options, the assembly/ runtime sources and the code (module-cache.ts names files by it).
 */
export function compileKey(code: string): string {
  const h = createHash('sha256');
  h.update(`assemblyscript ${ascVersion()}\0${ASC_ARGS.join(' ')}\0`);
  for (const [name, text] of [...runtime()].sort(([a], [b]) => (a < b ? -1 : 1))) h.update(`${name}\0${text}\0`);
  return h.update(code).digest('hex');
}

let ascVersionCache: string | undefined;
function ascVersion(): string {
  ascVersionCache ??= (JSON.parse(readFileSync(new URL(import.meta.resolve('assemblyscript/package.json')), 'utf8')) as { version: string }).version;
  return ascVersionCache;
}

type Asc = typeof import('assemblyscript/asc');
/** The compiler, and whether it came from a compiler split or its package. */
let ascModule: Promise<{ asc: Asc; from: 'split' | 'package' }> | undefined;

/**
 * Loads the compiler (kept for the life of the process or worker): from `split`, the URL of a
 * compiler split's asc.js (asc-loader.ts: 0.2-0.3 s CPU), else, or if that fails, from its
 * package (0.6-1.6 s CPU, most of it binaryen's embedded wasm). Resolves to where it came from.
 */
export async function loadCompiler(split?: string): Promise<'split' | 'package'> {
  return (await compiler(split)).from;
}

function compiler(split?: string): Promise<{ asc: Asc; from: 'split' | 'package' }> {
  const pkg = () => import('assemblyscript/asc').then((asc) => ({ asc, from: 'package' as const }));
  ascModule ??= split ? (import(split) as Promise<Asc>).then((asc) => ({ asc, from: 'split' as const }), pkg) : pkg();
  return ascModule;
}

/** Compiles a generated entry file (named rules.ts, importing "./index") to wasm. */
export async function compileAssemblyScript(code: string, extraArgs: readonly string[] = []): Promise<AscResult> {
  const loaded = (await compiler()).asc;
  const asc = loaded.default ?? loaded;
  const t0 = performance.now();
  const files = runtime();
  let wasm: Uint8Array | undefined;
  const stderr = asc.createMemoryStream();
  const { error } = await asc.main(['rules.ts', ...ASC_ARGS, ...extraArgs], {
    stderr,
    stdout: asc.createMemoryStream(),
    readFile: (name: string) => (name === 'rules.ts' ? code : (files.get(name) ?? null)),
    writeFile: (name: string, contents: Uint8Array | string) => {
      if (name.endsWith('.wasm') && typeof contents !== 'string') wasm = contents;
    },
    listFiles: () => [],
  });
  const ms = performance.now() - t0;
  if (error || !wasm) return { ok: false, code: 'ECOMPILE', message: `AssemblyScript compile failed: ${error?.message ?? 'no output'}\n${stderr.toString()}`, ms };
  return { ok: true, wasm, ms };
}
