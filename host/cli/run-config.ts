// What `rae run` checks in a configuration beyond its shape, and the rules files it names: used
// at start (a problem stops the start) and by a SIGHUP reload (a problem keeps the running
// configuration). Consumes a Config; produces problems as log lines, or the rules files.
import { BUILTIN_SETS, builtinRulesFiles, type ExpandLimits, loadRules, type RulesBounds, type RulesFile } from '../engine/index.js';
import { LOG_LEVELS, type Config } from '../config/config.js';
import { parsePriority, type Priority } from '../engine/priority.js';
import { selectionProblem } from './rule-flags.js';
import { readRulesFiles } from '../config/rules-files.js';

/** The checked values `rae run` uses, or the problems (one message per key). */
function checkRunConfig(config: Config): { ok: true; minPriority: Priority } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const minPriority = parsePriority(config.rules.minPriority);
  if (!minPriority) problems.push(`config rules.minPriority: unknown priority '${config.rules.minPriority}'`);
  const seconds = (key: string, v: number, zero: string) => {
    if (!Number.isFinite(v) || v < 0) problems.push(`config ${key}: expected a number of seconds, 0 or more (${zero}), not ${v}`);
  };
  seconds('rules.compilerIdleSeconds', config.rules.compilerIdleSeconds, '0 keeps the compile worker running');
  if (!(LOG_LEVELS as readonly string[]).includes(config.logLevel)) problems.push(`config logLevel: expected one of ${LOG_LEVELS.join(', ')}, not '${config.logLevel}'`);
  const selection = selectionProblem(config);
  if (selection) problems.push(selection);
  seconds('webhook.drainTimeoutSeconds', config.webhook.drainTimeoutSeconds, '0 stops without waiting for accepted events');
  seconds('resources.apiSyncTimeoutSeconds', config.resources.apiSyncTimeoutSeconds, '0 starts without waiting for the API');
  const bounds: Array<[string, number]> = [
    ['rules.maxExpandedNodes', config.rules.maxExpandedNodes],
    ['rules.maxExpandedNodesTotal', config.rules.maxExpandedNodesTotal],
    ['resources.maxFiles', config.resources.maxFiles],
    ['resources.maxFileBytes', config.resources.maxFileBytes],
  ];
  for (const [key, value] of bounds) {
    if (!Number.isSafeInteger(value) || value < 1) problems.push(`config ${key}: expected a whole number, 1 or more, not ${value}`);
  }
  for (const key of ['compileTimeoutSeconds', 'compileWorkerHeapMb'] as const) {
    const v = config.rules[key];
    if (!Number.isFinite(v) || v < 0 || (key === 'compileWorkerHeapMb' && v < 64)) {
      problems.push(`config rules.${key}: expected a number, ${key === 'compileWorkerHeapMb' ? '64 or more' : '0 or more (0: no limit)'}, not ${v}`);
    }
  }
  return problems.length > 0 || !minPriority ? { ok: false, problems } : { ok: true, minPriority };
}

/** Everything `rae run` (start, SIGHUP, --dry-run) checks before loading: the configuration's values and its rules files. */
export function checkRun(config: Config): { ok: true; minPriority: Priority; files: RulesFile[] } | { ok: false; problems: string[] } {
  const checked = checkRunConfig(config);
  const rules = configuredRulesFiles(config);
  if (checked.ok && rules.ok) return { ok: true, minPriority: checked.minPriority, files: rules.files };
  return { ok: false, problems: [...(checked.ok ? [] : checked.problems), ...(rules.ok ? [] : rules.problems)] };
}

/** The bounds of macro expansion a configuration sets (rules.maxExpandedNodes, rules.maxExpandedNodesTotal). */
export function expandLimitsOf(config: Config): ExpandLimits & RulesBounds {
  // the load bounds ride along: every path that passes these to loadRules (the engine's too) enforces them
  const { maxRules, maxListItems, maxConditionBytes, maxOutputBytes, maxConditionDepth, maxGlobBytes, maxRegexRepeat, maxRegexAtoms, maxRegexNesting } = config.rules;
  return {
    maxNodes: config.rules.maxExpandedNodes,
    maxTotalNodes: config.rules.maxExpandedNodesTotal,
    maxRules,
    maxListItems,
    maxConditionBytes,
    maxOutputBytes,
    maxConditionDepth,
    maxGlobBytes,
    maxRegexRepeat,
    maxRegexAtoms,
    maxRegexNesting,
  };
}

/** The configured rules files (loaded after the built-in sets), or the problems reading them. */
function configuredRulesFiles(config: Config): { ok: true; files: RulesFile[] } | { ok: false; problems: string[] } {
  const builtin = builtinRulesFiles(config.rules.builtIn);
  if (builtin.unknown.length > 0) return { ok: false, problems: [`unknown built-in rule set(s): ${builtin.unknown.join(', ')} (known: ${BUILTIN_SETS.join(', ')})`] };
  const extra = readRulesFiles(config.rules.files);
  if (extra.problems.length > 0) return { ok: false, problems: extra.problems };
  const selection = ruleSelection([...builtin.files, ...extra.files], config.rules);
  return { ok: true, files: selection ? [...extra.files, selection] : extra.files };
}

/** The name of the generated last rules file that applies -T/-t/-D. */
export const SELECTION_FILE = '(rule selection: rules.disableTags/enableTags/disableNames)';

/**
 * Falco's -T TAG (disable rules with the tag), -t TAG (enable only rules with the tag, enabling
 * them even when a file disabled them) and -D SUBSTRING (disable rules whose name contains it,
 * applied after -t), as a generated rules file of `enabled` overrides loaded after every other
 * file; undefined when no selection is configured.
 */
export function ruleSelection(files: readonly RulesFile[], sel: Config['rules']): RulesFile | undefined {
  if (sel.disableTags.length + sel.enableTags.length + sel.disableNames.length === 0) return undefined;
  const lines: string[] = [];
  for (const rule of loadRules(files).ruleset.rules) {
    let enabled = rule.enabled;
    if (sel.enableTags.length > 0) enabled = rule.tags.some((t) => sel.enableTags.includes(t));
    if (rule.tags.some((t) => sel.disableTags.includes(t))) enabled = false;
    if (sel.disableNames.some((n) => rule.name.includes(n))) enabled = false;
    if (enabled !== rule.enabled) lines.push(`- rule: ${JSON.stringify(rule.name)}`, `  enabled: ${enabled}`, '  override:', '    enabled: replace');
  }
  return { name: SELECTION_FILE, text: lines.length > 0 ? `${lines.join('\n')}\n` : '[]\n' };
}
