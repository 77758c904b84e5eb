// Which built-in set each rule comes from, read from rules/: the stable syscall set (`syscall`)
// and the orchestrator audit set are `stable`, `syscall-incubating` is `incubating` and
// `syscall-sandbox` is `sandbox`, as falcosecurity/rules names its maturity levels. Upstream's
// event-generator runs only the actions of stable rules unless given --all (an action of another
// set is registered with events.WithDisabled(), falcosecurity/event-generator events/options.go);
// `enabled` says whether the rule is on when its set is loaded (some sandbox rules are
// `enabled: false` and fire only once a rules file enables them).
import { parse as parseYaml } from 'yaml';
import { BUILTIN_SETS, builtinRulesFiles, type BuiltinSet } from '../engine/index.js';

/** The maturity of a rule, as falcosecurity/rules names it. */
export type RuleMaturity = 'stable' | 'incubating' | 'sandbox';

/** Where a rule is defined and whether it is enabled there. */
export interface RuleOrigin {
  maturity: RuleMaturity;
  /** The built-in set (folder of rules/) that defines the rule. */
  set: BuiltinSet;
  enabled: boolean;
}

const MATURITY: Record<BuiltinSet, RuleMaturity> = { syscall: 'stable', 'syscall-incubating': 'incubating', 'syscall-sandbox': 'sandbox', 'orchestrator-audit': 'stable' };

let origins: Map<string, RuleOrigin> | undefined;

/** Every rule of every built-in set by name (the first set that defines it), read once. */
function ruleOrigins(): ReadonlyMap<string, RuleOrigin> {
  if (origins) return origins;
  const found = new Map<string, RuleOrigin>();
  for (const set of BUILTIN_SETS) {
    // Each set's own files only (builtinRulesFiles adds the sets it needs; those are read on their own turn).
    for (const file of builtinRulesFiles([set]).files.filter((f) => f.name.startsWith(`rules/${set}/`))) {
      const items = parseYaml(file.text) as Array<Record<string, unknown>> | null;
      for (const item of items ?? []) {
        if (typeof item?.rule !== 'string' || found.has(item.rule)) continue;
        found.set(item.rule, { maturity: MATURITY[set], set, enabled: item.enabled !== false });
      }
    }
  }
  origins = found;
  return found;
}

/** The items of a list of the built-in syscall sets (the first set that defines it; appends are not followed). */
export function builtinList(name: string): string[] {
  for (const set of BUILTIN_SETS) {
    for (const file of builtinRulesFiles([set]).files.filter((f) => f.name.startsWith(`rules/${set}/`))) {
      const items = parseYaml(file.text) as Array<Record<string, unknown>> | null;
      const found = (items ?? []).find((i) => i?.list === name);
      if (found && Array.isArray(found.items)) return found.items.map(String);
    }
  }
  return [];
}

/** The origin of `rule`, or undefined when no built-in set defines it. */
export function ruleOrigin(rule: string): RuleOrigin | undefined {
  return ruleOrigins().get(rule);
}
