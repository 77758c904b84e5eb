// A tiny WebAssembly binary writer for sandbox tests: modules with the rule-module exports whose
// `evaluate` body, imports, exports and memory limits the test chooses (no compiler needed).
import { ABI_VERSION } from '../../host/abi/module.js';

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
};
const str = (s: string) => [...leb(s.length), ...Buffer.from(s)];
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
const vec = (items: number[][]) => [...leb(items.length), ...items.flat()];

/** Options of a hand-made module. */
export interface WasmSpec {
  /** Body of evaluate (after locals): 'ok' returns 0, 'trap' is unreachable, 'loop' never ends. */
  evaluate?: 'ok' | 'trap' | 'loop';
  importFn?: boolean;
  omitExport?: string;
  memory?: { min: number; max?: number };
}

/** A module with the rule-module interface, shaped by `spec`. */
export function wasmModule(spec: WasmSpec = {}): Uint8Array<ArrayBuffer> {
  const types = vec([
    [0x60, 0, 1, 0x7f], // () -> i32
    [0x60, 6, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f], // (i32 x6) -> i32
    [0x60, 0, 0], // () -> ()
    [0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f], // (i32 x5) -> i32
  ]);
  const imports = spec.importFn ? vec([[...str('env'), ...str('log'), 0x00, 2]]) : [];
  const nImports = spec.importFn ? 1 : 0;
  const funcs = vec([[0], [1], [0], [0], [0], [3]]); // abiVersion, evaluate, heapBase, resumeAt, counts, profile
  const mem = spec.memory ?? { min: 512, max: 512 };
  const memory = vec([mem.max === undefined ? [0, ...leb(mem.min)] : [1, ...leb(mem.min), ...leb(mem.max)]]);
  const names: Array<[string, number, number]> = [
    ['abiVersion', 0, nImports],
    ['evaluate', 0, nImports + 1],
    ['heapBase', 0, nImports + 2],
    ['resumeAt', 0, nImports + 3],
    ['counts', 0, nImports + 4],
    ['profile', 0, nImports + 5],
    ['memory', 2, 0],
  ];
  const exports = vec(names.filter(([n]) => n !== spec.omitExport).map(([n, kind, idx]) => [...str(n), kind, ...leb(idx)]));
  const body = (code: number[]) => [...leb(code.length + 1), 0, ...code];
  const evaluate = spec.evaluate === 'trap' ? [0x00, 0x0b] : spec.evaluate === 'loop' ? [0x03, 0x40, 0x0c, 0x00, 0x0b, 0x41, 0x00, 0x0b] : [0x41, 0x00, 0x0b];
  const code = vec([body([0x41, ...leb(ABI_VERSION), 0x0b]), body(evaluate), body([0x41, ...leb(1024), 0x0b]), body([0x41, 0x00, 0x0b]), body([0x41, ...leb(1024), 0x0b]), body([0x41, 0x00, 0x0b])]);
  return Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...section(1, types), ...(spec.importFn ? section(2, imports) : []), ...section(3, funcs), ...section(5, memory), ...section(7, exports), ...section(10, code)]);
}
