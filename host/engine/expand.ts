// Expand: conditions parsed after list substitution, macro references resolved into `macro`
// nodes with Falco's visibility rules (reference/falco-language.md B.5-B.6,
// falco:userspace/engine/rule_loader_compiler.cpp compile_macros_infos / resolve_macros).
// A macro body is resolved once and embedded by reference (a DAG); the tree that later stages
// walk is bounded (budget.ts): a macro or rule whose expansion passes a limit is reported and
// left out before any stage walks it.
// Consumes the collected definitions; produces parsed and resolved macro and rule conditions.
import { LIST_OPS, walk, type Expr, type IdentifierNode, type ValueNode } from './ast.js';
import { DEFAULT_EXPAND_LIMITS, ExpansionMeter, MAX_EXPANDED_DEPTH, type ExpandLimits } from './budget.js';
import type { MacroDef, RuleDef } from './collector.js';
import type { Diagnostics, Location } from './diagnostics.js';
import { conditionWithExceptions } from './exceptions.js';
import { compileLists, substituteLists, type CompiledList } from './lists.js';
import type { MappedText } from './mapped-text.js';
import { parseCondition } from './parser.js';
import type { Collected } from './collector.js';

/** Falco's maximum nesting depth for rule and macro conditions. */
const MAX_CONDITION_DEPTH = 1000;

/** A condition text after list substitution, and where its spans point. */
export interface ConditionSource {
  text: MappedText;
  /** The context chain of the item the condition belongs to (ends with `... condition`). */
  ctx: Location[];
}

interface ExpandedMacro {
  name: string;
  def: MacroDef;
  source: ConditionSource;
  expr?: Expr;
  /** True once `expr` holds no identifiers: it can be embedded as it is. */
  resolved: boolean;
  used: boolean;
}

interface ExpandedRule {
  def: RuleDef;
  source: ConditionSource;
  expr: Expr;
}

export interface Expanded {
  lists: CompiledList[];
  macros: Map<string, ExpandedMacro>;
  rules: ExpandedRule[];
}

/** The location chain of a span inside a condition: the item's chain plus the expression position. */
export function conditionLocation(src: ConditionSource, offset: number): Location[] {
  const head = src.text.text.slice(0, 20);
  return [...src.ctx, { itemType: 'condition expression', itemName: head, position: src.text.position(offset) }];
}

/** Parses every macro and rule condition and resolves macros. Rules that fail are reported and left out. */
export function expand(col: Collected, diags: Diagnostics, limits: ExpandLimits = DEFAULT_EXPAND_LIMITS): Expanded {
  const meter = new ExpansionMeter();
  const lists = compileLists(col.lists);
  const macros = new Map<string, ExpandedMacro>();
  for (const def of col.macros) {
    const source: ConditionSource = { text: substituteLists(def.cond, lists), ctx: def.condCtx };
    const parsed = parse(source, diags, limits.maxConditionDepth);
    macros.set(def.name, { name: def.name, def, source, expr: parsed, resolved: false, used: false });
  }
  // Macros resolve in definition order, each seeing only macros defined before its visibility.
  for (const m of macros.values()) {
    if (!m.expr) continue;
    const visible = (name: string) => {
      const t = macros.get(name);
      return t && t.def.index < m.def.visibility ? t : undefined;
    };
    m.expr = resolve(m.expr, m.source, visible, diags, [m.name]);
    if (m.expr && !withinLimits(m.expr, m.source, meter, limits.maxNodes, diags)) m.expr = undefined;
    m.resolved = m.expr !== undefined;
  }
  let total = 0;
  const rules: ExpandedRule[] = [];
  for (const def of col.rules) {
    if (def.unknownSource) continue;
    const withExceptions = conditionWithExceptions(def.cond, def.exceptions);
    if (!withExceptions.ok) {
      diags.add('LOAD_ERR_VALIDATE', withExceptions.message, withExceptions.exception.ctx);
      continue;
    }
    const text = substituteLists(withExceptions.text, lists);
    const source: ConditionSource = { text, ctx: def.condCtx };
    const parsed = parse(source, diags, limits.maxConditionDepth);
    if (!parsed) continue;
    const expr = resolve(parsed, source, (name) => macros.get(name), diags, []);
    if (!expr || !withinLimits(expr, source, meter, limits.maxNodes, diags)) continue;
    const nodes = meter.size(expr).nodes;
    if (total + nodes > limits.maxTotalNodes) {
      const message = `the rules loaded so far and this one (${nodes} nodes) expand to more than the limit of ${limits.maxTotalNodes} nodes together; this rule is left out`;
      diags.add('RAE_ERR_EXPANSION_LIMIT', message, conditionLocation(source, 0));
      continue;
    }
    total += nodes;
    rules.push({ def, source, expr });
  }
  return { lists, macros, rules };
}

function parse(source: ConditionSource, diags: Diagnostics, maxDepth = MAX_CONDITION_DEPTH): Expr | undefined {
  const res = parseCondition(source.text.text, { maxDepth });
  if (!res.ok) {
    diags.add('LOAD_ERR_COMPILE_CONDITION', res.error.message, conditionLocation(source, res.error.offset));
    return undefined;
  }
  const undefinedList = bareListReference(res.expr);
  if (undefinedList) {
    // libsinsp would read `x in name` as the one-element list ("name"); Falco substitutes defined
    // lists first, so a bare name that survived is a list that does not exist: report it.
    diags.add('LOAD_ERR_VALIDATE', `Undefined list '${undefinedList.value}' used in filter.`, conditionLocation(source, undefinedList.span.start));
    return undefined;
  }
  return res.expr;
}

/** The first unquoted bare value written directly after a list operator (`in name`), if any. */
function bareListReference(expr: Expr): ValueNode | undefined {
  let found: ValueNode | undefined;
  walk(expr, (n) => {
    if (!found && n.kind === 'binary' && (LIST_OPS.has(n.op) || n.modifier) && n.right.kind === 'value' && !n.right.quoted) found = n.right;
  });
  return found;
}

/** A count for a message: exact, or a bound once past what a double holds exactly. */
function count(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : `more than ${Number.MAX_SAFE_INTEGER}`;
}

/** Reports (at the macro reference or node where it happens) a condition that expands past a limit. */
function withinLimits(expr: Expr, source: ConditionSource, meter: ExpansionMeter, maxNodes: number, diags: Diagnostics): boolean {
  const over = meter.excess(expr, maxNodes);
  if (!over) return true;
  const size = meter.size(expr);
  const here = over.macro ? ` (macro '${over.macro.name}' here expands to ${count(over.macro.size.nodes)} nodes, ${over.macro.size.depth} levels deep)` : '';
  const message =
    over.limit === 'nodes'
      ? `condition too large: it expands to ${count(size.nodes)} nodes, over the limit of ${maxNodes}${here}`
      : `condition too deep: it nests ${size.depth} levels once expanded, over the limit of ${MAX_EXPANDED_DEPTH}${here}`;
  diags.add('RAE_ERR_EXPANSION_LIMIT', message, conditionLocation(source, over.offset));
  return false;
}

/**
 * Replaces identifiers by `macro` nodes holding the macro's resolved tree. Returns undefined
 * (after reporting) on an undefined macro, a reference loop or a nesting past the depth limit.
 * A macro not yet resolved (visible through a later redefinition) is resolved here once per
 * call and shared by every reference, so this pass stays linear in the definitions' size.
 */
function resolve(expr: Expr, source: ConditionSource, lookup: (name: string) => ExpandedMacro | undefined, diags: Diagnostics, path: string[]): Expr | undefined {
  let failed = false;
  const fail = (node: IdentifierNode, message: string) => {
    if (!failed) diags.add('LOAD_ERR_VALIDATE', message, conditionLocation(source, node.span.start));
    failed = true;
  };
  const done = new Map<string, Expr>();
  // `level` is the expanded depth so far: it bounds the recursion through unresolved bodies.
  // `at` is the offset, in this condition's own text, of the reference being expanded.
  const visit = (e: Expr, stack: string[], level: number, at?: number): Expr => {
    if (level > MAX_EXPANDED_DEPTH) {
      const where = conditionLocation(source, at ?? e.span.start);
      if (!failed) diags.add('RAE_ERR_EXPANSION_LIMIT', `condition too deep: it nests more than ${MAX_EXPANDED_DEPTH} levels once expanded`, where);
      failed = true;
      return e;
    }
    switch (e.kind) {
      case 'and':
      case 'or':
        return { ...e, children: e.children.map((c) => visit(c, stack, level + 1, at)) };
      case 'not':
        return { ...e, child: visit(e.child, stack, level + 1, at) };
      case 'macro':
        return e; // made by this pass from a resolved body
      case 'identifier': {
        const m = lookup(e.name);
        if (!m?.expr) {
          fail(e, m ? `Macro '${e.name}' has an invalid condition` : `Undefined macro '${e.name}' used in filter.`);
          return e;
        }
        if (stack.includes(e.name)) {
          fail(e, `reference loop in macro '${e.name}'`);
          return e;
        }
        m.used = true;
        let body = m.resolved ? m.expr : done.get(e.name);
        if (!body) {
          body = visit(m.expr, [...stack, e.name], level + 1, at ?? e.span.start);
          done.set(e.name, body);
        }
        return { kind: 'macro', name: e.name, body, span: e.span };
      }
      default:
        return e;
    }
  };
  const out = visit(expr, path, 0);
  return failed ? undefined : out;
}
