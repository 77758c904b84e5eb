// The lexing cursor under the condition parser: position, libsinsp's "last token", the depth
// guard, and one method per libsinsp `lex_*` helper. Consumes the condition text; produces tokens
// (and value nodes for literals) on request of the grammar in parser.ts, or a Failure.
import type { Modifier, TransformerName, ValueNode } from './ast.js';
import { unescapeQuoted } from './escaping.js';
import { isAlpha, isBlank, scanBareStr, scanFieldArgBareStr, scanQuoted, skipBlanks } from './lexer.js';

/** Transformer names, in libsinsp's order (they are lexed as `name(`). */
export const TRANSFORMERS: readonly TransformerName[] = ['tolower', 'toupper', 'b64', 'basename', 'len', 'join', 'concat', 'getopt'];
/** Comparison modifiers (libs 0.25). */
export const MODIFIERS: readonly Modifier[] = ['oneof', 'anyof', 'allof'];

/** A parse failure at an offset; thrown inside the parser only, caught at its entry point. */
export class Failure {
  constructor(
    readonly message: string,
    readonly offset: number,
  ) {}
}

/** Cursor state and lexing steps shared by the grammar productions. */
export class Cursor {
  protected pos = 0;
  /** libsinsp's m_last_token: the last lexed token (decoded, for quoted strings). */
  protected last = '';
  /** End offset of the last consumed token (blanks excluded), for node spans. */
  protected lastEnd = 0;
  protected depth = 0;

  constructor(
    protected readonly s: string,
    protected readonly maxDepth: number,
  ) {}

  /** The cursor offset. */
  get offset(): number {
    return this.pos;
  }

  /** `[` FieldArg `]` right at the cursor, or undefined when there is no `[`. */
  protected lexOptionalArg(): string | undefined {
    if (!this.lexStr('[')) return undefined;
    let arg: string;
    const quoted = this.lexQuoted();
    if (quoted !== null) arg = quoted.value;
    else if (this.lexWith(scanFieldArgBareStr)) arg = this.last;
    else return this.fail('expected a valid field argument: a quoted string or a bare string');
    if (!this.lexStr(']')) this.fail("expected a ']' token");
    return arg;
  }

  /** QuotedStr or BareStr at the cursor, as a value node. */
  protected lexStrValue(start: number): ValueNode | null {
    const quoted = this.lexQuoted();
    if (quoted !== null) return quoted;
    if (this.lexWith(scanBareStr)) return this.value(start, false);
    return null;
  }

  /**
   * A comparison modifier. libs 0.25 treats `oneof|anyof|allof` after a string operator as a
   * modifier only when a blank precedes and follows it and a list or list name comes next;
   * before `and`/`or`/`not`, `)` or the end it is the plain value `oneof` (reference A.6).
   */
  protected lexModifier(): Modifier | null {
    const s = this.s;
    const at = skipBlanks(s, this.pos);
    if (at === 0 || !isBlank(s.charCodeAt(at - 1))) return null;
    for (const m of MODIFIERS) {
      if (!s.startsWith(m, at)) continue;
      const next = skipBlanks(s, at + m.length);
      if (next === at + m.length) return null;
      const c = s.charCodeAt(next);
      if (c !== 40 /* ( */ && !(isAlpha(c) && !this.isKeywordAt(next))) return null;
      this.pos = at + m.length;
      this.last = m;
      this.lastEnd = this.pos;
      return m;
    }
    return null;
  }

  /** `and`/`or`/`not` as a keyword at `i` (followed by a blank or `(`). */
  protected isKeywordAt(i: number): boolean {
    for (const kw of ['and', 'or', 'not']) {
      if (!this.s.startsWith(kw, i)) continue;
      const c = this.s.charCodeAt(i + kw.length);
      if (c === 40 || isBlank(c) || (kw === 'not' && c >= 9 && c <= 13)) return true;
    }
    return false;
  }

  /** libsinsp lex_helper_operator_list: a prefix match; word operators then need a blank. */
  protected lexOperator(ops: ReadonlyArray<readonly [string, boolean]>): string | null {
    for (const [op, needsBlank] of ops) {
      if (!needsBlank) {
        if (this.lexStr(op)) return op;
        continue;
      }
      // The operator stays consumed even when the blank is missing (`containsin (a)` is `in`).
      if (this.lexStr(op)) return this.lexBlank() ? op : null;
    }
    return null;
  }

  protected lexTransformerName(): TransformerName | null {
    for (const name of TRANSFORMERS) {
      if (this.s.startsWith(name, this.pos) && this.s.charCodeAt(this.pos + name.length) === 40) {
        this.pos += name.length + 1;
        this.last = name;
        this.lastEnd = this.pos;
        return name;
      }
    }
    return null;
  }

  /** A quoted string at the cursor, decoded; a bad escape fails after the closing quote. */
  protected lexQuoted(): ValueNode | null {
    const start = this.pos;
    const end = scanQuoted(this.s, start);
    if (end < 0) return null;
    this.pos = end;
    this.lastEnd = end;
    const r = unescapeQuoted(this.s.slice(start, end));
    if (!r.ok) return this.fail(r.message);
    this.last = r.value;
    return { kind: 'value', value: r.value, quoted: true, span: { start, end } };
  }

  protected lexWith(scan: (s: string, i: number) => number): boolean {
    const end = scan(this.s, this.pos);
    if (end < 0) return false;
    this.last = this.s.slice(this.pos, end);
    this.pos = end;
    this.lastEnd = end;
    return true;
  }

  protected lexStr(lit: string): boolean {
    if (!this.s.startsWith(lit, this.pos)) return false;
    this.pos += lit.length;
    this.last = lit;
    this.lastEnd = this.pos;
    return true;
  }

  /** Skips blanks; true when there was at least one. Leaves `last` alone, as libsinsp does. */
  protected lexBlank(): boolean {
    const end = skipBlanks(this.s, this.pos);
    const found = end > this.pos;
    this.pos = end;
    return found;
  }

  /** The last lexed token as an unquoted value node starting at `start`. */
  protected value(start: number, quoted: boolean): ValueNode {
    return { kind: 'value', value: this.last, quoted, span: { start, end: this.pos } };
  }

  /** libsinsp's depth_guard: count on entry, fail at the limit (the failed entry stays counted). */
  protected enter(): void {
    if (++this.depth >= this.maxDepth) this.fail(`exceeded max depth limit of ${this.maxDepth}`);
  }

  protected fail(message: string): never {
    throw new Failure(message, this.pos);
  }
}
