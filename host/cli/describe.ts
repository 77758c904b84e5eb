// `rae describe`: the loaded rules as Falco describes them (host/engine/describe.ts), as JSON.
import { describeLoad, loadRules, renderDiagnostic } from '../engine/index.js';
import { parseCommandArgs, UsageError, type Command } from './command.js';
import { readRulesFiles } from '../config/rules-files.js';
import { fetchFigures, withFigures } from './rule-figures.js';

const HELP = `Usage: rae describe -r FILE [-r FILE ...] [--url URL] [RULE]

Loads the rules files in order and prints, as JSON in the layout of Falco's describe output
(falco -L / -l RULE with json_output), every rule, macro and list: the condition as written and
compiled (lists, macros and exceptions resolved, printed as libsinsp does), the output, priority,
tags, source, enabled flag and event types; and enabled_rules, the number of enabled rules.
With RULE, only that rule. Exit status: 0 described, 1 the rules have errors (printed on stderr)
or no loaded rule is named RULE, 2 bad usage.

Options:
  -r, --rules FILE   a rules file or a directory of *.yaml files (repeatable, required)
      --url URL      add each rule's figures from the running engine whose forwarder answers
                     there (e.g. http://127.0.0.1:2801): "figures": {evaluations, matches,
                     cost_seconds, cost_share} (docs/rule-cost.md)
  -h, --help         show this help

Example:
  rae describe -r rules/syscall/falco_rules.yaml 'Terminal shell in container'`;

export const describeCommand: Command = {
  name: 'describe',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, { rules: { type: 'string', short: 'r', multiple: true }, url: { type: 'string' } }, true);
    const paths = values.rules ?? [];
    if (paths.length === 0) throw new UsageError('at least one -r FILE is required');
    if (positionals.length > 1) throw new UsageError('at most one RULE may be named');
    const { files, problems } = readRulesFiles(paths);
    for (const p of problems) process.stderr.write(`${p}\n`);
    const result = loadRules(files);
    if (!result.ok || problems.length > 0) {
      // Falco describes only a load without errors (validate_rules_files.cpp).
      for (const d of result.diagnostics.filter((x) => x.severity === 'error')) process.stderr.write(`${renderDiagnostic(d, result.sources)}\n`);
      return 1;
    }
    const described = describeLoad(result, positionals[0]);
    if (!described) {
      process.stderr.write(`rae describe: Rule "${positionals[0]}" is not loaded\n`);
      return 1;
    }
    let doc = described;
    if (values.url !== undefined) {
      const got = await fetchFigures(values.url);
      if (!got.ok) {
        process.stderr.write(`rae describe: --url: ${got.message}\n`);
        return 1;
      }
      doc = withFigures(described, got.figures);
    }
    process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    return 0;
  },
};
