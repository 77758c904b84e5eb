// Code generation facade: checked rules to an AssemblyScript module over the evaluator ABI
// (probes/src/eval_abi.h). See module.ts for the module's shape, leaves.ts for the semantics
// of each comparison and strings.ts for the once-per-event string work.
export { generateModule, leafLimit } from './module.js';
export type { GeneratedModule, ThreadUse } from './module.js';
export { SlotTable, THREAD_FIELDS } from './access.js';
export type { Slot, SourceLayout, ThreadField, ValueKind } from './access.js';
