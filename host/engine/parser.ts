// The condition parser: condition text -> Expr (ast.ts), or a ParseError with libsinsp's exact
// message and the offset where libsinsp's cursor stood when it gave up. A hand-written
// recursive-descent parser that follows libsinsp `filter/parser.cpp` step by step, quirks
// included (reference/falco-language.md A.1-A.4, A.6): keywords are matched as prefixes, blanks
// are exactly ` \t\b\r\n`, the lexer is driven by the grammar position (lexer.ts), and the
// recursion carries the same depth guard (`exceeded max depth limit of N`).
//
// Grammar (EBNF; `^` = no blank allowed before the next item, blanks allowed elsewhere):
//   Condition   ::= OrExpr                                          (whole input, non-empty)
//   OrExpr      ::= AndExpr ( 'or' ( Blank AndExpr | ^'(' ParenRest ) )*
//   AndExpr     ::= NotExpr ( 'and' ( Blank NotExpr | ^'(' ParenRest ) )*
//   NotExpr     ::= ( 'not' Space+ )* ( 'not(' ParenRest | Check )    -- an even count cancels
//   ParenRest   ::= OrExpr ')'
//   Check       ::= '(' ParenRest | Field CheckOp | Transformer CheckOp | Identifier
//   Field       ::= FieldName ( ^'[' ^FieldArg ^']' )?
//   FieldArg    ::= QuotedStr | FieldArgBareStr
//   Transformer ::= TrName ^'(' TrArg ( ',' TrArg )* ')' ( ^'[' FieldArg ']' )?
//   TrArg       ::= HexNumber | Number | QuotedStr | '(' TrList | Transformer | Field
//   TrList      ::= ( TrListArg ( ',' TrListArg )* )? ')'
//   TrListArg   ::= Field | Transformer | QuotedStr | HexNumber | Number
//   CheckOp     ::= 'exists'
//                 | NumOp ( TrOrVal | HexNumber | Number )
//                 | StrOp Modifier Blank ( '(' ListBody | Identifier )    -- see lexModifier
//                 | StrOp ( TrOrVal | QuotedStr | BareStr )
//                 | ListOp ( '(' ListBody | TrOrVal | Identifier )      -- Identifier = 1 value
//   TrOrVal     ::= 'val(' Field ')' | Transformer
//   ListBody    ::= ( Value ( ',' Value )* )? ')'                      Value ::= QuotedStr | BareStr
//   NumOp       ::= '<=' | '<' | '>=' | '>'
//   StrOp       ::= '==' | '=' | '!=' | ( 'glob' | 'iglob' | 'contains' | 'icontains' | 'bcontains'
//                 | 'startswith' | 'bstartswith' | 'endswith' | 'regex' ) Blank
//   ListOp      ::= 'intersects' | 'in' | 'pmatch'
//   Modifier    ::= 'oneof' | 'anyof' | 'allof'
//   TrName      ::= 'tolower' | 'toupper' | 'b64' | 'basename' | 'len' | 'join' | 'concat' | 'getopt'
// Tokens (lexer.ts): Blank = [ \t\b\r\n]+, Space = [[:space:]], Identifier, FieldName,
// FieldArgBareStr, HexNumber, Number, BareStr, QuotedStr (escaping.ts). The lexing steps and
// the depth guard live in cursor.ts.
import type { BinaryCheckNode, BinaryOp, Expr, FieldNode, FieldValueNode, ListNode, Modifier, Operand, Rhs, TransformerArg, TransformerListNode, TransformerName, TransformerNode, ValueNode } from './ast.js';
import { Cursor, Failure, TRANSFORMERS } from './cursor.js';
import { scanFieldName, scanHexNumber, scanIdentifier, scanNotBlank, scanNumber } from './lexer.js';

/** A parse failure: libsinsp's message and the 0-based offset of its cursor at that moment. */
interface ParseError {
  message: string;
  offset: number;
}

/** The parse outcome; the parser never throws. */
export type ParseResult = { ok: true; expr: Expr } | { ok: false; error: ParseError };

/** Limits: `maxDepth` is libsinsp's recursion guard (Falco uses 1000 for rule conditions). */
export interface ParseOptions {
  maxDepth?: number;
  maxLength?: number;
}

/** Default recursion limit: Falco's `parse_condition` sets 1000 (rule_loader_compiler.cpp). */
export const DEFAULT_MAX_DEPTH = 1000;
/** Default input limit: 1 MiB of UTF-16 code units. */
const DEFAULT_MAX_LENGTH = 1024 * 1024;
/** Larger depth limits are clamped to this, which keeps the recursion inside the JS stack. */
export const HARD_MAX_DEPTH = 2000;

const NUM_OPS: ReadonlyArray<readonly [string, boolean]> = [
  ['<=', false],
  ['<', false],
  ['>=', false],
  ['>', false],
];
// A `true` marks operators that need a blank after them (libsinsp writes them as "glob ").
const STR_OPS: ReadonlyArray<readonly [string, boolean]> = [
  ['==', false],
  ['=', false],
  ['!=', false],
  ['glob', true],
  ['iglob', true],
  ['contains', true],
  ['icontains', true],
  ['bcontains', true],
  ['startswith', true],
  ['bstartswith', true],
  ['endswith', true],
  ['regex', true],
];
const LIST_OPS: ReadonlyArray<readonly [string, boolean]> = [
  ['intersects', false],
  ['in', false],
  ['pmatch', false],
];

const quoteList = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(', ');
const TRANSFORMER_LIST = quoteList(['val', ...TRANSFORMERS]);
const OPERATOR_LIST = quoteList(['exists', ...[...NUM_OPS, ...STR_OPS, ...LIST_OPS].map(([op]) => op)]);

/** Parses one condition. Never throws: failures come back as `{ ok: false, error }`. */
export function parseCondition(text: string, options: ParseOptions = {}): ParseResult {
  const maxLength = numberOr(options.maxLength, DEFAULT_MAX_LENGTH);
  if (text.length === 0) return { ok: false, error: { message: 'filter input string is empty', offset: 0 } };
  if (text.length > maxLength) {
    return { ok: false, error: { message: `filter input string exceeds the maximum length of ${maxLength}`, offset: maxLength } };
  }
  const maxDepth = Math.min(Math.max(Math.floor(numberOr(options.maxDepth, DEFAULT_MAX_DEPTH)), 0), HARD_MAX_DEPTH);
  const parser = new Parser(text, maxDepth);
  try {
    return { ok: true, expr: parser.parse() };
  } catch (e) {
    if (e instanceof Failure) return { ok: false, error: { message: e.message, offset: e.offset } };
    // Safety net for a JS stack smaller than the one HARD_MAX_DEPTH was sized for.
    if (e instanceof RangeError) return { ok: false, error: { message: 'condition is nested too deeply', offset: parser.offset } };
    throw e;
  }
}

/** `v` unless it is missing or NaN. */
function numberOr(v: number | undefined, fallback: number): number {
  return v === undefined || Number.isNaN(v) ? fallback : v;
}

class Parser extends Cursor {
  parse(): Expr {
    const expr = this.parseOr();
    // Reachable only when a depth failure inside a list head was swallowed (see parseListBody).
    if (this.depth > 0) this.fail('parser fatal error: recursion is unbalanced');
    if (this.pos !== this.s.length) this.fail(`unexpected token after '${this.last}', expecting 'or', 'and'`);
    return expr;
  }

  // ---- productions -------------------------------------------------------------------------

  private parseOr(): Expr {
    return this.parseChain('or', () => this.parseAnd());
  }

  private parseAnd(): Expr {
    return this.parseChain('and', () => this.parseNot());
  }

  /** OrExpr / AndExpr: n-ary; after the keyword a blank or `(` must follow. */
  private parseChain(kw: 'or' | 'and', operand: () => Expr): Expr {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      const children = [operand()];
      this.lexBlank();
      while (this.lexStr(kw)) {
        if (this.lexBlank()) children.push(operand());
        else if (this.lexStr('(')) children.push(this.parseParenRest());
        else this.fail(`expected blank or '(' after '${kw}'`);
        this.lexBlank();
      }
      if (children.length === 1) return children[0]!;
      return { kind: kw, children, span: { start, end: this.lastEnd } };
    } finally {
      this.depth--;
    }
  }

  private parseNot(): Expr {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      let negate = false;
      while (this.lexWith(scanNotBlank)) negate = !negate;
      let child: Expr;
      if (this.lexStr('not(')) {
        negate = !negate;
        child = this.parseParenRest();
      } else {
        child = this.parseCheck();
      }
      return negate ? { kind: 'not', child, span: { start, end: this.lastEnd } } : child;
    } finally {
      this.depth--;
    }
  }

  /** The rest of a parenthesised expression, after its `(`. No node of its own. */
  private parseParenRest(): Expr {
    this.enter();
    try {
      this.lexBlank();
      const child = this.parseOr();
      this.lexBlank();
      if (!this.lexStr(')')) this.fail("expected a ')' token");
      return child;
    } finally {
      this.depth--;
    }
  }

  private parseCheck(): Expr {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      if (this.lexStr('(')) return this.parseParenRest();
      if (this.lexWith(scanFieldName)) return this.parseCheckOp(this.parseField(this.last, start), start);
      const tr = this.lexTransformerName();
      if (tr !== null) {
        this.lexBlank();
        return this.parseCheckOp(this.parseTransformer(tr, start), start);
      }
      if (this.lexWith(scanIdentifier)) return { kind: 'identifier', name: this.last, span: { start, end: this.pos } };
      return this.fail("expected a '(' token, a field check, or an identifier");
    } finally {
      this.depth--;
    }
  }

  /** Field, after its name: an optional `[arg]` with no blank before `[`. */
  private parseField(name: string, start: number): FieldNode {
    this.enter();
    try {
      const arg = this.lexOptionalArg();
      return arg === undefined ? { kind: 'field', name, span: { start, end: this.lastEnd } } : { kind: 'field', name, arg, span: { start, end: this.lastEnd } };
    } finally {
      this.depth--;
    }
  }

  /** Transformer, after `name(`: its arguments, `)`, and an optional `[K]` (getopt). */
  private parseTransformer(name: TransformerName, start: number): TransformerNode {
    this.enter();
    try {
      this.lexBlank();
      const args: TransformerArg[] = [];
      do {
        args.push(this.parseTransformerArg());
        this.lexBlank();
      } while (this.lexStr(','));
      this.lexBlank();
      if (!this.lexStr(')')) this.fail("expected a ')' token closing the transformer");
      const arg = this.lexOptionalArg();
      const node: TransformerNode = { kind: 'transformer', name, args, span: { start, end: this.lastEnd } };
      if (arg !== undefined) node.arg = arg;
      return node;
    } finally {
      this.depth--;
    }
  }

  private parseTransformerArg(): TransformerArg {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      if (this.lexWith(scanHexNumber) || this.lexWith(scanNumber)) return this.value(start, false);
      const quoted = this.lexQuoted();
      if (quoted !== null) return quoted;
      if (this.lexStr('(')) return this.parseTrList(start);
      const tr = this.lexTransformerName();
      if (tr !== null) return this.parseTransformer(tr, start);
      if (this.lexWith(scanFieldName)) return this.parseField(this.last, start);
      return this.fail('expected field transformer argument: field, transformer, quoted string, number, or transformer list');
    } finally {
      this.depth--;
    }
  }

  /** TrList, after its `(` (libsinsp guards neither this nor TrListArg). */
  private parseTrList(start: number): TransformerListNode {
    const items: TransformerListNode['items'] = [];
    this.lexBlank();
    if (!this.lexStr(')')) {
      items.push(this.parseTrListArg());
      this.lexBlank();
      while (this.lexStr(',')) {
        this.lexBlank();
        items.push(this.parseTrListArg());
        this.lexBlank();
      }
      if (!this.lexStr(')')) this.fail("expected ')'");
    }
    return { kind: 'tr-list', items, span: { start, end: this.pos } };
  }

  private parseTrListArg(): TransformerListNode['items'][number] {
    const start = this.pos;
    if (this.lexWith(scanFieldName)) return this.parseField(this.last, start);
    const tr = this.lexTransformerName();
    if (tr !== null) {
      this.lexBlank();
      return this.parseTransformer(tr, start);
    }
    const quoted = this.lexQuoted();
    if (quoted !== null) return quoted;
    if (this.lexWith(scanHexNumber) || this.lexWith(scanNumber)) return this.value(start, false);
    return this.fail('expected transformer list argument: field, transformer, quoted string, or number');
  }

  /** CheckOp: the operator and right-hand side after a field or transformer. */
  private parseCheckOp(left: Operand, start: number): Expr {
    this.enter();
    try {
      this.lexBlank();
      if (this.lexStr('exists')) return { kind: 'unary', left, op: 'exists', span: { start, end: this.pos } };
      this.lexBlank();
      let op: string | null;
      let right: Rhs;
      let modifier: Modifier | null = null;
      if ((op = this.lexOperator(NUM_OPS)) !== null) {
        right = this.parseNumRhs();
      } else if ((op = this.lexOperator(STR_OPS)) !== null) {
        modifier = this.lexModifier();
        right = modifier !== null ? this.parseModifierRhs() : this.parseStrRhs();
      } else if ((op = this.lexOperator(LIST_OPS)) !== null) {
        right = this.parseListRhs();
      } else {
        return this.fail(`expected a valid check operator: one of ${OPERATOR_LIST}`);
      }
      const node: BinaryCheckNode = { kind: 'binary', left, op: op as BinaryOp, right, span: { start, end: this.lastEnd } };
      if (modifier !== null) node.modifier = modifier;
      return node;
    } finally {
      this.depth--;
    }
  }

  private parseNumRhs(): Rhs {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      const tv = this.parseTransformerOrVal();
      if (tv !== null) return tv;
      if (this.lexWith(scanHexNumber) || this.lexWith(scanNumber)) return this.value(start, false);
      return this.fail(`expected a number value or a field with a valid transformer: ${TRANSFORMER_LIST}`);
    } finally {
      this.depth--;
    }
  }

  private parseStrRhs(): Rhs {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      const tv = this.parseTransformerOrVal();
      if (tv !== null) return tv;
      const v = this.lexStrValue(start);
      if (v !== null) return v;
      return this.fail(`expected a string value or a field with a valid transformer: ${TRANSFORMER_LIST}`);
    } finally {
      this.depth--;
    }
  }

  /** A list element (libsinsp's parse_str_value_or_transformer with no_transformer set). */
  private parseListValue(): ValueNode {
    this.enter();
    try {
      this.lexBlank();
      const v = this.lexStrValue(this.pos);
      if (v !== null) return v;
      return this.fail('expected a string value');
    } finally {
      this.depth--;
    }
  }

  private parseListRhs(): Rhs {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      if (this.lexStr('(')) return this.parseListBody(start);
      const tv = this.parseTransformerOrVal();
      if (tv !== null) return tv;
      // A bare identifier (an unsubstituted list name) is a one-element value.
      if (this.lexWith(scanIdentifier)) return this.value(start, false);
      return this.fail(`expected a list, an identifier, or a field with a valid transformer: ${TRANSFORMER_LIST}`);
    } finally {
      this.depth--;
    }
  }

  /** The list or list name after a comparison modifier (libs 0.25, reference A.6). */
  private parseModifierRhs(): Rhs {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      if (this.lexStr('(')) return this.parseListBody(start);
      if (this.lexWith(scanIdentifier)) return this.value(start, false);
      return this.fail('expected a list or an identifier');
    } finally {
      this.depth--;
    }
  }

  /** ListBody, after its `(`. */
  private parseListBody(start: number): ListNode {
    const values: ValueNode[] = [];
    this.lexBlank();
    let head: ValueNode | null = null;
    try {
      head = this.parseListValue();
    } catch (e) {
      // libsinsp catches any failure of the first element and takes the list as empty, then
      // requires ')' wherever the cursor is: `('\q')` is an empty list.
      if (!(e instanceof Failure)) throw e;
    }
    if (head !== null) {
      values.push(head);
      this.lexBlank();
      while (this.lexStr(',')) {
        values.push(this.parseListValue());
        this.lexBlank();
      }
    }
    if (!this.lexStr(')')) this.fail("expected a ')' token");
    return { kind: 'list', values, span: { start, end: this.pos } };
  }

  /** TrOrVal, or null when neither `val(` nor a transformer name starts here. */
  private parseTransformerOrVal(): FieldValueNode | TransformerNode | null {
    this.enter();
    try {
      this.lexBlank();
      const start = this.pos;
      if (this.lexStr('val(')) {
        this.lexBlank();
        const fieldStart = this.pos;
        if (!this.lexWith(scanFieldName)) this.fail("expected a field within 'val' transformer");
        const field = this.parseField(this.last, fieldStart);
        this.lexBlank();
        if (!this.lexStr(')')) this.fail("expected a ')' token closing the transformer");
        return { kind: 'val', field, span: { start, end: this.pos } };
      }
      const tr = this.lexTransformerName();
      if (tr === null) return null;
      this.lexBlank();
      return this.parseTransformer(tr, start);
    } finally {
      this.depth--;
    }
  }
}
