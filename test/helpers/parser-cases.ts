// Shared by the condition parser's table tests (parser-accept, parser-reject, parser-ast): libsinsp
// parser.cpp's expected messages, and parsing that fails the test with the condition's text.
import type { Expr } from '../../host/engine/ast.js';
import { parseCondition } from '../../host/engine/parser.js';

const TR = "'val', 'tolower', 'toupper', 'b64', 'basename', 'len', 'join', 'concat', 'getopt'";
export const OPS =
  "expected a valid check operator: one of 'exists', '<=', '<', '>=', '>', '==', '=', '!=', 'glob', " + "'iglob', 'contains', 'icontains', 'bcontains', 'startswith', 'bstartswith', 'endswith', 'regex', " + "'intersects', 'in', 'pmatch'";
export const STRV = `expected a string value or a field with a valid transformer: ${TR}`;
export const NUMV = `expected a number value or a field with a valid transformer: ${TR}`;
export const LISTV = `expected a list, an identifier, or a field with a valid transformer: ${TR}`;
export const CHECK = "expected a '(' token, a field check, or an identifier";
export const ARG = 'expected a valid field argument: a quoted string or a bare string';
export const TRARG = 'expected field transformer argument: field, transformer, quoted string, number, or transformer list';
export const CLOSE_TR = "expected a ')' token closing the transformer";
export const after = (tok: string): string => `unexpected token after '${tok}', expecting 'or', 'and'`;
export const blankAfter = (kw: string): string => `expected blank or '(' after '${kw}'`;

/** The parsed condition; throws (failing the test) with the text, message and offset when it does not parse. */
export function parsed(text: string): Expr {
  const r = parseCondition(text);
  if (!r.ok) throw new Error(`${JSON.stringify(text)}: ${r.error.message} at ${r.error.offset}`);
  return r.expr;
}

/** The parse error of a condition that must fail. */
export function err(text: string, options?: { maxDepth?: number; maxLength?: number }): { message: string; offset: number } {
  const r = parseCondition(text, options);
  if (r.ok) throw new Error(`accepted: ${text.slice(0, 80)}`);
  return r.error;
}
