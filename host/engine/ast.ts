// The condition AST: plain data, a `kind`-discriminated union with a source span on every node.
// Produced by the parser (parser.ts), rewritten by expand.ts (macros become `macro` nodes), read
// by the checker, the event-type analysis, the interpreter and codegen. Passes never mutate a
// tree; they build a new one. The canonical printer lives in printer.ts.

/** Half-open [start, end) offsets into the condition text the parser was given. */
export interface Span {
  start: number;
  end: number;
}

/** A field reference: `proc.name`, `proc.aname[2]`, `evt.arg["key"]`. */
export interface FieldNode {
  kind: 'field';
  /** The field name as written, without the argument (`proc.aname`, `evt.arg.flags`). */
  name: string;
  /** The decoded argument: undefined when there is none, '' for `[""]`. */
  arg?: string;
  span: Span;
}

export type TransformerName = 'tolower' | 'toupper' | 'b64' | 'basename' | 'len' | 'join' | 'concat' | 'getopt';

/** A transformer application: `tolower(proc.name)`, `join(",", (a, b))`, `getopt(proc.args, "a:")[a]`. */
export interface TransformerNode {
  kind: 'transformer';
  name: TransformerName;
  args: TransformerArg[];
  /** The `[K]` argument after the closing parenthesis (getopt), if any. */
  arg?: string;
  span: Span;
}

/** A transformer's list argument: `(a, "b", 1)`. */
export interface TransformerListNode {
  kind: 'tr-list';
  items: Array<FieldNode | TransformerNode | ValueNode>;
  span: Span;
}

export type TransformerArg = FieldNode | TransformerNode | ValueNode | TransformerListNode;

/** The left-hand side of a check. */
export type Operand = FieldNode | TransformerNode;

/** A literal value, already unescaped. `quoted` records whether it was written in quotes. */
export interface ValueNode {
  kind: 'value';
  value: string;
  quoted: boolean;
  span: Span;
}

/** A parenthesised list of values after `in`, `intersects`, `pmatch` or a modifier. */
export interface ListNode {
  kind: 'list';
  values: ValueNode[];
  span: Span;
}

/** `val(field)`: a field used as the right-hand side. */
export interface FieldValueNode {
  kind: 'val';
  field: FieldNode;
  span: Span;
}

export type Rhs = ValueNode | ListNode | FieldValueNode | TransformerNode;

type UnaryOp = 'exists';
export type BinaryOp = '=' | '==' | '!=' | '<' | '<=' | '>' | '>=' | 'contains' | 'icontains' | 'bcontains' | 'startswith' | 'bstartswith' | 'endswith' | 'glob' | 'iglob' | 'regex' | 'in' | 'intersects' | 'pmatch';
export type Modifier = 'oneof' | 'anyof' | 'allof';

interface AndNode {
  kind: 'and';
  children: Expr[];
  span: Span;
}

interface OrNode {
  kind: 'or';
  children: Expr[];
  span: Span;
}

interface NotNode {
  kind: 'not';
  child: Expr;
  span: Span;
}

/** A bare identifier: a macro reference until expand.ts resolves it. */
export interface IdentifierNode {
  kind: 'identifier';
  name: string;
  span: Span;
}

interface UnaryCheckNode {
  kind: 'unary';
  left: Operand;
  op: UnaryOp;
  span: Span;
}

export interface BinaryCheckNode {
  kind: 'binary';
  left: Operand;
  op: BinaryOp;
  modifier?: Modifier;
  right: Rhs;
  span: Span;
}

/**
 * A resolved macro reference (made by expand.ts): `span` is the identifier's span in the
 * enclosing text, `body` the macro's expanded tree whose spans refer to the macro's own text.
 */
interface MacroNode {
  kind: 'macro';
  name: string;
  body: Expr;
  span: Span;
}

export type Expr = AndNode | OrNode | NotNode | IdentifierNode | UnaryCheckNode | BinaryCheckNode | MacroNode;

/** Operators that take a list (or a list identifier) on the right. */
export const LIST_OPS: ReadonlySet<BinaryOp> = new Set<BinaryOp>(['in', 'intersects', 'pmatch']);

/** Calls `visit` on every Expr node, parents before children, macro bodies included. */
export function walk(expr: Expr, visit: (node: Expr, macroPath: readonly string[]) => void, macroPath: readonly string[] = []): void {
  visit(expr, macroPath);
  switch (expr.kind) {
    case 'and':
    case 'or':
      for (const c of expr.children) walk(c, visit, macroPath);
      break;
    case 'not':
      walk(expr.child, visit, macroPath);
      break;
    case 'macro':
      walk(expr.body, visit, [...macroPath, expr.name]);
      break;
    default:
      break;
  }
}

/** Every field node of a check's operand or right-hand side (inside transformers too). */
export function fieldsOf(node: Operand | Rhs | TransformerArg): FieldNode[] {
  switch (node.kind) {
    case 'field':
      return [node];
    case 'val':
      return [node.field];
    case 'transformer':
      return node.args.flatMap(fieldsOf);
    case 'tr-list':
      return node.items.flatMap(fieldsOf);
    default:
      return [];
  }
}
