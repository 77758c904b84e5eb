// Start-up step 1 of `rae run`: the command line and the configuration. Parses the flags (Falco's
// where Falco has one), answers the informational ones (--version, --list, --list-events), turns
// the rule flags into -o options of their keys and loads the configuration (defaults, file,
// environment, -o). Consumes argv; produces the configuration and what a reload needs to read it
// again, or the exit code of a run that ends here.
import { loadConfig, type Config } from '../../config/config.js';
import { log, parseCommandArgs, setLogLevel, UsageError } from '../command.js';
import { answerList, withListValue } from '../rule-flags.js';
import { printEvents, printVersion } from '../run-info.js';

/** The flags of `rae run` as parsed. */
export type RunFlags = ReturnType<typeof parseRunFlags>;

/** What the later steps need of the command line. */
export interface RunConfig {
  flags: RunFlags;
  config: Config;
  /** The -o options, the rule flags first (a SIGHUP reads the configuration again with them). */
  overrides: string[];
}

function parseRunFlags(argv: string[]) {
  const { values } = parseCommandArgs(withListValue(argv), {
    config: { type: 'string', short: 'c' },
    'state-dir': { type: 'string' },
    resources: { type: 'string' },
    option: { type: 'string', short: 'o', multiple: true },
    rules: { type: 'string', short: 'r', multiple: true },
    'disable-tag': { type: 'string', short: 'T', multiple: true },
    'enable-tag': { type: 'string', short: 't', multiple: true },
    'disable-rule': { type: 'string', short: 'D', multiple: true },
    snaplen: { type: 'string', short: 'S' },
    'dry-run': { type: 'boolean' },
    version: { type: 'boolean' },
    list: { type: 'string' },
    'list-events': { type: 'boolean' },
    'list-rules': { type: 'boolean', short: 'L' },
    describe: { type: 'string', short: 'l' },
    url: { type: 'string' },
    json: { type: 'boolean' },
  });
  return values;
}

/** Parses argv and loads the configuration; an exit code when the run ends here (an informational flag, a configuration problem). */
export function loadRunConfig(argv: string[]): RunConfig | number {
  const flags = parseRunFlags(argv);
  const json = flags.json ?? false;
  if (flags.version) return (printVersion(json), 0);
  if (flags['list-events']) return (printEvents(), 0);
  if (answerList(flags)) return 0;
  if (flags.url !== undefined && flags.describe === undefined) throw new UsageError('--url goes with -l RULE');
  // The flags are -o options of their keys (given again, a list key appends), before the -o options.
  const flagged = (key: string, list: string[] | undefined) => (list ?? []).map((v) => `${key}=${v}`);
  const overrides = [
    ...flagged('rules.files', flags.rules),
    ...flagged('rules.disableTags', flags['disable-tag']),
    ...flagged('rules.enableTags', flags['enable-tag']),
    ...flagged('rules.disableNames', flags['disable-rule']),
    ...flagged('syscall.snaplen', flags.snaplen === undefined ? undefined : [flags.snaplen]),
    ...(flags.option ?? []),
  ];
  const { config, problems, notes } = loadConfig(flags.config, flags['state-dir'], overrides);
  for (const note of notes) log(`run: config ${note}`, 'warning');
  if (problems.length > 0) {
    for (const p of problems) log(`run: config ${p.key}: ${p.message}`, 'error');
    return 1;
  }
  setLogLevel(config.logLevel);
  return { flags, config, overrides };
}
