// Bounds on what a load may hold, checked on the collected items before anything is parsed or
// expanded: how many rules, how many items one list has (appends included), and how long one
// condition is. Past a bound the load is invalid, with an error located at the first item over
// it (so an oversized set never replaces the running one). Consumes Collected; produces
// diagnostics. The defaults are safe for every upstream rule set many times over.
import type { Collected } from './collector.js';
import type { Diagnostics } from './diagnostics.js';
import { DEFAULT_MAX_DEPTH } from './parser.js';
import { REGEX_LIMITS } from './regex-syntax.js';

/** Bounds of one load (configuration: rules.maxRules, rules.maxListItems, rules.maxConditionBytes). */
export interface RulesBounds {
  /** Most rules of all files together. */
  maxRules: number;
  /** Most items of one list, its appends included. */
  maxListItems: number;
  /** Longest condition of one rule or macro, appends included, in UTF-8 bytes. */
  maxConditionBytes: number;
  /** Longest output template of one rule, appends included, in UTF-8 bytes. */
  maxOutputBytes: number;
  /** Deepest nesting of one condition as written (libsinsp's guard, the parser's DEFAULT_MAX_DEPTH). */
  maxConditionDepth: number;
  /** Longest `glob`/`iglob`/`pmatch` pattern, in UTF-8 bytes. */
  maxGlobBytes: number;
  /** A `regex` pattern's bounds (regex-syntax.ts REGEX_LIMITS): largest `{n,m}` count, atoms once expanded, nested groups. */
  maxRegexRepeat: number;
  maxRegexAtoms: number;
  maxRegexNesting: number;
}

/** Upstream Falco's largest set has about 100 rules, its longest list a few hundred items, its longest condition 2 KB. */
export const DEFAULT_RULES_BOUNDS: RulesBounds = {
  maxRules: 10_000,
  maxListItems: 100_000,
  maxConditionBytes: 1024 * 1024,
  maxOutputBytes: 64 * 1024,
  maxConditionDepth: DEFAULT_MAX_DEPTH,
  maxGlobBytes: 4096,
  maxRegexRepeat: REGEX_LIMITS.maxRepeat,
  maxRegexAtoms: REGEX_LIMITS.maxSize,
  maxRegexNesting: REGEX_LIMITS.maxDepth,
};

/** Adds one located error per bound passed (the first item past it). */
export function checkRulesBounds(c: Collected, bounds: Partial<RulesBounds>, diags: Diagnostics): void {
  const b = { ...DEFAULT_RULES_BOUNDS, ...bounds };
  if (c.rules.length > b.maxRules) {
    const r = c.rules[b.maxRules]!;
    diags.add('LOAD_ERR_VALIDATE', `more than rules.maxRules=${b.maxRules} rules (${c.rules.length}); rule '${r.name}' is past the bound`, r.ctx);
  }
  const list = c.lists.find((l) => l.items.length > b.maxListItems);
  if (list) diags.add('LOAD_ERR_VALIDATE', `list '${list.name}' has ${list.items.length} items, more than rules.maxListItems=${b.maxListItems}`, list.ctx);
  for (const item of [...c.macros, ...c.rules]) {
    const bytes = Buffer.byteLength(item.cond.text);
    if (bytes > b.maxConditionBytes) {
      diags.add('LOAD_ERR_VALIDATE', `condition of '${item.name}' is ${bytes} bytes, longer than rules.maxConditionBytes=${b.maxConditionBytes}`, item.condCtx);
      return; // one is enough to refuse the load; the rest would repeat it
    }
  }
  for (const rule of c.rules) {
    const bytes = Buffer.byteLength(rule.output.text);
    if (bytes > b.maxOutputBytes) {
      diags.add('LOAD_ERR_VALIDATE', `output of '${rule.name}' is ${bytes} bytes, longer than rules.maxOutputBytes=${b.maxOutputBytes}`, rule.outputCtx);
      return;
    }
  }
}
