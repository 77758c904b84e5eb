// `rae` entry: dispatches to one command per file. Logs and errors go to stderr; stdout carries
// only alert JSON lines (and a command's requested output, e.g. a manifest).
import { endQuietlyOnClosedStdout, UsageError, type Command } from './command.js';

/** A command as `rae --help` lists it; its implementation (and everything it imports) loads on use. */
interface Entry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

// One line per command; keep the list in the order `rae --help` shows it. Measured with
// /usr/bin/time on `rae --help` (2-core VM, under load): static imports of every command 1.7-2.1 s
// user CPU and 149-157 MB max RSS; lazy: see bench `footprint` (cli_help_*).
const COMMANDS: Entry[] = [
  { name: 'run', summary: 'run the engine (built-in rules, sources, servers) until SIGTERM/SIGINT', load: async () => (await import('./run.js')).runCommand },
  { name: 'forwarder', summary: 'the forwarder alone, as falcosidekick: engines post alerts to it, one database stores them, the query API serves them', load: async () => (await import('./forwarder.js')).forwarderCommand },
  { name: 'validate', summary: 'check rules files and print their diagnostics (like falco -V)', load: async () => (await import('./validate.js')).validateCommand },
  { name: 'describe', summary: 'print loaded rules as Falco describes them (JSON: compiled conditions, event types)', load: async () => (await import('./describe.js')).describeCommand },
  { name: 'replay', summary: 'evaluate recorded events (field events or audit logs) and print alerts', load: async () => (await import('./replay.js')).replayCommand },
  { name: 'profile', summary: 'rank rules by their evaluation cost, with evaluations and matches (a replay, or a running engine)', load: async () => (await import('./profile.js')).profileCommand },
  { name: 'test', summary: 'run rule tests: offline unit tests of recorded events on both engines; table, --junit', load: async () => (await import('./test.js')).testCommand },
  { name: 'tune', summary: 'the noisiest rules, their repeating output fields, and an exception for each (from alert lines)', load: async () => (await import('./tune.js')).tuneCommand },
  { name: 'convert', summary: 'convert a Falco rules file to an EngineAuditRules manifest (stdout)', load: async () => (await import('./convert.js')).convertCommand },
  { name: 'event-generator', summary: 'generate events that trigger the built-in rules (list | run [REGEX])', load: async () => (await import('./event-generator.js')).eventGeneratorCommand },
  { name: 'webhook-config', summary: "print the API server's audit webhook configuration (kubeconfig with this engine's CA)", load: async () => (await import('./webhook-config.js')).webhookConfigCommand },
  { name: 'admin', summary: 'manage the error tracking API: users, tokens, projects, members', load: async () => (await import('./admin.js')).adminCommand },
];

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
  endQuietlyOnClosedStdout();
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(`${topHelp()}\n`);
    return name === undefined ? 2 : 0;
  }
  // `rae --version` is `rae run --version` (Falco's `falco --version`: what the image and a node run).
  if (name === '--version') return (await COMMANDS[0]!.load()).run(['--version']);
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    process.stderr.write(`rae: unknown command '${name}'\n\n${topHelp()}\n`);
    return 2;
  }
  const cmd = await entry.load();
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
