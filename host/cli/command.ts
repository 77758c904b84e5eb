// The shape of one `rae` command: one file per command in host/cli/, registered (name, summary
// and a lazy import) in main.ts, so a start imports only the command it runs.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** One `rae` subcommand. `run` returns the process exit code. */
export interface Command {
  name: string;
  /** Full `--help` text: usage line, options, examples. */
  help: string;
  run(argv: string[]): Promise<number>;
}

/** Thrown by parseCommandArgs for bad usage; main prints it with the command's help hint. */
export class UsageError extends Error {}

/**
 * parseArgs with the project's conventions: unknown options are usage errors, and every
 * command accepts -h/--help (returned as `help: true`).
 */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const LEVELS = ['error', 'warning', 'info', 'debug'];
let threshold = LEVELS.indexOf('info');

/** Sets the least severe level `log` writes (the config's logLevel; unknown names are checked by the caller). */
export function setLogLevel(level: string): void {
  if (LEVELS.includes(level)) threshold = LEVELS.indexOf(level);
}

/** Writes a log line to stderr (stdout is reserved for alert JSON lines) unless its level is below logLevel. */
export function log(msg: string, level: 'error' | 'warning' | 'info' | 'debug' = 'info'): void {
  if (LEVELS.indexOf(level) <= threshold) process.stderr.write(`${msg}\n`);
}
