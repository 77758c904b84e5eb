// Built-in rule sets shipped in rules/, one folder per `builtInRulesList` value.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RulesFile } from './source-text.js';

/** The rules/ folder of this checkout. */
const RULES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'rules');

/** builtInRulesList values, in load order. */
export const BUILTIN_SETS = ['syscall', 'syscall-incubating', 'syscall-sandbox', 'orchestrator-audit'] as const;
export type BuiltinSet = (typeof BUILTIN_SETS)[number];

/** The default selection: the stable syscall rules and the orchestrator audit rules. */
export const DEFAULT_BUILTIN: readonly BuiltinSet[] = ['syscall', 'orchestrator-audit'];

/** Sets that need another set loaded first (their macros and lists live there). */
const NEEDS: Partial<Record<BuiltinSet, BuiltinSet>> = { 'syscall-incubating': 'syscall', 'syscall-sandbox': 'syscall' };

/** The rules files of the selected sets, in load order; unknown names are returned as errors. */
export function builtinRulesFiles(selected: readonly string[]): { files: RulesFile[]; unknown: string[] } {
  const unknown = selected.filter((s) => !(BUILTIN_SETS as readonly string[]).includes(s));
  const want = new Set(selected.filter((s): s is BuiltinSet => !unknown.includes(s)));
  for (const s of [...want]) if (NEEDS[s]) want.add(NEEDS[s]!);
  const files: RulesFile[] = [];
  for (const set of BUILTIN_SETS) {
    if (!want.has(set)) continue;
    const dir = join(RULES_DIR, set);
    for (const name of readdirSync(dir)
      .filter((n) => n.endsWith('.yaml'))
      .sort()) {
      files.push({ name: `rules/${set}/${name}`, text: readFileSync(join(dir, name), 'utf8') });
    }
  }
  return { files, unknown };
}
