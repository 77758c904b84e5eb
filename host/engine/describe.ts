// Describe: loaded rules described as Falco describes them (`falco -L` / `-l RULE` with
// json_output, falco:userspace/engine/falco_engine.cpp describe_rule / get_json_details): per
// rule the condition as written, the compiled condition after lists, macros and exceptions in
// libsinsp's as_string form, the output, priority, tags, source, enabled and event types; the
// macros and lists likewise; and, beside Falco's keys, the number of enabled rules.
// Consumes a LoadResult; produces the JSON object (`rae describe`, `rae validate --describe`,
// `rae run -l RULE --json`).
import { walk, type Expr, type Rhs, type TransformerArg } from './ast.js';
import type { ExceptionDef, ListDef, MacroDef, RuleDef } from './collector.js';
import type { LoadedRule, LoadResult } from './ruleset.js';
import { templateText } from './output-template.js';
import { parseCondition } from './parser.js';
import { printExpr } from './printer.js';

/** What Falco's filter_details_resolver finds in a condition (names sorted: Falco's sets have no order). */
interface ConditionDetails {
  fields: string[];
  operators: string[];
  macros: string[];
  lists: string[];
}

function conditionDetails(expr: Expr | undefined, knownMacros: ReadonlySet<string>, knownLists: ReadonlySet<string>): ConditionDetails {
  const fields = new Set<string>();
  const operators = new Set<string>();
  const macros = new Set<string>();
  const lists = new Set<string>();
  const operand = (o: TransformerArg): void => {
    if (o.kind === 'field') fields.add(o.arg === undefined ? o.name : `${o.name}[${o.arg}]`);
    else if (o.kind === 'transformer') o.args.forEach(operand);
    else if (o.kind === 'tr-list') o.items.forEach(operand);
  };
  const rhs = (r: Rhs): void => {
    if (r.kind === 'list') for (const v of r.values) if (knownLists.has(v.value)) lists.add(v.value);
    if (r.kind === 'val') fields.add(r.field.arg === undefined ? r.field.name : `${r.field.name}[${r.field.arg}]`);
    if (r.kind === 'transformer') operand(r);
  };
  if (expr) {
    walk(expr, (n) => {
      if (n.kind === 'identifier' && knownMacros.has(n.name)) macros.add(n.name);
      if (n.kind === 'macro') macros.add(n.name);
      if (n.kind === 'unary') {
        operators.add(n.op);
        operand(n.left);
      }
      if (n.kind === 'binary') {
        operators.add(n.modifier === undefined ? n.op : `${n.op} ${n.modifier}`);
        operand(n.left);
        rhs(n.right);
      }
    });
  }
  const sorted = (s: Set<string>) => [...s].sort();
  return { fields: sorted(fields), operators: sorted(operators), macros: sorted(macros), lists: sorted(lists) };
}

/** The condition as written, parsed without list substitution (as get_json_details does); undefined when it does not parse alone. */
function written(text: string): Expr | undefined {
  const r = parseCondition(text);
  return r.ok ? r.expr : undefined;
}

/** libsinsp event_set_to_names for a rule: its event types, plus the events every source also gets. */
function events(rule: LoadedRule): string[] {
  if (rule.source !== 'syscall') return ['asyncevent', 'pluginevent'];
  return [...new Set([...(rule.evttypes ?? []), 'asyncevent'])].sort();
}

function exceptionSummary(exceptions: readonly ExceptionDef[]): { names: string[]; fields: string[]; operators: string[] } {
  const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
  return {
    names: sorted(exceptions.map((e) => e.name)),
    fields: sorted(exceptions.flatMap((e) => e.fields.items)),
    operators: sorted(exceptions.flatMap((e) => e.comps.items)),
  };
}

/** One rule in Falco's layout: `info` as written (after appends), `details` as compiled. */
function ruleDescription(rule: LoadedRule, def: RuleDef, macros: ReadonlySet<string>, lists: ReadonlySet<string>) {
  const asWritten = conditionDetails(written(def.cond.text), macros, lists);
  const compiled = conditionDetails(rule.expanded, macros, lists);
  const ex = exceptionSummary(def.exceptions);
  return {
    info: {
      name: rule.name,
      condition: def.cond.text,
      priority: rule.priority,
      output: def.output.text,
      description: rule.desc,
      enabled: rule.enabled,
      source: rule.source,
      tags: rule.tags,
    },
    details: {
      macros: asWritten.macros,
      lists: asWritten.lists,
      condition_operators: compiled.operators,
      condition_fields: compiled.fields,
      output_fields: [...new Set(rule.output.flatMap((t) => (t.kind === 'field' ? [t.canonical] : [])))].sort(),
      exception_fields: ex.fields,
      exceptions: ex.names,
      exception_operators: ex.operators,
      events: events(rule),
      condition_compiled: printExpr(rule.expanded),
      output_compiled: templateText(rule.output),
      plugins: [] as string[],
    },
  };
}

function describeMacro(def: MacroDef, result: LoadResult, macros: ReadonlySet<string>, lists: ReadonlySet<string>) {
  const m = result.definitions.expanded.macros.get(def.name);
  const asWritten = conditionDetails(written(def.cond.text), macros, lists);
  const compiled = conditionDetails(m?.expr, macros, lists);
  return {
    info: { name: def.name, condition: def.cond.text },
    details: {
      used: m?.used ?? false,
      macros: asWritten.macros,
      lists: asWritten.lists,
      condition_operators: compiled.operators,
      condition_fields: compiled.fields,
      condition_compiled: m?.expr ? printExpr(m.expr) : '',
      plugins: [] as string[],
    },
  };
}

function describeList(def: ListDef, result: LoadResult, lists: ReadonlySet<string>) {
  const compiled = result.definitions.expanded.lists.find((l) => l.name === def.name);
  return {
    info: { name: def.name, items: def.items },
    details: {
      used: compiled?.used ?? false,
      lists: def.items.filter((i) => lists.has(i)),
      items_compiled: compiled?.items ?? def.items,
      plugins: [] as string[],
    },
  };
}

/**
 * Falco's describe_rule JSON for a load: every rule, macro and list, or only the rule named
 * (undefined when no loaded rule has that name). `enabled_rules` is ours: the count `falco`
 * logs at start.
 */
export function describeLoad(result: LoadResult, ruleName?: string): Record<string, unknown> | undefined {
  const { collected } = result.definitions;
  const macros = new Set(collected.macros.map((m) => m.name));
  const lists = new Set(collected.lists.map((l) => l.name));
  const defs = new Map(collected.rules.map((r) => [r.name, r]));
  const rules = result.ruleset.rules.filter((r) => ruleName === undefined || r.name === ruleName);
  const described = rules.map((r) => ruleDescription(r, defs.get(r.name)!, macros, lists));
  if (ruleName !== undefined) return described.length === 0 ? undefined : { rules: described };
  const version = collected.requiredEngineVersions.reduce((a, b) => (compareSemver(a, b) >= 0 ? a : b), '0.0.0');
  return {
    required_engine_version: version,
    required_plugin_versions: collected.requiredPlugins.map((p) => ({ name: p.name, version: p.version, alternatives: p.alternatives })),
    rules: described,
    macros: collected.macros.map((m) => describeMacro(m, result, macros, lists)),
    lists: collected.lists.map((l) => describeList(l, result, lists)),
    enabled_rules: result.ruleset.rules.filter((r) => r.enabled).length,
  };
}

function compareSemver(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}
