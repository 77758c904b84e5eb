// Test helpers: load inline YAML rules and look things up in the result.
import { renderDiagnostic } from '../../host/engine/diagnostics.js';
import { loadRules, type LoadResult } from '../../host/engine/index.js';

/** Loads one inline rules file named `rules.yaml`. */
export function load(yaml: string, options: { suggestedOutput?: boolean } = { suggestedOutput: false }): LoadResult {
  return loadRules([{ name: 'rules.yaml', text: yaml }], options);
}

/** The rendered text of every error of a load. */
export function errors(r: LoadResult): string[] {
  return r.diagnostics.filter((d) => d.severity === 'error').map((d) => renderDiagnostic(d, r.sources));
}

/** The first line of each diagnostic: `file:line:col: severity CODE (desc): message`. */
export function headlines(r: LoadResult): string[] {
  return r.diagnostics.map((d) => renderDiagnostic(d, r.sources).split('\n')[0]!);
}

/** falco unit_tests/engine/test_rule_loader.cpp s_exception_values_rule_base: a rule the exception cases append `exceptions:` to. */
export const EXCEPTION_RULE_BASE = `
- rule: test_rule
  desc: test rule
  condition: evt.type = open
  output: command=%proc.cmdline
  priority: INFO
`;
