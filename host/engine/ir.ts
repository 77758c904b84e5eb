// The checked condition: what the checker produces from an expanded AST and what the reference
// interpreter and codegen consume. Fields are resolved against the registry, operators are
// normalised (`==` is `=`), and literals are converted to the field's type once, at load time.
import type { BinaryOp, Modifier, Span, TransformerName } from './ast.js';
import type { FieldDef, PtType } from './fields.js';

/** Comparison operators after normalisation (`==` folded into `=`). */
export type CmpOp = Exclude<BinaryOp, '=='>;

/** A resolved field reference. `canonical` is its printed form, the key in output_fields. */
export interface FieldRef {
  kind: 'field';
  def: FieldDef;
  arg?: string;
  canonical: string;
  type: PtType;
  isList: boolean;
}

/**
 * A transformer applied to operands (and constant strings for join/concat/getopt). A
 * transformer's list argument `(a, "b", f(c))` is a transform named 'list' of its items: each
 * item gives one value (a list item all of its values), the list is missing if an item is.
 */
interface TransformRef {
  kind: 'transform';
  name: TransformerName | 'list';
  args: Array<Operand | { kind: 'const'; value: string }>;
  /** getopt's `[K]`: the option whose value is selected. */
  key?: string;
  type: PtType;
  isList: boolean;
}

export type Operand = FieldRef | TransformRef;

/** An IPv4 or IPv6 address as bytes (4 or 16). */
export interface IpAddr {
  bytes: Uint8Array;
}

/** A network: address bytes and prefix length. */
export interface IpNet {
  bytes: Uint8Array;
  prefix: number;
}

/** A right-hand literal converted to the left operand's type. `text` is the value as written. */
export interface Literal {
  text: string;
  num?: bigint;
  dbl?: number;
  bool?: boolean;
  bytes?: Uint8Array;
  ip?: IpAddr;
  net?: IpNet;
}

export type CheckedExpr =
  | { kind: 'and' | 'or'; children: CheckedExpr[]; span: Span }
  | { kind: 'not'; child: CheckedExpr; span: Span }
  | { kind: 'exists'; operand: Operand; span: Span }
  | { kind: 'cmp'; op: CmpOp; modifier?: Modifier; left: Operand; values: Literal[]; list: boolean; span: Span }
  | { kind: 'cmpfield'; op: CmpOp; left: Operand; right: Operand; span: Span };

/** Visits every node of a checked tree, parents first. */
export function walkChecked(e: CheckedExpr, visit: (n: CheckedExpr) => void): void {
  visit(e);
  if (e.kind === 'and' || e.kind === 'or') for (const c of e.children) walkChecked(c, visit);
  else if (e.kind === 'not') walkChecked(e.child, visit);
}
