// Checker: an expanded condition (AST with macro nodes) to a CheckedExpr for one event source.
// Resolves fields against the registry, checks operators against field types and list-ness,
// converts literals, validates transformers and field-vs-field comparisons, and emits libsinsp's
// compiler warnings (reference/falco-language.md A.5, A.7-A.9, A.11, H.2). Problems are located
// diagnostics; the first error of a condition stops its check.
import type { BinaryCheckNode, Expr, FieldNode, Operand as AstOperand, Rhs, TransformerArg, TransformerNode } from './ast.js';
import type { Diagnostics, Location, WarningCode } from './diagnostics.js';
import { EVENT_NAMES } from '../abi/event-names.js';
import { DEPRECATED_FIELDS, resolveField, typeClass, type PtType, type Source } from './fields.js';
import type { CheckedExpr, CmpOp, FieldRef, Literal, Operand } from './ir.js';
import { convertLiteral } from './literals.js';
import { printValue } from './printer.js';
import { parseRegex, type RegexLimits } from './regex-syntax.js';
import { hasRawBytes } from './raw-text.js';
import { DEFAULT_RULES_BOUNDS } from './rules-bounds.js';

/** Where a condition's spans point, and how to name a macro body's location. */
export interface CheckContext {
  source: Source;
  /** Location chain for an offset of the top-level condition. */
  locate: (offset: number) => Location[];
  /** Location chain for an offset inside a macro's condition (by macro name). */
  locateInMacro: (macro: string, offset: number) => Location[];
  /** Why the compiled evaluator cannot run a leaf (cmp, exists, cmpfield), if it cannot: then the rule fails here, located. */
  leafLimit?: (leaf: CheckedExpr, source: Source) => string | undefined;
  /** A `regex` pattern's bounds (rules.maxRegex*); default REGEX_LIMITS. */
  regexLimits?: RegexLimits;
  /** Longest `glob`/`iglob`/`pmatch` pattern in UTF-8 bytes (rules.maxGlobBytes); default DEFAULT_RULES_BOUNDS's. */
  maxGlobBytes?: number;
}

class CheckError {
  /** Set where the error leaves a macro body, while the macro is still on the path. */
  locations?: Location[];
  constructor(
    readonly message: string,
    readonly offset: number,
    readonly code?: 'RAE_ERR_UNSUPPORTED',
  ) {}
}

const STRING_OPS: ReadonlySet<CmpOp> = new Set<CmpOp>(['=', '!=', '<', '<=', '>', '>=', 'contains', 'icontains', 'startswith', 'endswith', 'glob', 'iglob', 'pmatch', 'regex', 'in', 'intersects']);
const NUMERIC_OPS: ReadonlySet<CmpOp> = new Set<CmpOp>(['=', '!=', '<', '<=', '>', '>=', 'in', 'intersects']);
const EQ_OPS: ReadonlySet<CmpOp> = new Set<CmpOp>(['=', '!=', 'in', 'intersects']);
const BYTES_OPS: ReadonlySet<CmpOp> = new Set<CmpOp>(['=', '!=', 'contains', 'startswith', 'endswith', 'bcontains', 'bstartswith', 'in', 'intersects']);
const LIST_FIELD_OPS: ReadonlySet<CmpOp> = new Set<CmpOp>(['in', 'intersects']);

const CLASS_NAME: Record<ReturnType<typeof typeClass>, string> = {
  string: 'string',
  bytes: 'buffer',
  bool: 'boolean',
  signed: 'numeric',
  unsigned: 'numeric',
  double: 'numeric',
  ipaddr: 'IP address',
  ipnet: 'IP network',
};

/** Every comparison operator the checker knows (the union of the per-type tables below). */
export const COMPARISON_OPERATORS: readonly CmpOp[] = [...new Set([...STRING_OPS, ...NUMERIC_OPS, ...EQ_OPS, ...BYTES_OPS, ...LIST_FIELD_OPS])];

/** Operators a field type supports (A.5). */
export function opsFor(type: PtType, isList: boolean): ReadonlySet<CmpOp> {
  if (isList) return LIST_FIELD_OPS;
  switch (typeClass(type)) {
    case 'string':
      return STRING_OPS;
    case 'bytes':
      return BYTES_OPS;
    case 'signed':
    case 'unsigned':
    case 'double':
      return NUMERIC_OPS;
    default:
      return EQ_OPS;
  }
}

const STRING_TYPES: ReadonlySet<PtType> = new Set<PtType>(['PT_CHARBUF', 'PT_FSPATH', 'PT_FSRELPATH']);
const FIELD_NAME = /^[a-zA-Z]+[a-zA-Z0-9_]*(\.[a-zA-Z]+[a-zA-Z0-9_]*)+(\[[^\]]*\])?$/;

/** Checks one expanded condition. Undefined (with a diagnostic) when it does not compile. */
export function checkCondition(expr: Expr, ctx: CheckContext, diags: Diagnostics, skipUnknown = false): CheckedExpr | undefined {
  const c = new Checker(ctx, diags);
  try {
    return c.expr(expr);
  } catch (e) {
    if (!(e instanceof CheckError)) throw e;
    const unknown = e.message.includes('nonexistent field') || e.message.includes('unknown event type');
    diags.add(e.code ?? (unknown && skipUnknown ? 'LOAD_UNKNOWN_FILTER' : 'LOAD_ERR_COMPILE_CONDITION'), e.message, e.locations ?? c.where(e.offset));
    return undefined;
  }
}

class Checker {
  private macroPath: string[] = [];
  /** Checked macro bodies: a body is shared by all its references (expand.ts), so it is checked once. */
  private readonly bodies = new Map<Expr, CheckedExpr>();

  constructor(
    private readonly ctx: CheckContext,
    private readonly diags: Diagnostics,
  ) {}

  where(offset: number): Location[] {
    const m = this.macroPath.at(-1);
    return m === undefined ? this.ctx.locate(offset) : this.ctx.locateInMacro(m, offset);
  }

  private warn(code: WarningCode, message: string, offset: number): void {
    this.diags.add(code, message, this.where(offset));
  }

  expr(e: Expr): CheckedExpr {
    switch (e.kind) {
      case 'and':
      case 'or':
        return { kind: e.kind, children: e.children.map((x) => this.expr(x)), span: e.span };
      case 'not':
        return { kind: 'not', child: this.expr(e.child), span: e.span };
      case 'macro': {
        const known = this.bodies.get(e.body);
        if (known) return known;
        this.macroPath.push(e.name);
        try {
          const checked = this.expr(e.body);
          this.bodies.set(e.body, checked);
          return checked;
        } catch (err) {
          if (err instanceof CheckError) err.locations ??= this.where(err.offset);
          throw err;
        } finally {
          this.macroPath.pop();
        }
      }
      case 'identifier':
        throw new CheckError(`filter error: unexpected identifier '${e.name}'`, e.span.start);
      case 'unary':
        return this.compilable({ kind: 'exists', operand: this.operand(e.left), span: e.span });
      case 'binary':
        return this.compilable(this.binary(e));
    }
  }

  /** A checked leaf, once the compiled evaluator is known to run it (one engine accepts what the other does). */
  private compilable(leaf: CheckedExpr): CheckedExpr {
    const why = this.ctx.leafLimit?.(leaf, this.ctx.source);
    if (why !== undefined) throw new CheckError(why, leaf.span.start, 'RAE_ERR_UNSUPPORTED');
    return leaf;
  }

  private field(f: FieldNode): FieldRef {
    const r = resolveField(this.ctx.source, f.name, f.arg);
    if (!r.ok) throw new CheckError(r.message, f.span.start);
    if (DEPRECATED_FIELDS.has(r.def.name)) {
      this.warn('LOAD_DEPRECATED_ITEM', `usage of deprecated field '${r.def.name}' has been detected in the rule condition`, f.span.start);
    }
    const canonical = f.arg === undefined ? f.name : `${f.name}[${f.arg === '' ? '""' : f.arg}]`;
    return { kind: 'field', def: r.def, arg: r.arg, canonical, type: r.def.type, isList: r.def.isList };
  }

  private operand(o: AstOperand): Operand {
    return o.kind === 'field' ? this.field(o) : this.transformer(o);
  }

  private transformer(t: TransformerNode): Operand {
    if (t.arg !== undefined && t.name !== 'getopt') throw new CheckError(`filter error: transformer '${t.name}' does not support field arguments`, t.span.start);
    const fail = (message: string): never => {
      throw new CheckError(message, t.span.start);
    };
    type Arg = Operand | { kind: 'const'; value: string };
    const arg = (a: TransformerArg): Arg => {
      if (a.kind === 'value') return { kind: 'const', value: a.value };
      if (a.kind === 'tr-list') return { kind: 'transform', name: 'list', args: a.items.map(arg), type: 'PT_CHARBUF', isList: true };
      const op = this.operand(a);
      if (op.kind === 'field' && op.def.noTransformer) {
        throw new CheckError(`can't add field transformer: field '${op.canonical}' does not support transformers`, a.span.start);
      }
      return op;
    };
    const isList = (a: Arg) => a.kind !== 'const' && a.isList;
    const isString = (a: Arg) => a.kind === 'const' || STRING_TYPES.has(a.type);
    switch (t.name) {
      case 'tolower':
      case 'toupper':
      case 'b64':
      case 'basename':
      case 'len': {
        if (t.args.length !== 1) fail(`filter error: transformer '${t.name}' takes exactly one argument`);
        const a = arg(t.args[0]!);
        if (a.kind === 'const') return fail(`filter error: transformer '${t.name}' needs a field argument`);
        const ok = t.name === 'len' ? STRING_TYPES.has(a.type) || a.type === 'PT_BYTEBUF' || a.isList : t.name === 'b64' ? STRING_TYPES.has(a.type) || a.type === 'PT_BYTEBUF' : STRING_TYPES.has(a.type);
        if (!ok) fail(`can't add field transformer: type '${a.type}' is not supported by '${t.name}' transformer`);
        if (t.name === 'len') return { kind: 'transform', name: t.name, args: [a], type: 'PT_UINT64', isList: false };
        return { kind: 'transform', name: t.name, args: [a], type: a.type, isList: a.isList };
      }
      // join, concat and getopt: libsinsp's sinsp_filtercheck_multivalue_transformer.cpp (messages and argument rules)
      case 'concat': {
        const args = t.args.map(arg);
        if (args.length < 2) fail('concat() requires at least 2 arguments');
        if (args.some((a) => isList(a) || !isString(a))) fail('concat() arguments must be strings');
        return { kind: 'transform', name: 'concat', args, type: 'PT_CHARBUF', isList: false };
      }
      case 'join': {
        const args = t.args.map(arg);
        if (args.length !== 2) fail('join() requires exactly 2 arguments: separator and list');
        const [sep, list] = args as [Arg, Arg];
        if (isList(sep)) fail('join() first argument (separator) must be a single value, not a list');
        if (!isList(list)) fail('join() second argument must be a list');
        // the separator and the items are printed as text: strings, or integers in decimal
        const printable = (a: Arg) => isString(a) || (a.kind !== 'const' && (typeClass(a.type) === 'signed' || typeClass(a.type) === 'unsigned'));
        const items = list.kind === 'transform' && list.name === 'list' ? list.args : [list];
        if (!printable(sep) || !items.every(printable)) fail('join() arguments must be strings or integers');
        return { kind: 'transform', name: 'join', args, type: 'PT_CHARBUF', isList: false };
      }
      case 'getopt': {
        const args = t.args.map(arg);
        if (args.length !== 2) fail('getopt() requires exactly 2 arguments: args list and optstring');
        const [argv, opts] = args as [Arg, Arg];
        if (!isList(argv)) fail('getopt() first argument must be a list');
        if (isList(opts)) fail('getopt() second argument (optstring) must be a single value');
        const items = argv.kind === 'transform' && argv.name === 'list' ? argv.args : [argv];
        if (!items.every(isString) || !isString(opts)) fail('getopt() arguments must be strings');
        if (t.arg !== undefined && t.arg.length !== 1) fail('getopt() field argument must be a single option character');
        return { kind: 'transform', name: 'getopt', args, key: t.arg, type: 'PT_CHARBUF', isList: t.arg === undefined };
      }
    }
  }

  private binary(e: BinaryCheckNode): CheckedExpr {
    const op: CmpOp = e.op === '==' ? '=' : e.op;
    const left = this.operand(e.left);
    const allowed = opsFor(left.type, left.isList);
    if (!allowed.has(op)) {
      const what = left.isList ? 'list' : CLASS_NAME[typeClass(left.type)];
      throw new CheckError(`'${e.op}' operator not supported for ${what} filters`, e.span.start);
    }
    if (e.modifier && (typeClass(left.type) === 'ipaddr' || typeClass(left.type) === 'ipnet') && op !== '=' && op !== '!=') {
      throw new CheckError(`'${e.op} ${e.modifier}' operator not supported for IP filters`, e.span.start);
    }
    const rhs = e.right;
    if (rhs.kind === 'val' || rhs.kind === 'transformer') return this.fieldCompare(e, op, left, rhs);
    const values = rhs.kind === 'list' ? rhs.values : [rhs];
    const lits: Literal[] = [];
    const bytesOp = op === 'bcontains' || op === 'bstartswith';
    for (const v of values) {
      const r = convertLiteral(v.value, left.type, bytesOp);
      if (!r.ok) throw new CheckError(r.message, v.span.start);
      lits.push(r.lit);
      this.valueWarnings(v.value, v.span.start);
    }
    if (op === 'regex') for (const l of lits) this.checkRegex(l.text, e.span.start);
    if (op === 'glob' || op === 'iglob' || op === 'pmatch') {
      const max = this.ctx.maxGlobBytes ?? DEFAULT_RULES_BOUNDS.maxGlobBytes;
      for (const l of lits) {
        const bytes = Buffer.byteLength(l.text);
        if (bytes > max) throw new CheckError(`${e.op} pattern is ${bytes} bytes, longer than rules.maxGlobBytes=${max}`, e.span.start);
      }
    }
    if (left.kind === 'field' && left.def.name === 'evt.type') {
      for (const l of lits) if (!EVENT_NAMES.has(l.text)) throw new CheckError(`unknown event type ${l.text}`, e.span.start);
    }
    if (left.kind === 'field' && (left.def.name.startsWith('ka.') || left.def.name.startsWith('jevt.')) && (op === '=' || op === '!=' || op === 'in') && lits.some((l) => l.text === '<NA>')) {
      this.warn('LOAD_UNSAFE_NA_CHECK', 'The condition compares a field with the literal <NA>: k8saudit fields are missing, not <NA>, when absent, so this check is not reliable. Use exists.', e.span.start);
    }
    return { kind: 'cmp', op, modifier: e.modifier, left, values: lits, list: rhs.kind === 'list', span: e.span };
  }

  private fieldCompare(e: BinaryCheckNode, op: CmpOp, left: Operand, rhs: Exclude<Rhs, { kind: 'value' | 'list' }>): CheckedExpr {
    if (op === 'pmatch' || op === 'regex') throw new CheckError(`'${e.op}' operator does not support field comparisons`, e.span.start);
    const right = rhs.kind === 'val' ? this.field(rhs.field) : this.transformer(rhs);
    for (const side of [left, right]) {
      if (side.kind === 'field' && side.def.noRhs) throw new CheckError(`field '${side.canonical}' can't be used in a field comparison`, e.span.start);
      if (typeClass(side.type) === 'ipnet') throw new CheckError("IP network fields can't be used in a field comparison", e.span.start);
    }
    if (right.type !== left.type || right.isList !== left.isList) {
      throw new CheckError(`field comparison: the two operands have different types (${left.type}${left.isList ? ' list' : ''} and ${right.type}${right.isList ? ' list' : ''})`, rhs.span.start);
    }
    return { kind: 'cmpfield', op, left, right, span: e.span };
  }

  /** libsinsp's check_value_and_add_warnings (A.11). */
  private valueWarnings(value: string, offset: number): void {
    const compact = value.replace(/\s+/g, '');
    if (FIELD_NAME.test(compact)) {
      const m = /^([^[]+)(?:\[([^\]]*)\])?$/.exec(compact)!;
      if (resolveField(this.ctx.source, m[1]!, m[2]).ok) {
        this.warn('LOAD_COMPILE_CONDITION', `'${value}' may be a valid field misused as a const string value`, offset);
      }
    }
    if (/^(tolower|toupper|b64|basename|len|join|concat|getopt|val)\(.*\)$/.test(compact)) {
      this.warn('LOAD_COMPILE_CONDITION', `'${value}' may be a valid field transformer misused as a const string value`, offset);
    }
  }

  /** JavaScript's syntax, then what RE2 refuses (backreferences, lookaround) and the size limits (regex-syntax.ts). */
  private checkRegex(pattern: string, offset: number): void {
    // RE2 takes UTF-8 patterns only (Falco 0.45 refuses a raw `\xff` here): raw bytes are matched by the byte operators
    if (hasRawBytes(pattern)) throw new CheckError(`invalid regex pattern: ${printValue(pattern)}: invalid UTF-8 (a raw byte such as \\xff is matched with =, contains, startswith, endswith or glob)`, offset);
    try {
      new RegExp(pattern, 'su');
    } catch (err) {
      throw new CheckError(`invalid regex pattern: ${(err as Error).message}`, offset);
    }
    const parsed = parseRegex(pattern, this.ctx.regexLimits);
    if (!parsed.ok) throw new CheckError(`invalid regex pattern: ${printValue(pattern)}: ${parsed.message} (at offset ${parsed.offset} of the pattern)`, offset);
    const inner = pattern
      .replace(/^\^/, '')
      .replace(/^\.[*+?]/, '')
      .replace(/\$$/, '')
      .replace(/\.[*+?]$/, '');
    if (!/[\\.*+?()[\]{}|^$]/.test(inner)) {
      this.warn('LOAD_COMPILE_CONDITION', `regex check with '${pattern}' may be optimized with simpler operators such as '=', 'contains', 'startswith', 'endswith'`, offset);
    }
  }
}
