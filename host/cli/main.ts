// `rae` entry: dispatches to one command per file. Logs and errors go to stderr; stdout carries
// only alert JSON lines (and a command's requested output, e.g. a manifest).
import { adminCommand } from './admin.js';
import { UsageError, type Command } from './command.js';
import { convertCommand } from './convert.js';
import { eventGeneratorCommand } from './event-generator.js';
import { replayCommand } from './replay.js';
import { runCommand } from './run.js';
import { validateCommand } from './validate.js';
import { webhookConfigCommand } from './webhook-config.js';

// One line per command; keep the list in the order `rae --help` shows it.
const COMMANDS: Command[] = [runCommand, validateCommand, replayCommand, convertCommand, eventGeneratorCommand, webhookConfigCommand, adminCommand];

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: rae <command> [options]',
    '',
    'Runtime threat detection engine: Falco-compatible rules compiled to WebAssembly.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run 'rae <command> --help' for a command's options.",
  ].join('\n');
}

/** Runs `rae` with the given arguments; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(`${topHelp()}\n`);
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    process.stderr.write(`rae: unknown command '${name}'\n\n${topHelp()}\n`);
    return 2;
  }
  if (rest.includes('-h') || rest.includes('--help')) {
    process.stdout.write(`${cmd.help}\n`);
    return 0;
  }
  try {
    return await cmd.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`rae ${cmd.name}: ${err.message}\nRun 'rae ${cmd.name} --help' for usage.\n`);
      return 2;
    }
    process.stderr.write(`rae ${cmd.name}: internal error: ${(err as Error).stack ?? String(err)}\n`);
    return 70;
  }
}
