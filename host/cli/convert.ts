// `rae convert`: a Falco rules file to an EngineAuditRules manifest on stdout (the module's
// far-converter, reference/module-and-forwarder.md §3). Notes and errors go to stderr, located;
// exit 1 when anything cannot be converted (no partial manifest is printed).
import { readFileSync } from 'node:fs';
import { renderDiagnostic } from '../engine/index.js';
import { convertRulesFile } from '../resources/convert.js';
import { parseCommandArgs, UsageError, type Command } from './command.js';

const HELP = `Usage: rae convert -input FILE [--name NAME] [--api-group GROUP]

Converts a Falco rules file (a list of macro, list and rule items) into an EngineAuditRules
manifest, printed on stdout; drop it into the resources directory of 'rae run' to load it.

  - metadata.name is the file's base name up to the first dot, as a DNS-1123 name
    (rule_example.yaml -> rule-example), unless --name is given;
  - priorities become the resource's names: CRITICAL -> Critical, INFO and INFORMATIONAL ->
    Informational; conditions, outputs, descriptions, tags and enabled (true or false) are kept;
    source k8s_audit -> K8sAudit, syscall -> Syscall;
  - required_engine_version and required_plugin_versions are skipped, with a note on stderr;
  - items the resource cannot express (append/override, exceptions, rules that only change an
    existing rule, other sources, unknown keys) are errors: each is reported with its location
    and the exit status is 1.

Options:
  -input, --input FILE    the Falco rules file ('-' for standard input; required)
      --name NAME         metadata.name of the resource
      --api-group GROUP   apiVersion group (default: deckhouse.io -> deckhouse.io/v1alpha1)
  -h, --help              show this help

Example:
  rae convert -input rule_example.yaml > rule-example.yaml`;

/** Go-style single-dash long options (`-input`, as the upstream tool takes) as double-dash ones. */
function normalize(argv: string[]): string[] {
  return argv.map((a) => a.replace(/^-(input|name|api-group)(=|$)/, '--$1$2'));
}

export const convertCommand: Command = {
  name: 'convert',
  help: HELP,
  async run(argv) {
    const { values } = parseCommandArgs(normalize(argv), { input: { type: 'string' }, name: { type: 'string' }, 'api-group': { type: 'string' } });
    const input = values.input;
    if (input === undefined || input === '') throw new UsageError('-input FILE is required');
    let text: string;
    try {
      text = readFileSync(input === '-' ? 0 : input, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'a directory, not a rules file' : e.message;
      process.stderr.write(`convert: cannot read ${input}: ${why}\n`);
      return 1;
    }
    const name = input === '-' ? '<stdin>' : input;
    process.stderr.write(`convert: converting rules from ${JSON.stringify(name)}\n`);
    const r = convertRulesFile(name, text, { apiGroup: values['api-group'] ?? 'deckhouse.io', resourceName: values.name });
    const lookup = (n: string) => (n === r.src.name ? r.src : undefined);
    for (const n of r.notes) process.stderr.write(`${n.location.position.name}:${n.location.position.line}:${n.location.position.column}: note: ${n.message}\n`);
    for (const d of r.diagnostics) process.stderr.write(`${renderDiagnostic(d, lookup)}\n`);
    if (!r.ok) {
      const errors = r.diagnostics.filter((d) => d.severity === 'error').length;
      process.stderr.write(`convert: ${errors} error(s); no manifest written\n`);
      return 1;
    }
    process.stdout.write(r.manifest!);
    return 0;
  },
};
