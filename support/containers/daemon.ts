// A daemon process for tests: its log collected, a wait for readiness that fails with the log
// rather than hanging, and a stop that escalates from SIGTERM to SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';

/** A started daemon. */
export interface Daemon {
  child: ChildProcess;
  pid: number;
  log(): string;
  exited(): boolean;
  /** SIGTERM; SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** Generous bound for a daemon to become ready on a loaded 2-core machine. */
const READY_MS = 300_000;

/** Starts `cmd args`; stdout and stderr go to the collected log (last 64 KiB). */
export function startDaemon(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Daemon {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let text = '';
  const add = (c: Buffer) => {
    text = (text + c.toString('utf8')).slice(-65536);
  };
  child.stdout!.on('data', add);
  child.stderr!.on('data', add);
  child.on('error', (e) => add(Buffer.from(`spawn error: ${e.message}\n`)));
  const gone = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    pid: child.pid ?? -1,
    log: () => text,
    exited,
    async stop(graceMs = 20_000) {
      if (exited()) return gone;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** Polls `ready` until it resolves true; throws with the daemon's log if it exits or READY_MS passes. */
export async function waitReady(d: Daemon, what: string, ready: () => Promise<boolean> | boolean, timeoutMs = READY_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    if (d.exited()) throw new Error(`${what} exited (${d.child.exitCode ?? d.child.signalCode}) before it was ready:\n${d.log()}`);
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms:\n${d.log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
