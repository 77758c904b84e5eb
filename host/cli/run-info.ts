// What `rae run` prints instead of running, as Falco's informational options do: --version, the
// fields of a source (--list), the event names (--list-events), every rule (-L) or one rule
// (-l RULE). Consumes the field tables, the event names and a loaded ruleset; writes to stdout.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describeLoad, ENGINE_VERSION, fieldTable, type LoadedRule, type LoadResult, printExpr, type RuleFigure, type RulesFile, type Source, SOURCES, templateText } from '../engine/index.js';
import { EVENT_NAMES } from '../abi/event-names.js';
import { withFigures } from './rule-figures.js';

const out = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

/** This engine's version (package.json) and the Falco rules engine version it accepts in required_engine_version. */
export function versionInfo(files: readonly RulesFile[] = []): { version: string; engine_version: string; rules_files_sha256: Record<string, string> } {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const rules_files_sha256 = Object.fromEntries(files.map((f) => [f.name, createHash('sha256').update(f.text).digest('hex')]));
  return { version: pkg.version, engine_version: ENGINE_VERSION, rules_files_sha256 };
}

/** --version: text like Falco's, or JSON. */
export function printVersion(json: boolean): void {
  const v = versionInfo();
  if (json) return out(JSON.stringify({ version: v.version, engine_version: v.engine_version }));
  out(`runtime-audit-engine version: ${v.version}\nEngine:                       ${v.engine_version} (highest required_engine_version accepted)`);
}

/** --list[=SOURCE]: every field of the source(s) with its type and description. Returns false for an unknown source. */
export function printFields(source: string, json: boolean): boolean {
  const sources = source === '' ? SOURCES : SOURCES.filter((s) => s === source);
  if (sources.length === 0) return false;
  const rows = sources.flatMap((s: Source) => fieldTable(s).map((f) => ({ source: s, name: f.name, type: f.type, isList: f.isList, arg: f.arg, desc: f.desc })));
  if (json) {
    out(JSON.stringify(rows));
    return true;
  }
  for (const s of sources) {
    out(`Source ${s}:`);
    for (const f of rows.filter((r) => r.source === s)) {
      const name = f.arg === 'none' ? f.name : `${f.name}[${f.arg === 'required' ? 'ARG' : '(ARG)'}]`;
      out(`  ${name.padEnd(30)} ${`${f.type}${f.isList ? ' (list)' : ''}`.padEnd(18)} ${f.desc}`);
    }
  }
  return true;
}

/** --list-events: the event type names `evt.type` may name, one a line. */
export function printEvents(): void {
  for (const name of [...EVENT_NAMES].sort()) out(name);
}

/** -L: every rule with its description. */
export function printRules(rules: readonly LoadedRule[], json: boolean): void {
  if (json) return out(JSON.stringify(rules.map((r) => ({ name: r.name, desc: r.desc, enabled: r.enabled, priority: r.priority, source: r.source, tags: r.tags }))));
  for (const r of rules) out(`${r.name}${r.enabled ? '' : ' (disabled)'}\n    ${r.desc.trim().replaceAll('\n', '\n    ')}`);
}

/** -l NAME: one rule in full; with --json in Falco's describe layout, as `rae describe RULE`; with a running engine's figures, the rule's (when it has any). */
export function describeRule(r: LoadedRule, json: boolean, result: LoadResult, figures?: readonly RuleFigure[]): void {
  if (json) {
    const doc = describeLoad(result, r.name)!;
    return out(JSON.stringify(figures ? withFigures(doc, figures) : doc));
  }
  const d = { name: r.name, desc: r.desc.trim(), condition: printExpr(r.expanded), output: templateText(r.output), priority: r.priority, tags: r.tags, source: r.source, enabled: r.enabled };
  const lines = [`Rule: ${d.name}`, `Description: ${d.desc}`, `Condition (macros expanded): ${d.condition}`, `Output: ${d.output}`, `Priority: ${d.priority}`, `Tags: ${d.tags.join(', ')}`, `Source: ${d.source}`, `Enabled: ${d.enabled}`];
  const f = figures?.find((x) => x.rule === r.name && x.source === r.source);
  if (f) {
    const total = figures!.reduce((s, x) => s + x.costSeconds, 0);
    lines.push(`Evaluations: ${f.evaluations}`, `Matches: ${f.matches}`, `Cost: ${f.costSeconds.toPrecision(3)} s (${total > 0 ? ((f.costSeconds / total) * 100).toFixed(1) : '0.0'}% of the rules' cost)`);
  }
  out(lines.join('\n'));
}
