// Event-type analysis: the set of `evt.type` names for which a syscall rule's expanded condition
// can be true (reference/falco-language.md G, libs:userspace/libsinsp/filter/ppm_codes.cpp).
// `and` intersects, `or` unites, negation is pushed to the leaves; only event-type and
// `evt.num` leaves are inverted by `not`, every other leaf is neutral (all types).
import type { Expr, Rhs } from './ast.js';
import { EVENT_NAMES } from '../abi/event-names.js';

/** The result: the names, or an error for a condition the analysis rejects. */
export type EvttypeResult = { ok: true; names: Set<string> } | { ok: false; message: string; offset: number };

class AnalysisError {
  constructor(
    readonly message: string,
    readonly offset: number,
  ) {}
}

const ALL: ReadonlySet<string> = EVENT_NAMES;
const NONE: ReadonlySet<string> = new Set();

function complement(s: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const n of ALL) if (!s.has(n)) out.add(n);
  return out;
}

function intersect(sets: Array<ReadonlySet<string>>): ReadonlySet<string> {
  const [first, ...rest] = sets.filter((s) => s !== ALL);
  if (!first) return ALL;
  const out = new Set<string>();
  for (const n of first) if (rest.every((s) => s.has(n))) out.add(n);
  return out;
}

function union(sets: Array<ReadonlySet<string>>): ReadonlySet<string> {
  if (sets.includes(ALL)) return ALL;
  const out = new Set<string>();
  for (const s of sets) for (const n of s) out.add(n);
  return out;
}

function literalValues(rhs: Rhs, offset: number): string[] {
  if (rhs.kind === 'value') return [rhs.value];
  if (rhs.kind === 'list') return rhs.values.map((v) => v.value);
  throw new AnalysisError('evt.type can only be compared with literal values for event-type indexing', offset);
}

/** What an `evt.num` leaf says, given that evt.num >= 1 always: none, all, or neutral. */
function evtNumLeaf(op: string, values: string[]): 'none' | 'all' | 'neutral' {
  const nums = values.map((v) => (/^\d+$/.test(v) ? Number(v) : NaN));
  if (nums.some((n) => Number.isNaN(n))) return 'neutral';
  const n = nums[0];
  switch (op) {
    case '=':
    case '==':
      return n === 0 ? 'none' : 'neutral';
    case 'in':
      return nums.every((x) => x === 0) ? 'none' : 'neutral';
    case '<':
      return n !== undefined && n <= 1 ? 'none' : 'neutral';
    case '<=':
      return n === 0 ? 'none' : 'neutral';
    case '!=':
      return n === 0 ? 'all' : 'neutral';
    case '>':
      return n === 0 ? 'all' : 'neutral';
    case '>=':
      return n !== undefined && n <= 1 ? 'all' : 'neutral';
    default:
      return 'neutral';
  }
}

/**
 * The analysis of one condition. A macro body is shared by all its references (expand.ts), so
 * its result is remembered per body and polarity: the cost is the size of the DAG, not of the
 * expanded tree. Leaves that say nothing answer the shared ALL, never a copy of it.
 */
class Analysis {
  private readonly memo = [new Map<Expr, ReadonlySet<string>>(), new Map<Expr, ReadonlySet<string>>()];

  run(e: Expr, negated: boolean): ReadonlySet<string> {
    switch (e.kind) {
      case 'and':
      case 'or': {
        const sets = e.children.map((c) => this.run(c, negated));
        return (e.kind === 'and') !== negated ? intersect(sets) : union(sets);
      }
      case 'not':
        return this.run(e.child, !negated);
      case 'macro': {
        const memo = this.memo[negated ? 1 : 0]!;
        let set = memo.get(e.body);
        if (!set) memo.set(e.body, (set = this.run(e.body, negated)));
        return set;
      }
      case 'identifier':
        return ALL;
      case 'unary': {
        if (e.left.kind === 'field' && isTypeField(e.left.name, e.left.arg)) return negated ? NONE : ALL;
        return ALL;
      }
      case 'binary': {
        if (e.left.kind === 'transformer' && containsTypeField(e.left)) {
          throw new AnalysisError('evt.type with a transformer cannot be used for event-type indexing', e.span.start);
        }
        if (e.left.kind !== 'field') return ALL;
        if (isTypeField(e.left.name, e.left.arg)) {
          if (!['=', '==', '!=', 'in'].includes(e.op)) return ALL;
          const names = new Set(literalValues(e.right, e.span.start));
          const set = e.op === '!=' ? complement(names) : intersect([names, ALL]);
          return negated ? complement(set) : set;
        }
        if (e.left.name === 'evt.num' && e.left.arg === undefined && (e.right.kind === 'value' || e.right.kind === 'list')) {
          const verdict = evtNumLeaf(e.op, literalValues(e.right, e.span.start));
          if (verdict === 'neutral') return ALL;
          const none = verdict === 'none';
          return none !== negated ? NONE : ALL;
        }
        return ALL;
      }
    }
  }
}

function isTypeField(name: string, arg: string | undefined): boolean {
  return (name === 'evt.type' || name === 'syscall.type') && arg === undefined;
}

function containsTypeField(t: { args: Array<{ kind: string; name?: string; args?: unknown }> }): boolean {
  return t.args.some((a) => (a.kind === 'field' && isTypeField(a.name!, undefined)) || (a.kind === 'transformer' && containsTypeField(a as never)));
}

/** The event types a syscall rule can match. */
export function ruleEvttypes(expr: Expr): EvttypeResult {
  try {
    return { ok: true, names: new Set(new Analysis().run(expr, false)) };
  } catch (e) {
    if (!(e instanceof AnalysisError)) throw e;
    return { ok: false, message: e.message, offset: e.offset };
  }
}
