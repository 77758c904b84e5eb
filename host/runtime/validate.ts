// Module checks before a rule module is used (the sandbox contract, DESIGN.md "Hot swap and
// sandbox"): no imports at all, exactly the expected exports, one memory whose minimum and
// maximum are both the ABI's fixed size (read from the binary's memory section, which the JS API
// does not expose), then, once instantiated, the ABI version and the end of its statics.
import { ABI_VERSION, MEM } from '../abi/module.js';
import { runtimeError, type RuntimeError } from './errors.js';

/** The exports a rule module has, no more and no fewer. */
const EXPECTED_EXPORTS: ReadonlyArray<readonly [string, string]> = [
  ['abiVersion', 'function'],
  ['counts', 'function'],
  ['evaluate', 'function'],
  ['heapBase', 'function'],
  ['memory', 'memory'],
  ['profile', 'function'],
  ['resumeAt', 'function'],
];

/** Memory limits as declared in the binary. */
interface MemoryLimits {
  min: number;
  max: number | undefined;
}

function leb(bytes: Uint8Array, at: { p: number }): number {
  let result = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at.p++];
    if (b === undefined) throw new Error('truncated LEB128');
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return result;
    shift += 7;
  }
}

/** The memories a binary defines (memory section, id 5); undefined if the binary is malformed. */
function memoryLimits(bytes: Uint8Array): MemoryLimits[] | undefined {
  try {
    const at = { p: 8 };
    while (at.p < bytes.length) {
      const id = bytes[at.p++]!;
      const size = leb(bytes, at);
      const end = at.p + size;
      if (id === 5) {
        const out: MemoryLimits[] = [];
        const n = leb(bytes, at);
        for (let i = 0; i < n; i++) {
          const flags = leb(bytes, at);
          const min = leb(bytes, at);
          out.push({ min, max: flags & 1 ? leb(bytes, at) : undefined });
        }
        return out;
      }
      at.p = end;
    }
    return [];
  } catch {
    return undefined;
  }
}

/** Checks a compiled module against the contract; undefined when it passes. */
export function checkModule(module: WebAssembly.Module, bytes: Uint8Array, capPages: number = MEM.pages): RuntimeError | undefined {
  const imports = WebAssembly.Module.imports(module);
  if (imports.length > 0) {
    return runtimeError('EIMPORT', `module refused: it imports ${imports.map((i) => `${i.module}.${i.name} (${i.kind})`).join(', ')}; a rule module must have no imports`);
  }
  const exports = WebAssembly.Module.exports(module)
    .map((e) => `${e.name}:${e.kind}`)
    .sort();
  const expected = EXPECTED_EXPORTS.map(([n, k]) => `${n}:${k}`);
  const missing = expected.filter((e) => !exports.includes(e));
  const extra = exports.filter((e) => !expected.includes(e));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [missing.length > 0 ? `missing export(s) ${missing.join(', ')}` : '', extra.length > 0 ? `unexpected export(s) ${extra.join(', ')}` : ''].filter(Boolean);
    return runtimeError('EEXPORT', `module refused: ${parts.join('; ')}`);
  }
  const mems = memoryLimits(bytes);
  if (!mems) return runtimeError('EWASM', 'module refused: its binary could not be read');
  const m = mems[0];
  if (mems.length !== 1 || !m) return runtimeError('EMEMORY', `module refused: it defines ${mems.length} memories, expected exactly 1`);
  if (m.max === undefined) return runtimeError('EMEMORY', `module refused: its memory has no maximum (cap is ${capPages} pages)`);
  if (m.max > capPages) return runtimeError('EMEMORY', `module refused: its memory maximum is ${m.max} pages, above the cap of ${capPages} pages`);
  if (m.min !== MEM.pages || m.max !== MEM.pages) return runtimeError('EMEMORY', `module refused: its memory is ${m.min}..${m.max} pages, expected exactly ${MEM.pages}`);
  return undefined;
}

/** Checks an instance's ABI version and statics; undefined when it passes. */
export function checkInstance(exports: WebAssembly.Exports): RuntimeError | undefined {
  const abi = (exports.abiVersion as () => number)();
  if (abi !== ABI_VERSION) return runtimeError('EABI', `module refused: built for ABI version ${abi}, this host speaks ${ABI_VERSION}`);
  const heap = (exports.heapBase as () => number)();
  if (heap > MEM.staticEnd) return runtimeError('EABI', `module refused: its statics end at ${heap}, past the state region at ${MEM.staticEnd}`);
  return undefined;
}
