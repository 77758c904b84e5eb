// A real `rae run` process for tests: stdout alert lines and stderr log lines collected as they
// come, waits on log and alert conditions (bounded, failing with the logs rather than hanging),
// and a clean stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ruleOrigin } from '../../host/generator/rule-sets.js';

/** A running `rae run`. */
export interface RaeRun {
  child: ChildProcess;
  /** Every stdout line parsed as JSON (alerts). */
  alerts: Array<{ rule: string; source: string; output_fields: Record<string, unknown> }>;
  stderr(): string;
  /** Every stdout line so far, alert or not. */
  stdoutLines(): string[];
  /** Resolves once stderr matches (after `from`, an offset into stderr). */
  waitLog(re: RegExp, from?: number, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves once `pred` holds for the alerts seen so far. */
  waitAlerts(pred: (alerts: RaeRun['alerts']) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `rae run` (or `opts.command`) with the given arguments and `opts.env` added to the environment; `wrapper` (e.g. `setpriv ...`) runs node when given, `opts.nodeArgs` are node's own options. */
export function startRae(args: string[], wrapper: string[] = [], opts: { command?: string; env?: NodeJS.ProcessEnv; nodeArgs?: string[] } = {}): RaeRun {
  const command = [...wrapper, process.execPath, ...(opts.nodeArgs ?? []), 'bin/rae.js', opts.command ?? 'run', ...args];
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TZ: 'UTC', ...opts.env } });
  let err = '';
  let out = '';
  const lines: string[] = [];
  const alerts: RaeRun['alerts'] = [];
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  // decoded as a stream: a character split between two chunks (U+FFFD in an alert) stays whole
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (c: string) => {
    out += c;
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      lines.push(line);
      if (line.startsWith('{')) alerts.push(JSON.parse(line));
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const poll = async (ok: () => boolean, what: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!ok()) {
      // A process ended by a signal has no exit code, only a signal code.
      const ended = child.exitCode !== null || child.signalCode !== null;
      if (Date.now() > deadline || ended) throw new Error(`rae ${opts.command ?? 'run'}: ${ended ? `exited (${child.exitCode ?? child.signalCode})` : 'timed out'} waiting for ${what}\n--- stderr:\n${err}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return {
    child,
    alerts,
    stderr: () => err,
    stdoutLines: () => [...lines],
    async waitLog(re, from = 0, timeoutMs = 600_000) {
      await poll(() => re.test(err.slice(from)), String(re), timeoutMs);
      return err.slice(from).match(re)!;
    },
    waitAlerts: (pred, what, timeoutMs = 600_000) => poll(() => pred(alerts), what, timeoutMs),
    async stop() {
      // Not again once the run said it is stopping (a test's own SIGTERM or SIGINT): a second
      // SIGTERM that lands while the stopped process exits ended it by the signal (no exit code)
      // instead of the run's exit 0, after "run: stopped in 152 ms", in a CI run on a busy machine.
      if (child.exitCode === null && child.signalCode === null && !/^run: SIG[A-Z]+ received, stopping$/m.test(err)) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * A `rules:` configuration section that loads the three built-in syscall sets (plus `extraSets`)
 * with every rule matching, and turns on `rules` that their set ships disabled through a rules
 * file written into `dir` (`override: enabled: replace`, as a user would).
 */
export function everyRuleSection(dir: string, rules: Iterable<string>, extraSets: string[] = []): string {
  const off = [...new Set(rules)].filter((r) => ruleOrigin(r)?.enabled === false);
  const enable = join(dir, 'enable-rules.yaml');
  writeFileSync(enable, off.map((r) => `- rule: ${r}\n  enabled: true\n  override:\n    enabled: replace\n`).join('\n'));
  return `rules:\n  builtIn: [${['syscall', 'syscall-incubating', 'syscall-sandbox', ...extraSets].join(', ')}]\n  ruleMatching: all\n  files: [${JSON.stringify(enable)}]\n`;
}
