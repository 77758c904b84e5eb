// Reference interpreter: evaluates a CheckedExpr on one event, in plain TypeScript, with Falco's
// semantics (reference/falco-language.md A.5, A.8). It is the oracle the compiled evaluator is
// tested against, never the fast path. A missing field makes every comparison false (`!=` too);
// `not` still inverts. List fields: `in` = every value in the set, `intersects` = any.
// Strings are raw byte strings (raw-text.ts): comparisons are on bytes, as Falco 0.45's; `regex`
// sees invalid UTF-8 as U+FFFD.
import type { Modifier } from './ast.js';
import { typeClass } from './fields.js';
import type { CheckedExpr, CmpOp, FieldRef, IpAddr, Literal, Operand } from './ir.js';
import { parseIp, truncInt } from './literals.js';
import { asciiLower, asciiUpper, b64decode, basename, globMatch, pmatch } from './operators.js';
import { decodeRaw, encodeRaw, hasRawBytes, utf8Sanitized } from './raw-text.js';
import { CodePointRegex } from './regex-match.js';

/** A raw field value as an event source provides it. */
export type RawScalar = string | number | bigint | boolean;
export type RawValue = RawScalar | RawScalar[];

/** Field access for one event; undefined means the field cannot be extracted (missing). */
export interface EventAccessor {
  field(ref: FieldRef): RawValue | undefined;
  /**
   * A byte source's fast path for string values: copies the field's UTF-8 bytes straight into
   * dst[at..limit) when the event holds them as they are (no JavaScript string in between);
   * returns the bytes written, or a TEXT_COPY code (`other`: read the value with field()).
   */
  copyText?(ref: FieldRef, dst: Uint8Array, at: number, limit: number): number;
  /**
   * The field reads of this kind of accessor resolved per FieldRef (the same object for every
   * event of the kind): a caller that reads a field on many events resolves it once
   * (field-reader.ts BoundField) instead of looking it up by name on every read.
   */
  readonly readers?: FieldReaders;
  /**
   * A byte source's event as the bytes its fields are read from: a caller that places a copy of
   * them in its memory (once for a run of events of one body) takes each text field's value as
   * where it lies in that copy (EventBytes.texts) instead of copying each value on its own.
   */
  readonly bytes?: EventBytes;
}

/** The bytes an event's fields are read from: body[at, end), and where its text fields lie in them. */
export interface EventBytes {
  readonly body: Uint8Array;
  readonly at: number;
  readonly end: number;
  /**
   * Where the value of each field of `keys` (FieldReaders.textKey's; -1: none) lies in body when
   * it is the text copyText would copy, as it is: out[2k] its start and out[2k + 1] its length;
   * else out[2k] is a TEXT_COPY code (`missing`, or `other`: copy or read it another way). A key
   * below -1 only tells a missing field (a list, say): out[2k] is `missing` or `other`.
   */
  texts(keys: Int32Array, out: Int32Array): void;
}

/** A field's read resolved for one kind of accessor: the value `ev.field(ref)` gives. */
export type FieldRead = (ev: EventAccessor, ref: FieldRef) => RawValue | undefined;
/** A field's copyText resolved for one kind of accessor: what `ev.copyText(ref, ...)` returns. */
export type TextCopy = (ev: EventAccessor, ref: FieldRef, dst: Uint8Array, at: number, limit: number) => number;

/** Resolves the reads of one kind of accessor (EventAccessor.readers). */
export interface FieldReaders {
  read(ref: FieldRef): FieldRead;
  copy(ref: FieldRef): TextCopy;
  /** For an accessor kind with EventAccessor.bytes: the field's key for EventBytes.texts (-1: none). */
  textKey?(ref: FieldRef): number;
}

/** What copyText returns when it copies nothing. */
export const TEXT_COPY = { other: -1, missing: -2, noRoom: -3 } as const;

/** Fields whose un-indexed form means "any ancestor, starting at the parent". */
const ANCESTOR_FIELDS = new Set(['proc.aname', 'proc.aexe', 'proc.aexepath', 'proc.apid', 'proc.acmdline', 'proc.aenv']);
/** Fields that match either endpoint of a connection (`!=`: both must differ). */
const ENDPOINT_FIELDS = new Set(['fd.ip', 'fd.net', 'fd.port', 'fd.proto']);

type V = string | bigint | number | boolean | Uint8Array | IpAddr;

/** Evaluates checked conditions; keeps compiled regexes between calls. */
export class Interpreter {
  private readonly regexes = new Map<string, CodePointRegex>();

  /** True when the condition matches the event. */
  evaluate(e: CheckedExpr, ev: EventAccessor): boolean {
    switch (e.kind) {
      case 'and':
        return e.children.every((c) => this.evaluate(c, ev));
      case 'or':
        return e.children.some((c) => this.evaluate(c, ev));
      case 'not':
        return !this.evaluate(e.child, ev);
      case 'exists':
        return this.operand(e.operand, ev) !== undefined;
      case 'cmp':
        return this.cmp(e.op, e.modifier, e.left, e.values, ev);
      case 'cmpfield': {
        const l = this.operand(e.left, ev);
        const r = this.operand(e.right, ev);
        if (l === undefined || r === undefined) return false;
        const rl = (Array.isArray(r) ? r : [r]).map((x) => ({ text: x instanceof Uint8Array ? Buffer.from(x).toString('utf8') : String(x), ...litFrom(x) }));
        if (Array.isArray(l)) return this.listCmp(e.op, l, rl);
        return e.op === 'in' || e.op === 'intersects' ? rl.some((x) => this.scalar('=', l, x)) : rl.length === 1 && this.scalar(e.op, l, rl[0]!);
      }
    }
  }

  private cmp(op: CmpOp, modifier: Modifier | undefined, left: Operand, values: Literal[], ev: EventAccessor): boolean {
    const v = this.operand(left, ev);
    if (v === undefined) return false;
    if (left.kind === 'field' && ((ANCESTOR_FIELDS.has(left.def.name) && left.arg === undefined) || ENDPOINT_FIELDS.has(left.def.name)) && Array.isArray(v)) {
      // Each ancestor / endpoint is tested on its own; `!=` on endpoints needs all of them to differ.
      if (op === '!=' && ENDPOINT_FIELDS.has(left.def.name)) return v.every((x) => this.one(op, modifier, x, values));
      return v.some((x) => this.one(op, modifier, x, values));
    }
    if (Array.isArray(v)) return this.listCmp(op, v, values);
    return this.one(op, modifier, v, values);
  }

  private one(op: CmpOp, modifier: Modifier | undefined, v: V, values: Literal[]): boolean {
    if (modifier) {
      const n = values.filter((l) => this.scalar(op, v, l)).length;
      if (values.length === 0) return false;
      return modifier === 'anyof' ? n > 0 : modifier === 'allof' ? n === values.length : n === 1;
    }
    switch (op) {
      case 'in':
      case 'intersects':
        return values.some((l) => this.scalar('=', v, l));
      case 'pmatch':
        return pmatch(
          values.map((l) => byteChars(l.text)),
          byteChars(String(v)),
        );
      default:
        return this.scalar(op, v, values[0]!);
    }
  }

  private listCmp(op: CmpOp, vs: V[], values: Literal[]): boolean {
    const inSet = (x: V) => values.some((l) => this.scalar('=', x, l));
    if (op === 'in') return vs.every(inSet);
    if (op === 'intersects') return vs.some(inSet);
    return false;
  }

  /** One scalar comparison `v op lit`. */
  private scalar(op: CmpOp, v: V, lit: Literal): boolean {
    if (typeof v === 'bigint' || typeof v === 'number') {
      const a = typeof v === 'bigint' ? v : v;
      const b = lit.num ?? (lit.dbl !== undefined ? lit.dbl : undefined);
      if (b === undefined) return false;
      return numCmp(op, a, b);
    }
    if (typeof v === 'boolean') {
      if (lit.bool === undefined) return false;
      return op === '=' ? v === lit.bool : op === '!=' ? v !== lit.bool : false;
    }
    if (v instanceof Uint8Array) return bytesCmp(op, v, lit.bytes ?? encodeRaw(lit.text));
    if (typeof v === 'object') return ipCmp(op, v, lit);
    return this.strCmp(op, v, lit);
  }

  private strCmp(op: CmpOp, v: string, lit: Literal): boolean {
    const r = lit.text;
    // A needle with raw bytes may match inside a value's character (`"\xc3"` in `é`): compared as bytes.
    if (hasRawBytes(r) && BYTE_OPS.has(op)) return bytesCmp(op, encodeRaw(v), encodeRaw(r));
    switch (op) {
      case '=':
        return v === r;
      case '!=':
        return v !== r;
      case '<':
      case '<=':
      case '>':
      case '>=':
        return numCmp(op, Buffer.compare(encodeRaw(v), encodeRaw(r)), 0); // strcmp: byte order
      case 'contains':
        return v.includes(r);
      case 'icontains':
        if (hasRawBytes(r)) return bytesCmp('contains', encodeRaw(asciiLower(v)), encodeRaw(asciiLower(r)));
        return asciiLower(v).includes(asciiLower(r));
      case 'startswith':
        return v.startsWith(r);
      case 'endswith':
        return v.endsWith(r);
      case 'glob':
        return globMatch(byteChars(r), byteChars(v)); // fnmatch: `?` is one byte
      case 'iglob':
        return globMatch(byteChars(r), byteChars(v), true);
      case 'regex':
        return this.regex(r).test(utf8Sanitized(v)); // invalid UTF-8 as U+FFFD (Falco 0.45)
      case 'bcontains':
      case 'bstartswith':
        return bytesCmp(op, encodeRaw(v), lit.bytes ?? new Uint8Array());
      default:
        return false;
    }
  }

  private regex(pattern: string): CodePointRegex {
    let re = this.regexes.get(pattern);
    if (!re) {
      re = new CodePointRegex(pattern);
      this.regexes.set(pattern, re);
    }
    return re;
  }

  /** The operand's typed value(s), or undefined when missing. */
  private operand(o: Operand, ev: EventAccessor): V | V[] | undefined {
    if (o.kind === 'field') {
      const raw = ev.field(o);
      if (raw === undefined || raw === null) return undefined;
      return Array.isArray(raw) ? raw.map((x) => normalize(x, o)) : normalize(raw, o);
    }
    const args = o.args.map((a) => (a.kind === 'const' ? a.value : this.operand(a, ev)));
    if (args.some((a) => a === undefined)) return undefined;
    const first = args[0]!;
    const map = (f: (s: string) => string | undefined) => {
      if (Array.isArray(first)) {
        const out = first.map((x) => f(asText(x)));
        return out.some((x) => x === undefined) ? undefined : (out as string[]);
      }
      return f(asText(first));
    };
    const texts = (a: V | V[] | undefined): string[] => (Array.isArray(a) ? a : [a!]).map((x) => String(x));
    switch (o.name) {
      case 'tolower':
        return map(asciiLower);
      case 'toupper':
        return map(asciiUpper);
      case 'b64':
        return map(b64decode);
      case 'basename':
        return map(basename);
      case 'len':
        if (Array.isArray(first)) return BigInt(first.length);
        return BigInt(first instanceof Uint8Array ? first.length : encodeRaw(String(first)).length);
      case 'concat':
        return args.map((a) => String(a)).join('');
      case 'list':
        return args.flatMap(texts);
      case 'join':
        return texts(args[1]).join(String(first));
      case 'getopt':
        return getopt(texts(first), String(args[1]), o.key);
    }
  }
}

/**
 * libsinsp's getopt() transformer (sinsp_filtercheck_multivalue_transformer.cpp,
 * sinsp_filter_multivalue_transformer_getopt::extract), over bytes: options stop at `--` or at the
 * first non-option, `--long` tokens are skipped, an unknown option gives `?`, an option whose
 * argument is missing gives ``. Without a key: the options and their values, in order; with a
 * key K: the value of the last -K (K itself if it takes no value), missing when there is none.
 */
function getopt(argv: readonly string[], optstring: string, key: string | undefined): string[] | string | undefined {
  const opts = encodeRaw(optstring);
  const valid = new Set<number>();
  const withArg = new Set<number>();
  for (let i = opts[0] === 0x3a ? 1 : 0; i < opts.length; i++) {
    const c = opts[i]!;
    if (c === 0x3a) continue;
    valid.add(c);
    if (opts[i + 1] === 0x3a) {
      withArg.add(c);
      i++;
    }
  }
  const sel = key === undefined ? undefined : encodeRaw(key)[0];
  const out: string[] = [];
  let selected: string | undefined;
  const text = (b: Uint8Array) => decodeRaw(b);
  const emit = (name: string, value?: string) => {
    if (sel !== undefined) selected = value ?? name;
    else out.push(name, ...(value === undefined ? [] : [value]));
  };
  const args = argv.map(encodeRaw);
  for (let n = 0; n < args.length; n++) {
    const arg = args[n]!;
    if (arg.length === 2 && arg[0] === 0x2d && arg[1] === 0x2d) break;
    if (arg.length > 2 && arg[0] === 0x2d && arg[1] === 0x2d) continue;
    if (arg.length < 2 || arg[0] !== 0x2d) break;
    for (let i = 1; i < arg.length; i++) {
      const c = arg[i]!;
      if (!valid.has(c)) {
        if (sel === undefined) out.push('?');
        continue;
      }
      const match = sel === undefined || c === sel;
      const name = text(arg.subarray(i, i + 1));
      if (!withArg.has(c)) {
        if (match) emit(name);
        continue;
      }
      const value = i + 1 < arg.length ? text(arg.subarray(i + 1)) : n + 1 < args.length ? text(args[++n]!) : undefined;
      if (match) {
        if (value === undefined) emit('');
        else emit(name, value);
      }
      break;
    }
  }
  return sel === undefined ? out : selected;
}

/** A value as a transformer's text input: bytes one char per byte (b64 of a buffer). */
function asText(x: V): string {
  return x instanceof Uint8Array ? Buffer.from(x).toString('latin1') : String(x);
}

function litFrom(x: V): Partial<Literal> {
  if (typeof x === 'bigint') return { num: x };
  if (typeof x === 'number') return { dbl: x };
  if (typeof x === 'boolean') return { bool: x };
  if (x instanceof Uint8Array) return { bytes: x };
  if (typeof x === 'object') return { ip: x };
  return {};
}

/** Converts a raw value to the field's type class. */
function normalize(raw: RawScalar, ref: FieldRef): V {
  switch (typeClass(ref.type)) {
    case 'signed':
    case 'unsigned': {
      if (typeof raw === 'bigint') return truncInt(raw, ref.type);
      if (typeof raw === 'number') return truncInt(BigInt(Math.trunc(raw)), ref.type);
      if (typeof raw === 'boolean') return raw ? 1n : 0n;
      return /^[+-]?\d+$/.test(raw.trim()) ? truncInt(BigInt(raw.trim()), ref.type) : raw;
    }
    case 'double':
      return typeof raw === 'number' ? raw : Number(raw);
    case 'bool':
      return typeof raw === 'boolean' ? raw : raw === 'true' || raw === 1;
    case 'ipaddr':
    case 'ipnet':
      return parseIp(String(raw)) ?? String(raw);
    case 'bytes':
      return encodeRaw(String(raw));
    default:
      return typeof raw === 'string' ? raw : String(raw);
  }
}

/** Operators that compare a raw needle's bytes when it has some that are no UTF-8. */
const BYTE_OPS = new Set<CmpOp>(['=', '!=', 'contains', 'startswith', 'endswith']);

/** The bytes of a string one char each (latin1), for matchers that step a byte at a time (glob, pmatch); ASCII is left as it is. */
function byteChars(s: string): string {
  return /[^\x00-\x7f]/.test(s) ? Buffer.from(encodeRaw(s)).toString('latin1') : s;
}

function numCmp(op: CmpOp, a: bigint | number, b: bigint | number): boolean {
  const x = typeof a === 'number' || typeof b === 'number' ? Number(a) : a;
  const y = typeof a === 'number' || typeof b === 'number' ? Number(b) : b;
  switch (op) {
    case '=':
      return x === y;
    case '!=':
      return x !== y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
    default:
      return false;
  }
}

function indexOfBytes(h: Uint8Array, n: Uint8Array): number {
  outer: for (let i = 0; i + n.length <= h.length; i++) {
    for (let j = 0; j < n.length; j++) if (h[i + j] !== n[j]) continue outer;
    return i;
  }
  return -1;
}

function bytesCmp(op: CmpOp, v: Uint8Array, r: Uint8Array): boolean {
  const eq = v.length === r.length && indexOfBytes(v, r) === 0;
  switch (op) {
    case '=':
      return eq;
    case '!=':
      return !eq;
    case 'contains':
    case 'bcontains':
      return indexOfBytes(v, r) >= 0;
    case 'startswith':
    case 'bstartswith':
      return r.length <= v.length && indexOfBytes(v.subarray(0, r.length), r) === 0;
    case 'endswith':
      return r.length <= v.length && indexOfBytes(v.subarray(v.length - r.length), r) === 0;
    default:
      return false;
  }
}

function ipCmp(op: CmpOp, v: IpAddr, lit: Literal): boolean {
  let eq: boolean;
  if (lit.net) {
    const { bytes, prefix } = lit.net;
    if (bytes.length !== v.bytes.length) eq = false;
    else {
      eq = true;
      for (let bit = 0; bit < prefix; bit++) {
        const i = bit >> 3;
        const m = 0x80 >> (bit & 7);
        if ((bytes[i]! & m) !== (v.bytes[i]! & m)) {
          eq = false;
          break;
        }
      }
    }
  } else if (lit.ip) {
    eq = lit.ip.bytes.length === v.bytes.length && lit.ip.bytes.every((b, i) => b === v.bytes[i]);
  } else return false;
  return op === '=' ? eq : op === '!=' ? !eq : false;
}
