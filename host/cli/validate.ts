// `rae validate`: loads rules files and prints their diagnostics, like `falco -V`. Exit 0 when
// every file is valid (warnings allowed), 1 when any is not, 2 for bad usage.
import { describeLoad, diagnosticJson, loadRules, renderDiagnostic } from '../engine/index.js';
import { parseCommandArgs, type Command } from './command.js';
import { LIST_FLAG_HELP, RULE_FLAG_HELP, RULE_FLAG_OPTIONS, rulesCommandStart, withListValue } from './rule-flags.js';
import { readRulesFiles } from '../config/rules-files.js';
import { expandLimitsOf, ruleSelection, SELECTION_FILE } from './run-config.js';

const HELP = `Usage: rae validate -r FILE [-r FILE ...] [-o KEY=VALUE ...] [-T TAG ...|-t TAG ...] [-D SUBSTRING ...] [--json] [--describe]
       rae validate --list[=SOURCE] [--json]

Loads the rules files in order (later files may append to or override earlier ones) and reports
every error and warning with its location: file:line:col, the context chain and a caret under
the source. Exit status: 0 valid (warnings allowed), 1 invalid, 2 bad usage.

Options:
  -r, --rules FILE   a rules file or a directory of *.yaml files (repeatable, required)
${RULE_FLAG_HELP}
                     (the rules.* keys apply: expansion bounds, the rule selection; the count
                     of enabled rules is on stderr)
${LIST_FLAG_HELP}
      --json         print the results as JSON ({"falco_load_results":[...]}, like falco -V)
      --describe     when every file is valid, also describe the rules as rae describe does
                     (with --json under "falco_describe_results", like falco -V FILE -L)
  -h, --help         show this help

Example:
  rae validate -r rules/syscall/falco_rules.yaml -r my_rules.yaml`;

export const validateCommand: Command = {
  name: 'validate',
  help: HELP,
  async run(argv) {
    const { values } = parseCommandArgs(withListValue(argv), { ...RULE_FLAG_OPTIONS, rules: { type: 'string', short: 'r', multiple: true }, json: { type: 'boolean' }, describe: { type: 'boolean' } });
    const start = rulesCommandStart('validate', values);
    if ('exit' in start) return start.exit;
    const { paths, config } = start;
    const { files, problems } = readRulesFiles(paths);
    for (const p of problems) process.stderr.write(`${p}\n`);
    // -T/-t/-D as rae run applies them: a generated last file of `enabled` overrides, not reported as a file
    const selection = ruleSelection(files, config.rules);
    const result = loadRules(selection ? [...files, selection] : files, { limits: expandLimitsOf(config) });
    const reported = result.files.filter((f) => f.name !== SELECTION_FILE);
    const successful = result.ok && problems.length === 0;
    // As validate_rules_files.cpp: the rules are described only when every file is valid.
    const described = values.describe && successful ? describeLoad(result) : undefined;
    if (values.json) {
      const out = {
        falco_load_results: reported.map((f) => ({
          name: f.name,
          successful: f.successful,
          errors: f.errors.map((d) => diagnosticJson(d, result.sources)),
          warnings: f.warnings.map((d) => diagnosticJson(d, result.sources)),
        })),
        ...(described ? { falco_describe_results: described } : {}),
      };
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    } else {
      for (const f of reported) {
        const status = !f.successful ? 'Invalid' : f.warnings.length > 0 ? 'Ok, with warnings' : 'Ok';
        process.stdout.write(`${f.name}: ${status}\n`);
        if (f.errors.length > 0) {
          process.stdout.write(`${f.errors.length} Errors:\n`);
          for (const d of f.errors) process.stdout.write(`${renderDiagnostic(d, result.sources)}\n`);
        }
        if (f.warnings.length > 0) {
          process.stdout.write(`${f.warnings.length} Warnings:\n`);
          for (const d of f.warnings) process.stdout.write(`${renderDiagnostic(d, result.sources)}\n`);
        }
      }
      const s = result.ruleset.stats;
      process.stderr.write(`validate: ${files.length} file(s), ${s.lists} lists, ${s.macros} macros, ${s.rules} rules (${result.ruleset.rules.length} compiled, ${s.enabled} enabled)\n`);
      if (described) process.stdout.write(`${JSON.stringify(described, null, 2)}\n`);
    }
    return successful ? 0 : 1;
  },
};
