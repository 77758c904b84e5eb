// `rae event-generator ARGS` as a separate process, as a user runs it, for the generator's tests:
// stdout and stderr collected as they come (stderr also handed to `onStderr`, e.g. to signal the
// process at a given line), and `--json` outcome lines parsed.
import { spawn, type ChildProcess } from 'node:child_process';
import type { ActionOutcome } from '../../host/generator/index.js';

/** How a generator process ended, with everything it wrote. */
interface GeneratorEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running generator: the process, its end, and its stdout so far. */
export interface GeneratorRun {
  child: ChildProcess;
  done: Promise<GeneratorEnd>;
  stdout(): string;
}

/** Starts `rae event-generator ARGS`. */
export function startGenerator(args: string[], onStderr?: (all: string) => void): GeneratorRun {
  const child = spawn(process.execPath, ['bin/rae.js', 'event-generator', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    onStderr?.(stderr);
  });
  const done = new Promise<GeneratorEnd>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done, stdout: () => stdout };
}

/** The outcomes of a `run --json`: one JSON line per action. */
export function parseOutcomes(stdout: string): ActionOutcome[] {
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ActionOutcome);
}
