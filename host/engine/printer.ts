// The canonical printer: Expr -> text in libsinsp's `string_visitor` form (libsinsp
// filter/ast.cpp; reference/falco-language.md A.10). Falco prints compiled conditions this way
// (`condition_compiled`, `describe`) and tests compare against it. A `macro` node prints as its
// body, which is what Falco shows once macros are resolved.
import type { Expr, FieldNode, Operand, Rhs, TransformerArg } from './ast.js';
import { escapeStr } from './escaping.js';

/** Prints a condition: `(a and b)`, `not x`, `proc.name in (a, b)`, `tolower(f) = x`. */
export function printExpr(expr: Expr): string {
  const out: string[] = [];
  printInto(expr, out);
  return out.join('');
}

/** Prints one value as libsinsp's escape_str does (quoted only when it must be). */
export function printValue(v: string): string {
  return escapeStr(v);
}

// Iterative over and/or/not/macro so a deep tree cannot overflow the stack.
function printInto(root: Expr, out: string[]): void {
  type Item = Expr | string;
  const stack: Item[] = [root];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    switch (item.kind) {
      case 'and':
      case 'or': {
        stack.push(')');
        for (let i = item.children.length - 1; i >= 0; i--) {
          stack.push(item.children[i]!);
          if (i > 0) stack.push(` ${item.kind} `);
        }
        out.push('(');
        break;
      }
      case 'not':
        out.push('not ');
        stack.push(item.child);
        break;
      case 'macro':
        stack.push(item.body);
        break;
      case 'identifier':
        out.push(item.name);
        break;
      case 'unary':
        out.push(`${operand(item.left)} ${item.op}`);
        break;
      case 'binary': {
        const op = item.modifier === undefined ? item.op : `${item.op} ${item.modifier}`;
        out.push(`${operand(item.left)} ${op} ${rhs(item.right)}`);
        break;
      }
    }
  }
}

function field(f: FieldNode): string {
  return f.arg === undefined ? f.name : `${f.name}${argText(f.arg)}`;
}

/** A field or transformer argument: `[x]`, `["a b"]`, and `[""]` for a present empty one. */
function argText(arg: string): string {
  return `[${escapeStr(arg)}]`;
}

function operand(o: Operand | TransformerArg): string {
  switch (o.kind) {
    case 'field':
      return field(o);
    case 'transformer': {
      const args = o.args.map(operand).join(',');
      return `${o.name}(${args})${o.arg === undefined ? '' : argText(o.arg)}`;
    }
    case 'tr-list':
      return `(${o.items.map(operand).join(', ')})`;
    case 'value':
      return escapeStr(o.value);
  }
}

function rhs(r: Rhs): string {
  switch (r.kind) {
    case 'value':
      return escapeStr(r.value);
    case 'list':
      return `(${r.values.map((v) => escapeStr(v.value)).join(', ')})`;
    case 'val':
      return `val(${field(r.field)})`;
    case 'transformer':
      return operand(r);
  }
}
