// Engine facade: rules files to a loaded ruleset through the named stages
//   reader -> collector -> expand (lists, exceptions, parse, macros) -> checker -> evttypes -> outputs
// Every stage appends to one Diagnostics; a rule that fails is reported and left out, the rest
// load. A file with any error is invalid, and an invalid set must not replace a running one.
// The checker also asks the code generator about each leaf (codegen leafLimit): a leaf the
// compiled evaluator cannot run fails its rule here (RAE_ERR_UNSUPPORTED, located), for both
// engines, so a valid ruleset always compiles and none is left on the reference interpreter.
import { checkRulesBounds, DEFAULT_RULES_BOUNDS, type RulesBounds } from './rules-bounds.js';
import type { Expr } from './ast.js';
import { checkCondition } from './checker.js';
import { leafLimit } from './codegen/index.js';
import { collect, type Collected, type RuleDef } from './collector.js';
import { Diagnostics, diagnosticFile, type Diagnostic, type Location } from './diagnostics.js';
import { DEFAULT_EXPAND_LIMITS, type ExpandLimits } from './budget.js';
import { conditionLocation, expand, type ConditionSource, type Expanded } from './expand.js';
import { ruleEvttypes } from './evttypes.js';
import type { Source } from './fields.js';
import { DEPRECATED_FIELDS, suggestedOutput } from './fields.js';
import { parseOutput } from './output-template.js';
import { readRulesFile, type RulesItem } from './reader.js';
import type { FileResult, LoadedRule, LoadOptions, LoadResult } from './ruleset.js';
import { SourceText, type RulesFile } from './source-text.js';

// The engine's public surface: the layers above import these from here, never another file of
// host/engine/ (test/layers.test.ts; the code generator, codegen/index.ts, and the priority
// levels, priority.ts, are the named exceptions).
export type { LoadedRule, LoadOptions, LoadResult } from './ruleset.js';
export { DEFAULT_EXPAND_LIMITS, type ExpandLimits } from './budget.js';
export { BUILTIN_SETS, builtinRulesFiles, type BuiltinSet } from './builtin.js';
export { ENGINE_VERSION } from './collector.js';
export { describeLoad } from './describe.js';
export { diagnostic, diagnosticJson, Diagnostics, renderDiagnostic, type Diagnostic, type ItemType, type Location, type SourceLookup } from './diagnostics.js';
export { FieldEvent } from './field-event.js';
export { fieldTable, lookupField, SOURCES, typeClass, type Source } from './fields.js';
export { BoundField } from './field-reader.js';
export type { EventAccessor, EventBytes, FieldRead, FieldReaders, RawScalar, RawValue, TextCopy } from './interpreter.js';
export { TEXT_COPY } from './interpreter.js';
export { walkChecked, type FieldRef, type Operand } from './ir.js';
export { parseIp, truncInt } from './literals.js';
export { MappedText } from './mapped-text.js';
export { RuleMatcher, type RuleMatching } from './matcher.js';
export { rankByCost, RuleStats, type RuleFigure } from './rule-stats.js';
export { parseOutput, templateText, type OutputToken } from './output-template.js';
export { HARD_MAX_DEPTH } from './parser.js';
export { printExpr } from './printer.js';
export { decodeRaw, encodeRaw, hasRawBytes, utf8Sanitized } from './raw-text.js';
export { readRulesFile, type RulesItem } from './reader.js';
export { REGEX_HARD_LIMITS } from './regex-syntax.js';
export { DEFAULT_RULES_BOUNDS, type RulesBounds } from './rules-bounds.js';
export type { SourceEvent } from './source-event.js';
export { SourceText, type RulesFile } from './source-text.js';

/** Loads rules files, in order, into one ruleset. Never throws on bad input. */
export function loadRules(files: readonly RulesFile[], options: LoadOptions = {}): LoadResult {
  const diags = new Diagnostics();
  const texts = new Map<string, SourceText>();
  const items: RulesItem[] = [];
  for (const f of files) {
    const src = new SourceText(f.name, f.text);
    texts.set(f.name, src);
    items.push(...readRulesFile(src, diags));
  }
  const collected = collect(items, diags);
  checkRulesBounds(collected, options.limits ?? {}, diags);
  const limits: ExpandLimits = {
    maxNodes: options.limits?.maxNodes ?? DEFAULT_EXPAND_LIMITS.maxNodes,
    maxTotalNodes: options.limits?.maxTotalNodes ?? DEFAULT_EXPAND_LIMITS.maxTotalNodes,
    maxConditionDepth: options.limits?.maxConditionDepth,
  };
  const expanded = expand(collected, diags, limits);
  const rules: LoadedRule[] = [];
  for (const r of expanded.rules) {
    const loaded = compileRule(r.def, r.source, r.expr, expanded, diags, options);
    if (loaded) rules.push(loaded);
  }
  const reportedIn = reportingFiles(files, collected);
  unusedWarnings(expanded, diags, files, reportedIn);
  const diagnostics = sortByPosition(diags.items, files, reportedIn);
  const fileResults = files.map((f): FileResult => {
    const mine = diagnostics.filter((d) => reportedIn(d) === f.name);
    const errors = mine.filter((d) => d.severity === 'error');
    return { name: f.name, successful: errors.length === 0, errors, warnings: mine.filter((d) => d.severity === 'warning') };
  });
  return {
    ok: !diags.hasErrors(),
    files: fileResults,
    diagnostics,
    ruleset: {
      rules,
      stats: { lists: collected.lists.length, macros: collected.macros.length, rules: collected.rules.length, enabled: rules.filter((r) => r.enabled).length },
      requiredPlugins: collected.requiredPlugins.map((p) => ({ name: p.name, version: p.version })),
    },
    sources: (name) => texts.get(name),
    definitions: { collected, expanded },
  };
}

function compileRule(def: RuleDef, source: ConditionSource, expr: Expr, expanded: Expanded, diags: Diagnostics, options: LoadOptions): LoadedRule | undefined {
  const bound = (key: keyof RulesBounds): number => options.limits?.[key] ?? DEFAULT_RULES_BOUNDS[key];
  const src = def.source as Source;
  // Output first, as Falco does: an invalid output fails the rule before its condition.
  let outputText = def.output.text;
  if (outputText.includes('%container.info')) {
    diags.add('LOAD_DEPRECATED_ITEM', '%container.info is deprecated and no more useful, and will be dropped by Falco 1.0.0. The container plugin will automatically add required fields to the output message.', def.ctx);
    outputText = outputText.replaceAll('%container.info', '');
  }
  if (options.suggestedOutput !== false && src === 'syscall') outputText += suggestedOutput(src);
  const out = parseOutput(src, outputText);
  const outputCtx = (offset: number): Location[] => [...def.outputCtx, { itemType: 'rule output expression', itemName: '', position: def.output.position(Math.min(offset, def.output.text.length)) }];
  if (!out.ok) {
    const unknown = out.message.startsWith('unknown filter') || out.message.includes('nonexistent field');
    diags.add(unknown && def.skipIfUnknownFilter ? 'LOAD_UNKNOWN_FILTER' : 'LOAD_ERR_COMPILE_OUTPUT', out.message, outputCtx(out.offset));
    return undefined;
  }
  // Falco's check_deprecated_fields_in_output: a plain search of the output text.
  for (const name of DEPRECATED_FIELDS) {
    if (outputText.includes(name)) diags.add('LOAD_DEPRECATED_ITEM', `usage of deprecated field '${name}' has been detected in the rule output`, def.outputCtx);
  }
  const condition = checkCondition(
    expr,
    {
      source: src,
      locate: (offset) => conditionLocation(source, offset),
      locateInMacro: (name, offset) => {
        const m = expanded.macros.get(name)!;
        return [...source.ctx, ...conditionLocation(m.source, offset).slice(1)];
      },
      leafLimit,
      regexLimits: { maxRepeat: bound('maxRegexRepeat'), maxSize: bound('maxRegexAtoms'), maxDepth: bound('maxRegexNesting') },
      maxGlobBytes: bound('maxGlobBytes'),
    },
    diags,
    def.skipIfUnknownFilter,
  );
  if (!condition) return undefined;
  let evttypes: Set<string> | undefined;
  if (src === 'syscall') {
    const et = ruleEvttypes(expr);
    if (!et.ok) {
      diags.add('LOAD_ERR_COMPILE_CONDITION', et.message, conditionLocation(source, et.offset));
      return undefined;
    }
    evttypes = et.names;
    if (et.names.size > 100 && def.warnEvttypes) {
      diags.add('LOAD_NO_EVTTYPE', 'Rule matches too many evt.type values. This has a significant performance penalty.', def.ctx);
    }
  }
  return {
    index: def.index,
    name: def.name,
    desc: def.desc,
    priority: def.priority,
    source: src,
    enabled: def.enabled,
    tags: def.tags,
    expanded: expr,
    condition,
    evttypes,
    output: out.tokens,
  };
}

/**
 * The file whose load reports a diagnostic, as Falco's per-file results do: Falco loads the files
 * in order into one collection and compiles everything after each file, so a problem belongs to
 * the first load where it appears, the latest file that contributed to it. That is the latest of
 * the files named in its location chain and of the files that last changed (appended to,
 * overrode) the list, macro or rule it is located in: a rule of file A broken by an append in
 * file B is B's problem.
 */
function reportingFiles(files: readonly RulesFile[], collected: Collected): (d: Diagnostic) => string | undefined {
  const fileIndex = new Map(files.map((f, i) => [f.name, i]));
  const lastChange = new Map<Location, string>();
  for (const def of [...collected.lists, ...collected.macros, ...collected.rules]) {
    if (def.ctx[1]) lastChange.set(def.ctx[1], def.file);
  }
  const memo = new Map<Diagnostic, string | undefined>();
  return (d) => {
    if (memo.has(d)) return memo.get(d);
    let best = diagnosticFile(d);
    const consider = (name: string | undefined) => {
      if (name !== undefined && (fileIndex.get(name) ?? -1) > (fileIndex.get(best ?? '') ?? -1)) best = name;
    };
    for (const loc of d.locations) {
      consider(loc.position.name);
      consider(lastChange.get(loc));
    }
    memo.set(d, best);
    return best;
  };
}

/** Diagnostics in the order of the files reporting them, then by position of their most specific location (stable). */
function sortByPosition(items: Diagnostic[], files: readonly RulesFile[], reportedIn: (d: Diagnostic) => string | undefined): Diagnostic[] {
  const fileIndex = new Map(files.map((f, i) => [f.name, i]));
  const key = (d: Diagnostic) => [fileIndex.get(reportedIn(d) ?? '') ?? files.length, d.locations.at(-1)?.position.offset ?? 0] as const;
  return items
    .map((d, i) => ({ d, i, k: key(d) }))
    .sort((a, b) => a.k[0] - b.k[0] || a.k[1] - b.k[1] || a.i - b.i)
    .map((x) => x.d);
}

/**
 * LOAD_UNUSED_MACRO / LOAD_UNUSED_LIST, reported by the file that last changed the definition.
 * Falco gives them only when the load of that file compiled without error, and a compile sees
 * every file loaded so far: so they are left out when that file or an earlier one has an error.
 */
function unusedWarnings(expanded: Expanded, diags: Diagnostics, files: readonly RulesFile[], reportedIn: (d: Diagnostic) => string | undefined): void {
  const fileIndex = new Map(files.map((f, i) => [f.name, i]));
  let firstFailed = files.length;
  for (const d of diags.errors) firstFailed = Math.min(firstFailed, fileIndex.get(reportedIn(d) ?? '') ?? files.length);
  const clean = (file: string) => (fileIndex.get(file) ?? files.length) < firstFailed;
  for (const m of expanded.macros.values()) {
    if (!m.used && clean(m.def.file)) diags.add('LOAD_UNUSED_MACRO', 'Macro not referred to by any other rule/macro', m.def.ctx);
  }
  for (const l of expanded.lists) {
    if (!l.used && clean(l.def.file)) diags.add('LOAD_UNUSED_LIST', 'List not referred to by any other rule/macro', l.def.ctx);
  }
}
