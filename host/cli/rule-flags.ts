// Falco's rule-selection and configuration flags, shared by `rae run`, `rae validate` and `rae
// replay`: -o KEY=VALUE, -T/-t/-D and --list[=SOURCE], their parseArgs options, their help lines,
// and the -o overrides they stand for. Consumes parsed argv values; produces config overrides.
import { loadConfig, type Config } from '../config/config.js';
import { UsageError } from './command.js';
import { printFields } from './run-info.js';

/** parseArgs options of the shared flags. */
export const RULE_FLAG_OPTIONS = {
  option: { type: 'string', short: 'o', multiple: true },
  'disable-tag': { type: 'string', short: 'T', multiple: true },
  'enable-tag': { type: 'string', short: 't', multiple: true },
  'disable-rule': { type: 'string', short: 'D', multiple: true },
  list: { type: 'string' },
} as const;

/** The help lines of -o, -T, -t and -D. */
export const RULE_FLAG_HELP = `  -o, --option KEY=VALUE  set one configuration key by its dotted path (repeatable), typed by
                        the key: numbers, true/false, lists as [a,b] or the key given again;
                        e.g. -o forwarder.port=2802 -o rules.builtIn=[syscall]
  -T, --disable-tag TAG disable the rules with this tag (repeatable; rules.disableTags)
  -t, --enable-tag TAG  enable only the rules with this tag (repeatable; rules.enableTags;
                        not with -T)
  -D, --disable-rule SUBSTRING  disable the rules whose name contains it (repeatable;
                        rules.disableNames)`;

/** The help line of --list. */
export const LIST_FLAG_HELP = '      --list[=SOURCE]   print the fields of every source, or of syscall or k8s_audit';

/** Falco's --list takes an optional =SOURCE; parseArgs needs a value, so a bare --list becomes --list=. */
export function withListValue(argv: readonly string[]): string[] {
  return argv.map((a) => (a === '--list' ? '--list=' : a));
}

/** Values of the shared flags as parseArgs returns them. */
export interface RuleFlagValues {
  option?: string[];
  'disable-tag'?: string[];
  'enable-tag'?: string[];
  'disable-rule'?: string[];
}

/** The flags as -o options of their keys (a list key given again appends), then the -o options; `rules`: run's -r. */
function flagOverrides(values: RuleFlagValues, rules?: string[]): string[] {
  const flagged = (key: string, list: string[] | undefined) => (list ?? []).map((v) => `${key}=${v}`);
  return [...flagged('rules.files', rules), ...flagged('rules.disableTags', values['disable-tag']), ...flagged('rules.enableTags', values['enable-tag']), ...flagged('rules.disableNames', values['disable-rule']), ...(values.option ?? [])];
}

/** The rule-selection conflict Falco refuses too, or undefined. */
export function selectionProblem(config: Config): string | undefined {
  if (config.rules.enableTags.length > 0 && config.rules.disableTags.length > 0) return 'config rules.enableTags (-t) and rules.disableTags (-T) cannot both be set (as in Falco)';
  return undefined;
}

/** The default configuration with the flags applied (validate, replay: no configuration file, no environment overrides), or the problems as lines. */
function configFromFlags(values: RuleFlagValues): { ok: true; config: Config } | { ok: false; problems: string[] } {
  const { config, problems } = loadConfig(undefined, undefined, flagOverrides(values), {});
  const lines = problems.map((p) => `config ${p.key}: ${p.message}`);
  const selection = selectionProblem(config);
  if (selection) lines.push(selection);
  return lines.length > 0 ? { ok: false, problems: lines } : { ok: true, config };
}

/** Answers --list[=SOURCE] if given: true when it printed the fields (the command ends, 0); an unknown source is a usage error. */
export function answerList(values: { list?: string; json?: boolean }): boolean {
  if (values.list === undefined) return false;
  if (printFields(values.list, values.json ?? false)) return true;
  throw new UsageError(`--list: unknown source '${values.list}' (known: syscall, k8s_audit)`);
}

/**
 * The preamble of `rae validate` and `rae replay`: --list answered, at least one -r FILE, the
 * configuration from the flags (its problems on stderr, prefixed with the command). An exit code
 * when the command ends there.
 */
export function rulesCommandStart(command: string, values: RuleFlagValues & { list?: string; json?: boolean; rules?: string[] }): { exit: number } | { paths: string[]; config: Config } {
  if (answerList(values)) return { exit: 0 };
  const paths = values.rules ?? [];
  if (paths.length === 0) throw new UsageError('at least one -r FILE is required');
  const configured = configFromFlags(values);
  if (!configured.ok) {
    for (const p of configured.problems) process.stderr.write(`${command}: ${p}\n`);
    return { exit: 1 };
  }
  return { paths, config: configured.config };
}
