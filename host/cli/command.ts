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

/** Set when the reader of stderr has gone (EPIPE): log lines have nowhere to go (endQuietlyOnClosedStdout). */
let stderrGone = false;

/** Writes a log line to stderr (stdout is reserved for alert JSON lines) unless its level is below logLevel. */
export function log(msg: string, level: 'error' | 'warning' | 'info' | 'debug' = 'info'): void {
  if (!stderrGone && LEVELS.indexOf(level) <= threshold) process.stderr.write(`${msg}\n`);
}

/** What a closed stdout does (see endQuietlyOnClosedStdout); `rae run` sets its clean stop. */
let onClosed: () => void = () => process.exit(0);

/** Makes a closed stdout stop the running command by `stop` (a clean stop that returns 0) instead of ending the process. */
export function onStdoutClosed(stop: () => void): void {
  onClosed = stop;
}

/**
 * Ends `rae` quietly with 0 when the reader of its stdout or stderr has gone (EPIPE: `rae run
 * --list | head -1`), as falco does (SIGPIPE), instead of Node's unhandled 'error' event (a
 * stack trace, exit 1); another error is thrown as before. main() installs it once for every
 * command.
 */
export function endQuietlyOnClosedStdout(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    onClosed();
  });
  // A closed stderr stops the command the same way, once. Unhandled, its EPIPE was an uncaught
  // exception whose report went to stderr again: `rae run` spun on it at a third of a core and
  // no longer answered SIGTERM. Writes after it fail into this listener, not into a new report.
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (stderrGone) return;
    stderrGone = true;
    onClosed();
  });
}
