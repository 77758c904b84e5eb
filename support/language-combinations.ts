// The condition language as the checker defines it, enumerated for differential testing: every
// operator (checker.ts COMPARISON_OPERATORS) × modifier (cursor.ts MODIFIERS) × transformer
// (cursor.ts TRANSFORMERS) × field type and access shape (the field tables, fields/*.ts, and the
// code generator's resolveAccess), with literal, literal-list and field (val()) right-hand sides.
// Candidates are built syntactically and kept when the checker accepts them (without the code
// generator's veto), so the set follows the checker's tables, not a hand list. The tests and
// the `differential` bench scenario draw their rules from here.
import { parseCondition } from '../host/engine/parser.js';
import { checkCondition, COMPARISON_OPERATORS, opsFor } from '../host/engine/checker.js';
import { MODIFIERS, TRANSFORMERS } from '../host/engine/cursor.js';
import { Diagnostics } from '../host/engine/diagnostics.js';
import { EVENT_NAMES } from '../host/abi/event-names.js';
import { fieldTable, typeClass, type FieldDef, type Source } from '../host/engine/fields.js';
import { resolveAccess, SlotTable } from '../host/engine/codegen/access.js';
import { leafLimit } from '../host/engine/codegen/index.js';
import { walkChecked, type CheckedExpr, type Operand } from '../host/engine/ir.js';
import type { LoadedRule } from '../host/engine/index.js';

/** Event types the generated syscall rules and events use (from the checker's event-name table). */
export const TYPES = ['open', 'openat', 'execve', 'connect'].filter((t) => EVENT_NAMES.has(t));

/** An accepted leaf: its text, source, and the combination it stands for. */
export interface Leaf {
  source: Source;
  text: string;
  /** operator|modifier|transformer shape|left type|right kind: one class per combination. */
  key: string;
  /** Whether the compiled evaluator accepts it too (the load refuses it otherwise). */
  compiles: boolean;
}

/** Field representatives: the first fields of each (type, list, access shape) of a source's table. */
function representatives(source: Source, perShape = 2): FieldDef[] {
  const table = new SlotTable(source);
  const seen = new Map<string, number>();
  const out: FieldDef[] = [];
  for (const def of fieldTable(source)) {
    if (def.arg === 'required' || def.name.startsWith('evt.rawarg') || def.name === 'evt.around') continue;
    const ref = { kind: 'field' as const, def, canonical: def.name, type: def.type, isList: def.isList };
    const acc = resolveAccess(ref, source, table);
    const shape = acc.k === 'list' && acc.endpoint ? 'endpoint' : acc.k;
    const key = `${def.type}|${def.isList}|${shape}`;
    const n = seen.get(key) ?? 0;
    if (n >= perShape) continue;
    seen.set(key, n + 1);
    out.push(def);
  }
  return out;
}

/**
 * Values with raw bytes, as kernel paths and command lines carry them (host/engine/raw-text.ts):
 * 0xFF 0xFE, a truncated sequence (E2 82: one U+FFFD for regex), a lead byte alone, and `é`.
 */
const RAW_STRINGS = ['/a\udcff', '/a/b\udcff\udcfe', 'a\udce2\udc82', 'a\udce2\udc82b', '\udcc3', 'é', '/aé/b', '8J+YgP8='];

/** Literals by type class, including what modifiers and the string operators need. */
function literals(def: FieldDef | undefined, op: string): string[] {
  if (def?.name === 'evt.type') return TYPES.slice(0, 2);
  if (op === 'bcontains' || op === 'bstartswith') return ['61', '2f61'];
  switch (def ? typeClass(def.type) : 'string') {
    case 'signed':
    case 'unsigned':
      return ['0', '7', '4000'];
    case 'double':
      return ['0', '2.5'];
    case 'bool':
      return ['true', 'false'];
    case 'ipaddr':
      return ['10.0.0.1', '::1'];
    case 'ipnet':
      return ['10.0.0.0/8', '192.168.1.0/24'];
    default:
      // raw bytes (Falco 0.45): `\xff` no UTF-8 holds, `\xc3` a lead byte found inside `é`; `a.` matches `a` and one U+FFFD
      return op === 'regex' ? ['a.*', '^/[a-z]+$', 'a.'] : op === 'glob' || op === 'iglob' ? ['*a*', '/a/?'] : op === 'pmatch' ? ['/a', '/tmp'] : ['a', '/a/b', '-ab', 'aGVsbG8=', '', '/a\\xff', '\\xc3'];
  }
}

const q = (v: string) => `"${v}"`;

/** Left operands: each field, and each transformer over it (the checker drops what does not fit). */
function lefts(defs: FieldDef[]): Array<{ text: string; shape: string; def: FieldDef }> {
  const out: Array<{ text: string; shape: string; def: FieldDef }> = [];
  for (const d of defs) {
    out.push({ text: d.name, shape: 'field', def: d });
    for (const t of TRANSFORMERS) {
      const forms: Array<[string, string]> =
        t === 'concat'
          ? [
              [`concat(${d.name}, "-x")`, 'concat(f,c)'],
              [`concat("y", tolower(${d.name}))`, 'concat(c,t(f))'],
            ]
          : t === 'join'
            ? [
                [`join("-", ${d.name})`, 'join(c,f)'],
                [`join(",", (${d.name}, "z"))`, 'join(c,(f,c))'],
              ]
            : t === 'getopt'
              ? [
                  [`getopt(${d.name}, "ab:")`, 'getopt(f,c)'],
                  [`getopt((${d.name}, "-b", "v"), "ab:")`, 'getopt((f,c),c)'],
                  [`getopt((${d.name}, "-a"), "ab:")[b]`, 'getopt((f,c),c)[k]'],
                ]
              : [
                  [`${t}(${d.name})`, `${t}(f)`],
                  [`${t}(toupper(${d.name}))`, `${t}(t(f))`],
                ];
      for (const [text, shape] of forms) out.push({ text, shape, def: d });
    }
  }
  return out;
}

function operandKey(o: Operand): string {
  return o.kind === 'field' ? `${o.type}${o.isList ? '[]' : ''}` : `${o.name}(${o.args.map((a) => (a.kind === 'const' ? 'c' : operandKey(a))).join(',')})${o.key ? '[k]' : ''}`;
}

function check(text: string, source: Source, withCodegen: boolean): { leaf?: CheckedExpr; error?: string } {
  const parsed = parseCondition(text);
  if (!parsed.ok) return { error: parsed.error.message };
  const diags = new Diagnostics();
  const leaf = checkCondition(parsed.expr, { source, locate: () => [], locateInMacro: () => [], leafLimit: withCodegen ? leafLimit : undefined }, diags);
  return leaf ? { leaf } : { error: diags.errors[0]?.message ?? 'refused' };
}

/** Every leaf the checker accepts, and every one it accepts that the compiled evaluator refuses. */
export function enumerate(sources: Source[] = ['syscall', 'k8s_audit']): { leaves: Leaf[]; refused: Array<{ text: string; why: string }>; candidates: number } {
  const leaves: Leaf[] = [];
  const refused: Array<{ text: string; why: string }> = [];
  let candidates = 0;
  for (const source of sources) {
    const defs = representatives(source);
    const byType = new Map<string, FieldDef[]>();
    for (const d of defs) byType.set(`${d.type}|${d.isList}`, [...(byType.get(`${d.type}|${d.isList}`) ?? []), d]);
    for (const l of lefts(defs)) {
      const texts: Array<[string, string]> = [[`${l.text} exists`, 'exists']];
      // the left operand's checked type picks the operators (the checker's own table)
      candidates++;
      const left = check(`${l.text} exists`, source, false).leaf;
      if (left?.kind !== 'exists') continue;
      const ops = COMPARISON_OPERATORS.filter((op) => opsFor(left.operand.type, left.operand.isList).has(op));
      for (const op of ops) {
        const vals = literals(l.def, op);
        texts.push([`${l.text} ${op} ${q(vals[0]!)}`, 'lit'], [`${l.text} ${op} (${vals.map(q).join(', ')})`, 'list']);
        for (const m of MODIFIERS) texts.push([`${l.text} ${op} ${m} (${vals.map(q).join(', ')})`, 'list']);
        // field against field: another representative of the left's type, and a transformer of it
        const others = byType.get(`${l.def.type}|${l.def.isList}`) ?? [];
        const other = others.find((o) => o !== l.def) ?? others[0]!;
        texts.push([`${l.text} ${op} val(${other.name})`, 'val'], [`${l.text} ${op} tolower(${other.name})`, 'tr'], [`${l.text} ${op} len(${other.name})`, 'tr']);
      }
      for (const [text, rk] of texts) {
        candidates++;
        const c = check(text, source, false);
        if (!c.leaf) continue;
        const e = c.leaf;
        const key =
          e.kind === 'exists'
            ? `${source}|exists|${operandKey(e.operand)}`
            : e.kind === 'cmp'
              ? `${source}|${e.op}|${e.modifier ?? ''}|${operandKey(e.left)}|${rk}|${l.shape}`
              : e.kind === 'cmpfield'
                ? `${source}|${e.op}|${operandKey(e.left)}|${operandKey(e.right)}|${rk}`
                : text;
        const w = check(text, source, true);
        if (!w.leaf) refused.push({ text: `${source}: ${text}`, why: w.error ?? '' });
        leaves.push({ source, text, key, compiles: w.leaf !== undefined });
      }
    }
  }
  return { leaves, refused, candidates };
}

/** One leaf per combination class, in enumeration order (deterministic). */
export function oneLeafPerClass(leaves: readonly Leaf[]): Leaf[] {
  const seen = new Set<string>();
  return leaves.filter((l) => !seen.has(l.key) && (seen.add(l.key), true));
}

/** Rules over leaves: a syscall leaf runs for TYPES; `not` on every third rule (a missing value is false, its negation true). */
/** The canonical names of the list fields rules read (events give them arrays). */
export function listFields(rules: readonly LoadedRule[]): Set<string> {
  const out = new Set<string>();
  const walk = (o: Operand): void => {
    if (o.kind === 'field') {
      if (o.isList) out.add(o.canonical);
    } else for (const a of o.args) if (a.kind !== 'const') walk(a);
  };
  for (const r of rules) {
    walkChecked(r.condition, (n) => {
      if (n.kind === 'exists') walk(n.operand);
      else if (n.kind === 'cmp') walk(n.left);
      else if (n.kind === 'cmpfield') {
        walk(n.left);
        walk(n.right);
      }
    });
  }
  return out;
}

export function rulesYaml(leaves: readonly Leaf[]): string {
  return leaves
    .map((l, i) => {
      const body = i % 3 === 2 ? `not (${l.text})` : l.text;
      const cond = l.source === 'syscall' ? `evt.type in (${TYPES.join(', ')}) and ${body}` : body;
      return `- rule: c${i}\n  desc: generated\n  condition: ${JSON.stringify(cond)}\n  output: c${i}\n  priority: WARNING\n  source: ${l.source}\n`;
    })
    .join('\n');
}

/** Values every string field may take besides its rules' constants: options, base64, paths, case. */
export const EXTRA_STRINGS = ['-a', '-ab', '-b', '-bv', 'v', '--', 'aGVsbG8=', 'YQ', '/a/b', '/A/B', 'A', 'open', 'x y', ...RAW_STRINGS];
