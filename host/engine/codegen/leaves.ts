// Leaves of a checked condition (cmp, exists, cmpfield) to AssemblyScript functions with the
// reference interpreter's semantics (host/engine/interpreter.ts): a missing value makes every
// comparison false; list fields `in` = all, `intersects` = any; ancestor walks and endpoint
// lists test each value (`!=` on endpoints needs all to differ). Each leaf becomes an @inline
// function `Ln(e): bool`; string `=`/`in`/`contains` go through the operand's memoised work.
import type { Modifier } from '../ast.js';
import type { CheckedExpr, CmpOp, Literal } from '../ir.js';
import { EVT_TYPES, evtTypeId } from '../../abi/module.js';
import { Interpreter } from '../interpreter.js';
import type { SlotTable, ValueKind } from './access.js';
import { eqAt, u64Literal, utf8Bytes } from './bytes.js';
import { compileRegex } from './regex.js';
import { CodegenLimit, StrOperand } from './strings.js';
import { operandValue, threadBits, type Many, type Scalar, type Statics } from './values.js';
import type { TypeClass } from '../fields.js';
import { asciiLower } from '../operators.js';

type Cmp = Extract<CheckedExpr, { kind: 'cmp' }>;
type CmpField = Extract<CheckedExpr, { kind: 'cmpfield' }>;

/** What the leaf generators of one module share: declarations, string operands, counters. */
export class ModuleParts {
  readonly decls: string[] = [];
  readonly operands: StrOperand[] = [];
  readonly byKey = new Map<string, StrOperand>();
  readonly leafByBody = new Map<string, string>();
  leaves = 0;
}

/** Operators whose test on a string is false whenever every memoised word is 0 (a missing value). */
const POSITIVE = new Set<CmpOp>(['=', 'in', 'intersects', 'contains', 'icontains', 'bcontains']);

/** Generates the leaf functions of one source's rules. */
export class LeafGen {
  /**
   * The evt.type ids the rule being generated is called for (its groups), or undefined when
   * unknown: evt.type tests are decided from it at generation time where they can be.
   */
  callTypes: ReadonlySet<number> | undefined;

  constructor(
    private readonly source: 'syscall' | 'k8s_audit',
    private readonly table: SlotTable,
    private readonly statics: Statics,
    private readonly parts: ModuleParts,
  ) {}

  private strOperand(key: string, expr: string | undefined): StrOperand {
    const k = `${this.source}|${key}`;
    let op = this.parts.byKey.get(k);
    if (!op) {
      op = new StrOperand(this.parts.operands.length, expr);
      this.parts.operands.push(op);
      this.parts.byKey.set(k, op);
    }
    return op;
  }

  private fn(body: string[], comment: string): string {
    // identical leaves (macros expanded into many rules) share one function
    const key = body.join('\n');
    const known = this.parts.leafByBody.get(key);
    if (known) return known;
    const name = `L${this.parts.leaves++}`;
    this.parts.leafByBody.set(key, `${name}(e)`);
    this.parts.decls.push(`// ${comment.replace(/\s+/g, ' ').slice(0, 160)}`, `@inline function ${name}(e: usize): bool {`, ...body.map((l) => `  ${l}`), `}`);
    return `${name}(e)`;
  }

  /** Decides operators on evt.type names at generation time. */
  private readonly oracle = new Interpreter();

  /** An `exists` leaf. */
  exists(e: Extract<CheckedExpr, { kind: 'exists' }>): string {
    const v = operandValue(e.operand, this.source, this.table, this.statics);
    if (v.k === 'missing') return 'false';
    if (v.k === 'type') return 'true';
    if (v.k === 'scalar') {
      if (v.v.kind === 'str') return this.fn([`return ${v.v.expr} != MISSING;`], 'exists');
      return this.fn([...v.v.pre, `return ${v.v.present};`], 'exists');
    }
    if (v.v.k === 'computed') return this.fn([`return ${v.v.expr} != MISSING;`], 'exists');
    if (v.v.k === 'list') {
      const i = v.v.access.slot.index;
      return this.fn([`return (load<u64>(e + ${8 + 8 * (i >> 6)}) & ${u64Literal(1n << BigInt(i & 63))}) != 0;`], 'exists');
    }
    return this.many(v.v, () => 'true', 'any', 'exists');
  }

  /**
   * The operand key of a leaf that tests a scalar string against a constant set (`=` or `in`,
   * no modifier), else undefined: `or`ed leaves with one key are one set test (one class bit).
   */
  setKey(e: CheckedExpr): string | undefined {
    if (e.kind !== 'cmp' || e.modifier || (e.op !== '=' && e.op !== 'in')) return undefined;
    const v = operandValue(e.left, this.source, this.table, this.statics);
    if (v.k !== 'scalar' || v.v.kind !== 'str' || (v.v.cls !== 'string' && v.v.cls !== 'bytes')) return undefined;
    return `${v.v.cls}|${v.v.expr}`;
  }

  /** A comparison with constants. */
  cmp(e: Cmp, text: string): string {
    const v = operandValue(e.left, this.source, this.table, this.statics);
    if (v.k === 'missing') return 'false';
    if (v.k === 'type') return this.typeTest(e);
    if (v.k === 'scalar') {
      const s = v.v;
      if (s.kind === 'str') {
        const op = this.strOperand(`s:${s.expr}`, s.expr);
        const test = this.one(e.op, e.modifier, e.values, 'str', s.cls, op, true);
        // Memoised class and needle words are 0 on a missing value, so a test that only ORs
        // their bits needs no presence check; the range (a, l) only when the test reads it.
        const usesRange = /\b[al]\b/.test(test);
        if (!usesRange && !e.modifier && POSITIVE.has(e.op)) return this.fn([`return ${test};`], text);
        const range = usesRange ? [`const a = usize(u32(x));`, `const l = u32(x >>> 32);`] : [];
        return this.fn([`const x = S${op.id}v(e);`, `if (x == MISSING) return false;`, ...range, `return ${test};`], text);
      }
      const test = this.one(e.op, e.modifier, e.values, s.kind, s.cls, undefined, false);
      return this.fn([...s.pre, `if (!(${s.present})) return false;`, `const x: u64 = ${s.bits};`, `return ${test};`], text);
    }
    const m = v.v;
    const op = m.kind === 'str' ? this.strOperand(m.k === 'list' ? `l:${m.access.slot.index}` : m.k === 'walk' ? `w:${m.field.base}` : `c:${m.expr}`, undefined) : undefined;
    if (m.k === 'walk' || (m.k === 'list' && m.access.endpoint)) {
      const mode = m.k === 'list' && e.op === '!=' ? 'all' : 'any';
      return this.many(m, () => this.one(e.op, e.modifier, e.values, m.kind, m.cls, op, false), mode, text);
    }
    if (e.op !== 'in' && e.op !== 'intersects') return 'false';
    return this.many(m, () => this.one('in', undefined, e.values, m.kind, m.cls, op, false), e.op === 'in' ? 'all' : 'any', text);
  }

  /** A loop over list elements or ancestors; `test` is in terms of x (and a, l for strings). */
  private many(m: Many, test: () => string, mode: 'any' | 'all', text: string): string {
    const t = test();
    const strLocals = m.kind === 'str' ? ['const a = usize(u32(x));', 'const l = u32(x >>> 32);'] : [];
    const hit = mode === 'any' ? [`if (${t}) return true;`] : [`if (!(${t})) return false;`];
    if (m.k === 'walk') {
      return this.fn(
        [
          'let t = ancestor(e, 1);',
          'let d = 1;',
          'while (t != 0) {',
          `  if (has(t, ${m.field.bit})) {`,
          `    const x: u64 = ${threadBits('t', m.field)};`,
          ...[...strLocals, ...hit].map((l) => `    ${l}`),
          '  }',
          '  t = parentOf(t, d++);',
          '}',
          `return ${mode === 'all'};`,
        ],
        text,
      );
    }
    const s = m.k === 'list' ? m.access.slot : undefined;
    const head = s
      ? [`if ((load<u64>(e + ${8 + 8 * (s.index >> 6)}) & 0x${(1n << BigInt(s.index & 63)).toString(16)}) == 0) return false;`, `const r = load<u64>(e + ${s.offset});`]
      : [`const r = ${(m as Extract<Many, { k: 'computed' }>).expr};`, 'if (r == MISSING) return false;'];
    return this.fn(
      [
        ...head,
        'const base = usize(u32(r));',
        'const n = u32(r >>> 32);',
        'for (let j: u32 = 0; j < n; j++) {',
        '  const x = load<u64>(base + (<usize>j << 3));',
        ...[...strLocals, ...hit].map((l) => `  ${l}`),
        '}',
        `return ${mode === 'all'};`,
      ],
      text,
    );
  }

  /** evt.type compared with names: a test of the record's type id. */
  private typeTest(e: Cmp): string {
    const T = 'load<u32>(e)';
    // other operators (and modifiers): the event type names they accept, found with the
    // reference interpreter at generation time (the names are a fixed set), tested as `in`
    const named = e.modifier !== undefined || !['=', 'in', 'intersects', '!='].includes(e.op);
    const ids = named ? EVT_TYPES.filter((name) => this.oracle.evaluate(e, { field: () => name })).map(evtTypeId) : e.values.map((v) => evtTypeId(v.text));
    const set = new Set(ids);
    const call = this.callTypes ? [...this.callTypes] : undefined;
    // the rule only runs for events of its own types: a test true (or false) for all of them is decided here
    const decided = (inSet: boolean): string | undefined => {
      if (!call) return undefined;
      if (call.every((t) => set.has(t) === inSet)) return 'true';
      if (call.every((t) => set.has(t) !== inSet)) return 'false';
      return undefined;
    };
    const anyOf = ids.length === 0 ? 'false' : (decided(true) ?? `(${[...set].map((id) => `${T} == ${id}`).join(' || ')})`);
    if (named || e.op !== '!=') return anyOf;
    const id = ids[0] ?? 0;
    if (call?.every((t) => t !== id)) return 'true';
    if (call?.every((t) => t === id)) return 'false';
    return `${T} != ${id}`;
  }

  /** The interpreter's `one(op, modifier, v, values)` as an expression over x. */
  private one(op: CmpOp, modifier: Modifier | undefined, values: Literal[], kind: ValueKind, cls: TypeClass, s: StrOperand | undefined, memo: boolean): string {
    if (modifier) {
      if (values.length === 0) return 'false';
      const tests = values.map((l) => this.scalar(op, l, kind, cls, s, memo, [l]));
      if (modifier === 'anyof') return `(${tests.join(' || ')})`;
      if (modifier === 'allof') return `(${tests.join(' && ')})`;
      return `((${tests.map((t) => `i32(${t})`).join(' + ')}) == 1)`;
    }
    if (op === 'in' || op === 'intersects') {
      if (values.length === 0) return 'false';
      if (kind === 'str' && (cls === 'string' || cls === 'bytes')) return this.scalar('=', values[0]!, kind, cls, s, memo, values);
      return `(${values.map((l) => this.scalar('=', l, kind, cls, s, memo, [l])).join(' || ')})`;
    }
    if (op === 'pmatch') {
      if (kind !== 'str' || cls !== 'string') throw new CodegenLimit('pmatch on a non-string field is not supported by the compiled evaluator');
      return `pmatch(${this.statics.bytes(pmatchTable(values.map((l) => l.text)))}, a, i32(l))`;
    }
    if (values.length === 0) return 'false';
    return this.scalar(op, values[0]!, kind, cls, s, memo, [values[0]!]);
  }

  /** One scalar comparison `x op lit` (set = the constants of an `=`/`in` class bit). */
  private scalar(op: CmpOp, lit: Literal, kind: ValueKind, cls: TypeClass, s: StrOperand | undefined, memo: boolean, set: Literal[]): string {
    if (kind === 'str') {
      if (cls === 'ipaddr' || cls === 'ipnet') return ipTest(op, lit);
      return this.strTest(op, lit, cls, s!, memo, set);
    }
    if (kind === 'bool') {
      if (lit.bool === undefined) return 'false';
      return op === '=' ? `(x != 0) == ${lit.bool}` : op === '!=' ? `(x != 0) != ${lit.bool}` : 'false';
    }
    return numTest(op, lit, kind);
  }

  private strTest(op: CmpOp, lit: Literal, cls: TypeClass, s: StrOperand, memo: boolean, set: Literal[]): string {
    const bytesOf = (l: Literal) => (cls === 'bytes' ? (l.bytes ?? utf8Bytes(l.text)) : utf8Bytes(l.text));
    const raw = lit.bytes ?? new Uint8Array();
    const classBit = (lits: Literal[]) => {
      const bit = s.setBit(lits.map(bytesOf));
      const w = bit >> 6;
      const word = memo ? s.classMemo(w) : `${s.classFn(w)}(a, l)`;
      return `(${word} & ${u64Literal(1n << BigInt(bit & 63))}) != 0`;
    };
    const needle = (b: Uint8Array, folded: boolean) => {
      const i = s.needleIndex(b, folded);
      const word = memo ? s.needleMemo(folded, i >> 6) : `${s.needleFn(folded, i >> 6)}(a, l)`;
      return `(${word} & ${u64Literal(1n << BigInt(i & 63))}) != 0`;
    };
    const starts = (b: Uint8Array) => `(l >= ${b.length} && ${eqAt('a', b)})`;
    const ends = (b: Uint8Array) => `(l >= ${b.length} && ${eqAt(`(a + l - ${b.length})`, b)})`;
    const order = (cmp: string) => {
      const b = bytesOf(lit);
      return `cmpBytes(a, l, ${this.statics.bytes(b)}, ${b.length}) ${cmp} 0`;
    };
    if (cls === 'bytes') {
      switch (op) {
        case '=':
          return classBit(set);
        case '!=':
          return `!(${classBit(set)})`;
        case 'contains':
        case 'bcontains':
          return needle(bytesOf(lit), false);
        case 'startswith':
        case 'bstartswith':
          return starts(bytesOf(lit));
        case 'endswith':
          return ends(bytesOf(lit));
        default:
          return 'false';
      }
    }
    switch (op) {
      case '=':
        return classBit(set);
      case '!=':
        return `!(${classBit(set)})`;
      case '<':
        return order('<');
      case '<=':
        return order('<=');
      case '>':
        return order('>');
      case '>=':
        return order('>=');
      case 'contains':
        return needle(utf8Bytes(lit.text), false);
      case 'icontains':
        return needle(utf8Bytes(asciiLower(lit.text)), true);
      case 'startswith':
        return starts(utf8Bytes(lit.text));
      case 'endswith':
        return ends(utf8Bytes(lit.text));
      case 'bcontains':
        return needle(raw, false);
      case 'bstartswith':
        return starts(raw);
      case 'glob':
      case 'iglob': {
        const p = utf8Bytes(op === 'iglob' ? asciiLower(lit.text) : lit.text);
        return `globMatch(${this.statics.bytes(p)}, ${p.length}, a, i32(l), ${op === 'iglob'})`;
      }
      case 'regex': {
        const re = compileRegex(lit.text);
        // invalid UTF-8 in the value is matched as U+FFFD (assembly/dfa.ts dfaRegex)
        if (re.kind === 'dfa') return `dfaRegex(${this.statics.bytes(re.dfa.next)}, ${this.statics.bytes(re.dfa.accept)}, a, l)`;
        return `nfaRegex(${this.statics.bytes(re.nfa.table)}, ${re.nfa.n}, ${re.nfa.words}, ${re.nfa.flags}, a, l)`;
      }
      default:
        return 'false';
    }
  }

  /** A comparison between two fields (or transformers); the interpreter's cmpfield. */
  cmpField(e: CmpField, text: string): string {
    const value = (o: CmpField['left']) => {
      const v = operandValue(o, this.source, this.table, this.statics);
      // evt.type as a value is its name
      return v.k === 'type' ? ({ k: 'scalar', v: { kind: 'str', cls: 'string', expr: this.statics.evtName(), pre: [], present: '', bits: '' } } as const) : v;
    };
    const l = value(e.left);
    const r = value(e.right);
    if (l.k === 'missing' || r.k === 'missing') return 'false';
    if (l.k === 'many' && r.k === 'many') {
      // list against list: `in` = every left value among the right ones, `intersects` = some
      if (e.op !== 'in' && e.op !== 'intersects') return 'false';
      const ref = (m: Many, o: CmpField['left']) =>
        m.k === 'computed'
          ? m.expr
          : m.k === 'list' && !m.access.endpoint && m.kind === 'str' && o.kind === 'field'
            ? `sref(e, ${8 + 8 * (m.access.slot.index >> 6)}, ${u64Literal(1n << BigInt(m.access.slot.index & 63))}, ${m.access.slot.offset})`
            : undefined;
      const x = ref(l.v, e.left);
      const y = ref(r.v, e.right);
      if (x === undefined || y === undefined) throw new CodegenLimit('comparing these lists is not supported by the compiled evaluator');
      return this.fn([`const x = ${x};`, 'if (x == MISSING) return false;', `const y = ${y};`, 'if (y == MISSING) return false;', `return listIn(x, y, ${e.op === 'in'});`], text);
    }
    if (l.k !== 'scalar' || r.k !== 'scalar') throw new CodegenLimit('comparing a list with a single value is not supported by the compiled evaluator');
    const op = e.op === 'in' || e.op === 'intersects' ? '=' : e.op;
    const L = l.v;
    const R = r.v;
    const isText = (c: TypeClass) => c === 'string' || c === 'bytes';
    if (L.kind === 'str' && R.kind === 'str' && (L.cls === R.cls || (isText(L.cls) && isText(R.cls)))) {
      const body = [`const x = ${L.expr};`, 'if (x == MISSING) return false;', `const y = ${R.expr};`, 'if (y == MISSING) return false;'];
      const range = ['const a = usize(u32(x));', 'const l = u32(x >>> 32);', 'const b = usize(u32(y));', 'const m = u32(y >>> 32);'];
      if (op === 'icontains' || op === 'iglob') {
        // both sides case-folded into scratch (the glob folds its subject itself)
        const fold = op === 'icontains' ? ['const fx = foldCase(x, false);', 'if (fx == MISSING) return false;'] : [];
        const test = op === 'icontains' ? 'findBytes(usize(u32(fx)), u32(fx >>> 32), usize(u32(fy)), u32(fy >>> 32))' : 'globMatch(usize(u32(fy)), i32(fy >>> 32), usize(u32(x)), i32(x >>> 32), true)';
        return this.fn([...body, ...fold, 'const fy = foldCase(y, false);', 'if (fy == MISSING) return false;', `return ${test};`], text);
      }
      if (op === 'glob') return this.fn([...body, ...range, 'return globMatch(b, i32(m), a, i32(l), false);'], text);
      if (L.cls === 'ipaddr' && op !== '=' && op !== '!=') return 'false';
      if ((L.cls === 'bytes' || R.cls === 'bytes') && !['=', '!=', 'contains', 'bcontains', 'startswith', 'bstartswith', 'endswith'].includes(op)) return 'false';
      const bop = op === 'bcontains' ? 'contains' : op === 'bstartswith' ? 'startswith' : op;
      return this.fn([...body, ...range, `return ${strFieldTest(bop)};`], text);
    }
    if (L.kind === 'str' || R.kind === 'str' || L.kind === 'bool' || R.kind === 'bool') {
      if (L.kind === 'bool' && R.kind === 'bool') {
        if (op !== '=' && op !== '!=') return 'false';
        return this.fn([...scoped(L, 'x'), ...scoped(R, 'y'), `return (x != 0) ${op === '=' ? '==' : '!='} (y != 0);`], text);
      }
      throw new CodegenLimit(`comparing a ${L.cls} field with a ${R.cls} field is not supported by the compiled evaluator`);
    }
    return this.fn([...scoped(L, 'x'), ...scoped(R, 'y'), `return ${numFieldTest(op, L.kind, R.kind)};`], text);
  }
}

/** A numeric value's statements in its own block, leaving `x`/`y` bound. */
function scoped(v: Scalar, name: string): string[] {
  const pre = v.pre.map((p) => p.replace('const t =', `const t${name} =`).replace('const x0 =', `const ${name}0 =`));
  const fix = (s: string) => s.replace(/\bt\b/g, `t${name}`).replace(/\bx0\b/g, `${name}0`);
  return [...pre, `if (!(${fix(v.present)})) return false;`, `const ${name}: u64 = ${fix(v.bits)};`];
}

function strFieldTest(op: CmpOp): string {
  switch (op) {
    case '=':
      return 'l == m && eqBytes(a, b, l)';
    case '!=':
      return '!(l == m && eqBytes(a, b, l))';
    case '<':
      return 'cmpBytes(a, l, b, m) < 0';
    case '<=':
      return 'cmpBytes(a, l, b, m) <= 0';
    case '>':
      return 'cmpBytes(a, l, b, m) > 0';
    case '>=':
      return 'cmpBytes(a, l, b, m) >= 0';
    case 'contains':
      return 'findBytes(a, l, b, m)';
    case 'startswith':
      return 'm <= l && eqBytes(a, b, m)';
    case 'endswith':
      return 'm <= l && eqBytes(a + l - m, b, m)';
    default:
      throw new CodegenLimit(`${op} between two fields is not supported by the compiled evaluator`);
  }
}

const REL: Partial<Record<CmpOp, string>> = { '=': '==', '!=': '!=', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

function numFieldTest(op: CmpOp, lk: ValueKind, rk: ValueKind): string {
  const rel = REL[op];
  if (!rel) return 'false';
  if (lk === 'f64' || rk === 'f64') {
    const f = (k: ValueKind, n: string) => (k === 'f64' ? `reinterpret<f64>(${n})` : k === 'i64' ? `f64(i64(${n}))` : `f64(${n})`);
    return `${f(lk, 'x')} ${rel} ${f(rk, 'y')}`;
  }
  if (lk === rk) return lk === 'i64' ? `i64(x) ${rel} i64(y)` : `x ${rel} y`;
  // signed vs unsigned, exactly: compare through the sign first
  return lk === 'i64' ? `cmpSU(i64(x), y) ${rel} 0` : `0 ${rel} cmpSU(i64(y), x)`;
}

const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;
const U64_MAX = (1n << 64n) - 1n;

/** `x op lit` for integers and doubles, exact for constants outside the type's range. */
function numTest(op: CmpOp, lit: Literal, kind: ValueKind): string {
  const rel = REL[op];
  if (!rel) return 'false';
  const n = kind === 'i64' ? 'i64(x)' : kind === 'u64' ? 'x' : 'reinterpret<f64>(x)';
  if (lit.num === undefined) {
    if (lit.dbl === undefined) return 'false';
    const d = Number.isNaN(lit.dbl) ? 'NaN' : lit.dbl === Infinity ? 'Infinity' : lit.dbl === -Infinity ? '-Infinity' : String(lit.dbl);
    const left = kind === 'f64' ? n : kind === 'i64' ? `f64(i64(x))` : 'f64(x)';
    return `${left} ${rel} <f64>(${d})`;
  }
  const c = lit.num;
  if (kind === 'f64') return `${n} ${rel} <f64>(${Number(c)})`;
  const [lo, hi] = kind === 'i64' ? [I64_MIN, I64_MAX] : [0n, U64_MAX];
  if (c < lo || c > hi) {
    // every value of the type is above (c < lo) or below (c > hi) the constant
    const above = c < lo;
    const verdict = op === '=' ? false : op === '!=' ? true : op === '<' || op === '<=' ? !above : above;
    return String(verdict);
  }
  const lit64 = kind === 'u64' ? `<u64>${u64Literal(c)}` : c === I64_MIN ? 'i64.MIN_VALUE' : `i64(${c})`;
  return `${n} ${rel} ${lit64}`;
}

/** `=`/`!=` on an IP address: exact bytes or a network prefix. */
function ipTest(op: CmpOp, lit: Literal): string {
  if (op !== '=' && op !== '!=') return 'false';
  let eq: string;
  if (lit.net) {
    const { bytes, prefix } = lit.net;
    const parts = [`l == ${bytes.length}`];
    const full = prefix >> 3;
    if (full > 0) parts.push(eqAt('a', bytes.subarray(0, full)));
    if (prefix & 7) {
      const mask = (0xff00 >> (prefix & 7)) & 0xff;
      parts.push(`(load<u8>(a + ${full}) & ${mask}) == ${bytes[full]! & mask}`);
    }
    eq = `(${parts.join(' && ')})`;
  } else if (lit.ip) eq = `(l == ${lit.ip.bytes.length} && ${eqAt('a', lit.ip.bytes)})`;
  else return 'false';
  return op === '=' ? eq : `!${eq}`;
}

/** The pmatch table of glob/assembly/glob.ts: u32 count; per pattern u32 ncomps; per component u32 isGlob, u32 len, bytes padded to 4. */
function pmatchTable(patterns: string[]): Uint8Array {
  const out: number[] = [];
  const u32 = (v: number) => out.push(v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff);
  u32(patterns.length);
  for (const p of patterns) {
    const comps = p.split('/').filter((c) => c.length > 0);
    u32(comps.length);
    for (const c of comps) {
      const b = utf8Bytes(c);
      u32(/[*?[]/.test(c) ? 1 : 0);
      u32(b.length);
      out.push(...b);
      while (out.length % 4 !== 0) out.push(0);
    }
  }
  return Uint8Array.from(out);
}
