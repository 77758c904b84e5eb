// Operand values in generated code. Every value is 8 bytes ("bits"): a string ref
// (low 32 bits address, high 32 bits length), an i64/u64, f64 bits, or 0/1. A scalar string is
// one expression that yields MISSING when absent; numbers carry a presence test. Consumes
// Operands of the checked IR and Access values; produces AssemblyScript expressions.
import type { TypeClass } from '../fields.js';
import { typeClass } from '../fields.js';
import type { Operand } from '../ir.js';
import { resolveAccess, type Access, type SlotTable, type ThreadField, type ValueKind } from './access.js';
import { staticBytes, utf8Bytes } from './bytes.js';
import { CodegenLimit } from './strings.js';
import { EVT_TYPES } from '../../abi/module.js';

/** A scalar value: string (expr) or number/bool (pre, present, bits). */
export interface Scalar {
  kind: ValueKind;
  cls: TypeClass;
  /** For strings: an expression of the packed ref, MISSING when absent. */
  expr?: string;
  pre: string[];
  present: string;
  bits: string;
}

/** A list-like value: a list slot, an ancestor walk, or a list a transformer computes (`expr`: a packed list ref, MISSING when absent). */
export type Many = { k: 'list'; access: Extract<Access, { k: 'list' }>; kind: ValueKind; cls: TypeClass } | { k: 'walk'; field: ThreadField; kind: ValueKind; cls: TypeClass } | { k: 'computed'; expr: string; kind: 'str'; cls: TypeClass };

/** What an operand is in generated code. */
export type Value = { k: 'scalar'; v: Scalar } | { k: 'many'; v: Many } | { k: 'type' } | { k: 'missing' };

const word = (index: number) => 8 + 8 * (index >> 6);
const bitOf = (index: number) => `0x${(1n << BigInt(index & 63)).toString(16)}`;

/** The thread entry at a level. */
function threadAt(level: number): string {
  return level === 0 ? 'thr(e)' : `ancestor(e, ${level})`;
}

/** The bits of a thread field given an entry variable. */
export function threadBits(t: string, f: ThreadField): string {
  switch (f.load) {
    case 'str':
    case 'i64':
      return `load<u64>(${t} + ${f.offset})`;
    case 'u32':
      return `u64(load<u32>(${t} + ${f.offset}))`;
    case 'flag':
      return `u64((load<u32>(${t} + ${f.offset}) & ${f.flag}) != 0)`;
    case 'key':
      return `load<u64>(${t} + ${f.offset})`;
  }
}

/** Static data and helper functions shared by the module (constants, evt.type names, transformer steps). */
export class Statics {
  readonly decls: string[] = [];
  private readonly seen = new Map<string, string>();
  private readonly fns = new Map<string, string>();
  /** A name for static bytes, declared once. */
  bytes(b: Uint8Array): string {
    const key = Buffer.from(b).toString('latin1');
    let name = this.seen.get(key);
    if (!name) {
      name = `D${this.seen.size}`;
      this.seen.set(key, name);
      this.decls.push(`const ${name} = ${staticBytes(b)};`);
    }
    return name;
  }

  /** A call `Fn(e)` of a function `(e: usize): u64` with this body, declared once per body. */
  fn(body: string[]): string {
    const key = body.join('\n');
    let call = this.fns.get(key);
    if (!call) {
      call = `F${this.fns.size}(e)`;
      this.fns.set(key, call);
      this.decls.push(`function ${call.slice(0, -3)}(e: usize): u64 {`, ...body.map((l) => `  ${l}`), '}');
    }
    return call;
  }

  /** The name of the current event's type (from the record's type id) as a string ref. */
  evtName(): string {
    const names = EVT_TYPES.map((n) => utf8Bytes(n));
    const offsets: number[] = [0, 0];
    const blob: number[] = [];
    for (const b of names) {
      offsets.push(blob.length, b.length);
      blob.push(...b);
    }
    const table = new Uint8Array(Uint32Array.from(offsets).buffer);
    const body = [
      'const t = load<u32>(e);',
      `if (t == 0 || t > ${names.length}) return MISSING;`,
      `const at = ${this.bytes(table)} + (usize(t) << 3);`,
      `return pack(${this.bytes(Uint8Array.from(blob))} + usize(load<u32>(at)), load<u32>(at + 4));`,
    ];
    return this.fn(body);
  }
}

/** A packed-ref expression of a string constant. */
function constRef(value: string, statics: Statics): string {
  const b = utf8Bytes(value);
  return `pack(${statics.bytes(b)}, ${b.length})`;
}

/** A scalar's value as a string ref expression (integers in decimal, as the interpreter's String()). */
function textOf(a: Operand | { kind: 'const'; value: string }, source: 'syscall' | 'k8s_audit', table: SlotTable, statics: Statics): string {
  if (a.kind === 'const') return constRef(a.value, statics);
  const v = operandValue(a, source, table, statics);
  if (v.k === 'missing') return 'MISSING';
  if (v.k === 'type') return statics.evtName();
  if (v.k !== 'scalar') throw new CodegenLimit(`a list where ${a.kind === 'field' ? a.canonical : a.name + '()'} needs one value`);
  if (v.v.kind === 'str') return v.v.expr!;
  if (v.v.kind !== 'i64' && v.v.kind !== 'u64') throw new CodegenLimit(`${v.v.cls} values as text are not supported by the compiled evaluator`);
  return statics.fn([...v.v.pre, `if (!(${v.v.present})) return MISSING;`, `return decimal(${v.v.bits}, ${v.v.kind === 'i64'});`]);
}

/** An operand's values as a packed list ref expression (MISSING when absent). */
function listOf(a: Operand | { kind: 'const'; value: string }, source: 'syscall' | 'k8s_audit', table: SlotTable, statics: Statics): string {
  if (a.kind !== 'const') {
    const v = operandValue(a, source, table, statics);
    if (v.k === 'missing') return 'MISSING';
    if (v.k === 'many') {
      if (v.v.k === 'computed') return v.v.expr;
      if (v.v.k === 'list' && !v.v.access.endpoint && v.v.kind === 'str') {
        const s = v.v.access.slot;
        return `sref(e, ${word(s.index)}, ${bitOf(s.index)}, ${s.offset})`;
      }
      throw new CodegenLimit('this list as a transformer argument is not supported by the compiled evaluator');
    }
  }
  // one value: a list of one
  return statics.fn([`const x: u64 = ${textOf(a, source, table, statics)};`, 'if (x == MISSING) return MISSING;', 'const d = listAlloc(1);', 'if (d == 0) return MISSING;', 'store<u64>(d, x);', 'return pack(d, 1);']);
}

const MAP_OP: Record<string, number> = { tolower: 0, toupper: 1, b64: 2, basename: 3 };

/** Resolves an operand to its generated value. */
export function operandValue(o: Operand, source: 'syscall' | 'k8s_audit', table: SlotTable, statics: Statics): Value {
  if (o.kind === 'field') {
    const acc = resolveAccess(o, source, table);
    const cls = typeClass(o.type);
    switch (acc.k) {
      case 'type':
        return { k: 'type' };
      case 'thread': {
        // a container entry's field: through the process's entry (ctr), missing without one
        const t = acc.field.ctr ? 'ctr(e)' : threadAt(acc.level);
        if (acc.field.load === 'key') return { k: 'scalar', v: { kind: 'str', cls, expr: `kref(${t}, ${acc.field.offset})`, pre: [], present: '', bits: '' } };
        if (acc.kind === 'str') return { k: 'scalar', v: { kind: 'str', cls, expr: `tref(${t}, ${acc.field.bit}, ${acc.field.offset})`, pre: [], present: '', bits: '' } };
        return { k: 'scalar', v: { kind: acc.kind, cls, pre: [`const t = ${t};`], present: `has(t, ${acc.field.bit})`, bits: threadBits('t', acc.field) } };
      }
      case 'walk':
        return { k: 'many', v: { k: 'walk', field: acc.field, kind: acc.kind, cls } };
      case 'list':
        return { k: 'many', v: { k: 'list', access: acc, kind: acc.slot.kind, cls } };
      case 'slot': {
        const s = acc.slot;
        if (s.kind === 'str') return { k: 'scalar', v: { kind: 'str', cls, expr: `sref(e, ${word(s.index)}, ${bitOf(s.index)}, ${s.offset})`, pre: [], present: '', bits: '' } };
        return { k: 'scalar', v: { kind: s.kind, cls, pre: [], present: `(load<u64>(e + ${word(s.index)}) & ${bitOf(s.index)}) != 0`, bits: `load<u64>(e + ${s.offset})` } };
      }
    }
  }
  const str = (expr: string): Value => ({ k: 'scalar', v: { kind: 'str', cls: 'string', expr, pre: [], present: '', bits: '' } });
  const many = (expr: string): Value => ({ k: 'many', v: { k: 'computed', expr, kind: 'str', cls: 'string' } });
  const text = (a: Operand | { kind: 'const'; value: string }) => textOf(a, source, table, statics);
  const list = (a: Operand | { kind: 'const'; value: string }) => listOf(a, source, table, statics);
  switch (o.name) {
    case 'concat':
      return str(o.args.map(text).reduce((acc, x) => `concat2(${acc}, ${x})`));
    case 'join':
      return str(`joinList(${text(o.args[0]!)}, ${list(o.args[1]!)})`);
    case 'getopt': {
      const sel = o.key === undefined ? -1 : utf8Bytes(o.key)[0]!;
      const call = `getoptList(${list(o.args[0]!)}, ${text(o.args[1]!)}, ${sel})`;
      return o.key === undefined ? many(call) : str(call);
    }
    case 'list': {
      // each item's value (or values) into one new list; missing when an item is
      const parts = o.args.map((a) => (a.kind !== 'const' && a.isList ? { list: true, expr: list(a) } : { list: false, expr: text(a) }));
      const body = parts
        .map((p, i) => `const v${i}: u64 = ${p.expr};\nif (v${i} == MISSING) return MISSING;`)
        .join('\n')
        .split('\n');
      const count = parts.map((p, i) => (p.list ? `(v${i} >>> 32)` : '1')).join(' + ') || '0';
      body.push(`const d = listAlloc(u32(${count}));`, `if (d == 0 && u32(${count}) > 0) return MISSING;`, 'let k: u32 = 0;');
      parts.forEach((p, i) => body.push(p.list ? `k = listAppend(d, k, v${i});` : `store<u64>(d + (usize(k++) << 3), v${i});`));
      body.push('return pack(d, k);');
      return many(statics.fn(body));
    }
    default:
      break;
  }
  const arg = o.args[0];
  if (!arg || arg.kind === 'const') throw new CodegenLimit(`${o.name}() needs a field argument`);
  const inner = operandValue(arg, source, table, statics);
  if (inner.k === 'missing') return inner;
  const scalarStr = inner.k === 'type' ? statics.evtName() : inner.k === 'scalar' && inner.v.kind === 'str' ? inner.v.expr! : undefined;
  if (o.name === 'len') {
    if (inner.k === 'many' && inner.v.k === 'list') {
      const s = inner.v.access.slot;
      return { k: 'scalar', v: { kind: 'u64', cls: 'unsigned', pre: [], present: `(load<u64>(e + ${word(s.index)}) & ${bitOf(s.index)}) != 0`, bits: `load<u64>(e + ${s.offset}) >>> 32` } };
    }
    const x = scalarStr ?? (inner.k === 'many' && inner.v.k === 'computed' ? inner.v.expr : undefined);
    if (x === undefined) throw new CodegenLimit('len() of this operand is not supported by the compiled evaluator');
    return { k: 'scalar', v: { kind: 'u64', cls: 'unsigned', pre: [`const x0 = ${x};`], present: 'x0 != MISSING', bits: 'x0 >>> 32' } };
  }
  if (inner.k === 'many') return many(`mapList(${list(arg)}, ${MAP_OP[o.name]})`);
  if (scalarStr === undefined) throw new CodegenLimit(`${o.name}() of a non-string field is not supported by the compiled evaluator`);
  const e = scalarStr;
  const expr = o.name === 'tolower' ? `foldCase(${e}, false)` : o.name === 'toupper' ? `foldCase(${e}, true)` : o.name === 'b64' ? `b64(${e})` : `baseName(${e})`;
  return str(expr);
}
