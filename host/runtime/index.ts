// Runtime facade: what the layers above (sources, commands) use of the runtime. The detection
// engine of `rae run` (DetectionEngine, which loads, compiles, swaps and evaluates), the pieces
// `rae replay` drives directly (a compiler, a module, the priority filter) and the interface a
// source implements to hand kernel records to the engine (RecordTranslator). Nothing outside
// host/runtime/ imports another of its files (test/layers.test.ts).
export { DetectionEngine, selectRules } from './detection-engine.js';
export { RuleCompiler } from './compiler.js';
export { RuleModule } from './evaluator.js';
export { SHIPPED_MODULE_DIR } from './module-cache.js';
export { SHIPPED_COMPILER_DIR } from './asc-loader.js';
export type { LateStart, RecordTranslator } from './translator.js';
export type { RuntimeError } from './errors.js';
export type { KernelUnready } from './engine-types.js';
