// What `rae run` checks in a configuration beyond its shape, and the rules files it names: used
// at start (a problem stops the start) and by a SIGHUP reload (a problem keeps the running
// configuration). Consumes a Config; produces problems as log lines, or the rules files.
import type { Config } from '../config/config.js';
import { BUILTIN_SETS, builtinRulesFiles } from '../engine/builtin.js';
import type { RulesFile } from '../engine/index.js';
import { parsePriority, type Priority } from '../engine/priority.js';
import { readRulesFiles } from './rules-files.js';

/** The checked values `rae run` uses, or the problems (one message per key). */
export function checkRunConfig(config: Config): { ok: true; minPriority: Priority } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const minPriority = parsePriority(config.rules.minPriority);
  if (!minPriority) problems.push(`config rules.minPriority: unknown priority '${config.rules.minPriority}'`);
  const seconds = (key: string, v: number, zero: string) => {
    if (!Number.isFinite(v) || v < 0) problems.push(`config ${key}: expected a number of seconds, 0 or more (${zero}), not ${v}`);
  };
  seconds('rules.compilerIdleSeconds', config.rules.compilerIdleSeconds, '0 keeps the compile worker running');
  seconds('webhook.drainTimeoutSeconds', config.webhook.drainTimeoutSeconds, '0 stops without waiting for accepted events');
  const bounds: Array<[string, number]> = [
    ['rules.maxExpandedNodes', config.rules.maxExpandedNodes],
    ['rules.maxExpandedNodesTotal', config.rules.maxExpandedNodesTotal],
    ['resources.maxFiles', config.resources.maxFiles],
    ['resources.maxFileBytes', config.resources.maxFileBytes],
  ];
  for (const [key, value] of bounds) {
    if (!Number.isSafeInteger(value) || value < 1) problems.push(`config ${key}: expected a whole number, 1 or more, not ${value}`);
  }
  for (const key of ['compileTimeoutSeconds', 'compileWorkerHeapMb', 'maxConditionNodes'] as const) {
    const v = config.rules[key];
    if (!Number.isFinite(v) || v < 0 || (key === 'compileWorkerHeapMb' && v < 64)) {
      problems.push(`config rules.${key}: expected a number, ${key === 'compileWorkerHeapMb' ? '64 or more' : '0 or more (0: no limit)'}, not ${v}`);
    }
  }
  return problems.length > 0 || !minPriority ? { ok: false, problems } : { ok: true, minPriority };
}

/** The configured rules files (loaded after the built-in sets), or the problems reading them. */
export function configuredRulesFiles(config: Config): { ok: true; files: RulesFile[] } | { ok: false; problems: string[] } {
  const builtin = builtinRulesFiles(config.rules.builtIn);
  if (builtin.unknown.length > 0) return { ok: false, problems: [`unknown built-in rule set(s): ${builtin.unknown.join(', ')} (known: ${BUILTIN_SETS.join(', ')})`] };
  const extra = readRulesFiles(config.rules.files);
  return extra.problems.length > 0 ? { ok: false, problems: extra.problems } : { ok: true, files: extra.files };
}
