// Facade of the field registry: types, the per-source tables, field resolution for conditions
// and output formats, the suggested-output suffix and the deprecated-field list.
export { SOURCES, typeClass } from './types.js';
export type { FieldDef, FieldOpts, Provider, PtType, Source, TypeClass } from './types.js';
export { fieldTable, lookupField } from './tables.js';
export { matchFieldPrefix, resolveField } from './resolve.js';
export type { FieldPrefixMatch, ResolvedField } from './resolve.js';
export { SYSCALL_SUGGESTED_OUTPUT, suggestedFields, suggestedOutput } from './suggested.js';
export { DEPRECATED_FIELDS } from './event.js';
export { eventParamType } from './event-params.js';
