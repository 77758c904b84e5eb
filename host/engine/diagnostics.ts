// Load diagnostics: every error and warning code in one registry, located values (never thrown),
// and their two renderings: the text form (file:line:col, context chain, caret snippet) and the
// JSON form of `falco -V` (reference/falco-language.md H.3).
import type { SourceText, Position } from './source-text.js';

/** Error codes: Falco's names (falco:userspace/engine/falco_load_result.h), plus RAE_* for ours. */
const ERRORS = {
  LOAD_ERR_FILE_READ: 'File read error',
  LOAD_ERR_YAML_PARSE: 'YAML parse error',
  LOAD_ERR_YAML_VALIDATE: 'Error validating internal structure of YAML file',
  LOAD_ERR_COMPILE_CONDITION: 'Error compiling condition',
  LOAD_ERR_COMPILE_OUTPUT: 'Error compiling output',
  LOAD_ERR_VALIDATE: 'Error validating rule/macro/list/exception objects',
  LOAD_ERR_EXTENSION: 'Error loading extension item',
  RAE_ERR_LIMIT: 'Input exceeds a limit',
  RAE_ERR_EXPANSION_LIMIT: 'Expanded condition exceeds a size or depth limit',
  RAE_ERR_UNSUPPORTED: 'Condition not supported by the compiled evaluator',
} as const;

/** Warning codes: Falco's names (falco_load_result.h warning_code). */
const WARNINGS = {
  LOAD_UNKNOWN_SOURCE: 'Unknown event source',
  LOAD_UNSAFE_NA_CHECK: 'Unsafe <NA> comparison in condition',
  LOAD_NO_EVTTYPE: 'Condition has no event-type restriction',
  LOAD_UNKNOWN_FILTER: 'Unknown field or event-type in condition or output',
  LOAD_UNUSED_MACRO: 'Unused macro',
  LOAD_UNUSED_LIST: 'Unused list',
  LOAD_UNKNOWN_ITEM: 'Unknown rules file item',
  LOAD_DEPRECATED_ITEM: 'Used deprecated item',
  LOAD_WARNING_EXTENSION: 'Extension item has a warning',
  LOAD_APPEND_NO_VALUES: 'Overriding/appending with no values',
  LOAD_EXCEPTION_NAME_NOT_UNIQUE: 'Multiple exceptions defined with the same name',
  LOAD_INVALID_MACRO_NAME: 'Invalid macro name',
  LOAD_INVALID_LIST_NAME: 'Invalid list name',
  LOAD_COMPILE_CONDITION: 'Condition has been compiled with a warning',
  LOAD_UNKNOWN_KEY: 'Unknown key',
} as const;

type ErrorCode = keyof typeof ERRORS;
export type WarningCode = keyof typeof WARNINGS;
export type Code = ErrorCode | WarningCode;

/** Item types of a location, as Falco names them (rule_loader.cpp item_type_strings). */
export type ItemType =
  | 'value for'
  | 'exceptions'
  | 'exception'
  | 'exception values'
  | 'exception value'
  | 'rules content'
  | 'rules content item'
  | 'required_engine_version'
  | 'required plugin versions'
  | 'required plugin versions entry'
  | 'required plugin versions alternative'
  | 'list'
  | 'list item'
  | 'macro'
  | 'macro condition'
  | 'rule'
  | 'rule condition'
  | 'condition expression'
  | 'rule output'
  | 'rule output expression'
  | 'rule priority'
  | 'overrides'
  | 'extension item';

/** One link of a context chain: what item, and where in which file. */
export interface Location {
  itemType: ItemType;
  itemName: string;
  position: Position;
}

/** A located error or warning. The last location is the most specific one. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  code: Code;
  message: string;
  locations: Location[];
}

/** The short description of a code. */
function codeDescription(code: Code): string {
  return (ERRORS as Record<string, string>)[code] ?? (WARNINGS as Record<string, string>)[code] ?? code;
}

function isErrorCode(code: Code): code is ErrorCode {
  return code in ERRORS;
}

/** A diagnostic whose severity follows from its code. */
export function diagnostic(code: Code, message: string, locations: Location[]): Diagnostic {
  return { severity: isErrorCode(code) ? 'error' : 'warning', code, message, locations };
}

/** Collects diagnostics across stages; stages append and keep going where that makes sense. */
export class Diagnostics {
  readonly items: Diagnostic[] = [];
  add(code: Code, message: string, locations: Location[]): void {
    this.items.push(diagnostic(code, message, locations));
  }
  push(...ds: Diagnostic[]): void {
    this.items.push(...ds);
  }
  get errors(): Diagnostic[] {
    return this.items.filter((d) => d.severity === 'error');
  }
  get warnings(): Diagnostic[] {
    return this.items.filter((d) => d.severity === 'warning');
  }
  hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }
}

/** Looks up the text of a file by name, for snippets. */
export type SourceLookup = (name: string) => SourceText | undefined;

function formatPos(p: Position): string {
  return `${p.name}:${p.line}:${p.column}`;
}

/** The source line of the most specific location with a caret under its column. */
function snippet(d: Diagnostic, lookup: SourceLookup): string {
  for (let i = d.locations.length - 1; i >= 0; i--) {
    const pos = d.locations[i]!.position;
    const src = lookup(pos.name);
    if (!src) continue;
    const text = src.line(pos.line);
    const gutter = String(pos.line);
    const pad = ' '.repeat(gutter.length);
    // Tabs are kept in the caret line so the caret lines up under the same column.
    const lead = text.slice(0, Math.max(0, pos.column - 1)).replace(/[^\t]/g, ' ');
    return `  ${gutter} | ${text}\n  ${pad} | ${lead}^`;
  }
  return '';
}

/**
 * The text form: a headline `file:line:col: error CODE (description): message`, the context chain
 * one location per line, and the caret snippet.
 */
export function renderDiagnostic(d: Diagnostic, lookup: SourceLookup): string {
  const last = d.locations[d.locations.length - 1];
  const where = last ? `${formatPos(last.position)}: ` : '';
  const lines = [`${where}${d.severity} ${d.code} (${codeDescription(d.code)}): ${d.message}`];
  for (const loc of d.locations) {
    const name = loc.itemName ? ` '${loc.itemName}'` : '';
    lines.push(`    ${d.locations.indexOf(loc) === 0 ? 'In ' : ''}${loc.itemType}${name}: (${formatPos(loc.position)})`);
  }
  const snip = snippet(d, lookup);
  if (snip) lines.push(snip);
  return lines.join('\n');
}

export interface DiagnosticJson {
  code: Code;
  codedesc: string;
  message: string;
  context: {
    locations: Array<{ item_type: ItemType; item_name: string; position: Position }>;
    snippet: string;
  };
}

/** One diagnostic as JSON. */
export function diagnosticJson(d: Diagnostic, lookup: SourceLookup): DiagnosticJson {
  return {
    code: d.code,
    codedesc: codeDescription(d.code),
    message: d.message,
    context: {
      locations: d.locations.map((l) => ({ item_type: l.itemType, item_name: l.itemName, position: l.position })),
      snippet: snippet(d, lookup),
    },
  };
}

/** The file a diagnostic belongs to: the name of its first location. */
export function diagnosticFile(d: Diagnostic): string | undefined {
  return d.locations[0]?.position.name;
}
