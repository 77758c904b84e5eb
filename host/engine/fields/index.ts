// Facade of the field registry: types, the per-source tables, field resolution for conditions
// and output formats, the suggested-output suffix and the deprecated-field list.
export { SOURCES, typeClass } from './types.js';
export type { FieldDef, PtType, Source, TypeClass } from './types.js';
export { fieldTable, lookupField } from './tables.js';
export { matchFieldPrefix, resolveField } from './resolve.js';
export { SYSCALL_SUGGESTED_OUTPUT, suggestedOutput } from './suggested.js';
export { DEPRECATED_FIELDS } from './event.js';
