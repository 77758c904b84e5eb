// Operand values in generated code. Every value is 8 bytes ("bits"): a string ref
// (low 32 bits address, high 32 bits length), an i64/u64, f64 bits, or 0/1. A scalar string is
// one expression that yields MISSING when absent; numbers carry a presence test. Consumes
// Operands of the checked IR and Access values; produces AssemblyScript expressions.
import type { TypeClass } from '../fields.js';
import { typeClass } from '../fields.js';
import type { Operand } from '../ir.js';
import { resolveAccess, valueKind, type Access, type SlotTable, type ThreadField, type ValueKind } from './access.js';
import { staticBytes, utf8Bytes } from './bytes.js';
import { CodegenLimit } from './strings.js';

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

/** A list-like value: a list slot or an ancestor walk. */
export type Many = { k: 'list'; access: Extract<Access, { k: 'list' }>; kind: ValueKind; cls: TypeClass } | { k: 'walk'; field: ThreadField; kind: ValueKind; cls: TypeClass };

/** What an operand is in generated code. */
export type Value = { k: 'scalar'; v: Scalar } | { k: 'many'; v: Many } | { k: 'type' } | { k: 'missing' };

const word = (index: number) => 8 + 8 * (index >> 6);
const bitOf = (index: number) => `0x${(1n << BigInt(index & 63)).toString(16)}`;

/** The thread entry at a level. */
export function threadAt(level: number): string {
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

/** Static-data strings shared by the module (constant operands of concat). */
export class Statics {
  readonly decls: string[] = [];
  private readonly seen = new Map<string, string>();
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
}

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
  // transformers
  if (o.name === 'join' || o.name === 'getopt') return { k: 'missing' };
  if (o.name === 'concat') {
    let acc = 'concatStart()';
    for (const a of o.args) {
      let part: string;
      if (a.kind === 'const') {
        const b = utf8Bytes(a.value);
        part = `pack(${statics.bytes(b)}, ${b.length})`;
      } else {
        const v = operandValue(a, source, table, statics);
        if (v.k !== 'scalar' || v.v.kind !== 'str' || (a.kind === 'transform' && a.name !== 'basename')) throw new CodegenLimit('concat() takes string fields, basename() and constants only');
        part = v.v.expr!;
      }
      acc = `concatAdd(${acc}, ${part})`;
    }
    return { k: 'scalar', v: { kind: 'str', cls: 'string', expr: acc, pre: [], present: '', bits: '' } };
  }
  const arg = o.args[0];
  if (!arg || arg.kind === 'const') throw new CodegenLimit(`${o.name}() needs a field argument`);
  const inner = operandValue(arg, source, table, statics);
  if (o.name === 'len') {
    if (inner.k === 'missing') return inner;
    if (inner.k === 'many' && inner.v.k === 'list') {
      const s = inner.v.access.slot;
      return { k: 'scalar', v: { kind: 'u64', cls: 'unsigned', pre: [], present: `(load<u64>(e + ${word(s.index)}) & ${bitOf(s.index)}) != 0`, bits: `load<u64>(e + ${s.offset}) >>> 32` } };
    }
    if (inner.k !== 'scalar' || inner.v.kind !== 'str') throw new CodegenLimit('len() of this operand is not supported by the compiled evaluator');
    return { k: 'scalar', v: { kind: 'u64', cls: 'unsigned', pre: [`const x0 = ${inner.v.expr};`], present: 'x0 != MISSING', bits: 'x0 >>> 32' } };
  }
  if (inner.k === 'missing') return inner;
  if (inner.k !== 'scalar' || inner.v.kind !== 'str') throw new CodegenLimit(`${o.name}() of a list or non-string field is not supported by the compiled evaluator`);
  const e = inner.v.expr!;
  const expr = o.name === 'tolower' ? `foldCase(${e}, false)` : o.name === 'toupper' ? `foldCase(${e}, true)` : o.name === 'b64' ? `b64(${e})` : `baseName(${e})`;
  return { k: 'scalar', v: { kind: 'str', cls: 'string', expr, pre: [], present: '', bits: '' } };
}

/** The value kind of an operand's type (for constants). */
export function operandKind(o: Operand): ValueKind {
  return valueKind(o);
}
