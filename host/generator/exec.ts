// Process helpers for syscall actions: find a program on PATH, run it to completion (bounded by a
// timeout, output discarded), and run a few raw syscalls through perl's `syscall` (perl-base is
// part of every Debian system), since Node cannot make them itself.
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The full path of a program on PATH, or undefined. */
export function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Runs a program to completion; rejects with a reason on a failure to start or a timeout. Resolves with the exit code. */
export function runProgram(file: string, args: string[], opts: { timeoutMs?: number; cwd?: string } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: opts.cwd });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 2000) stderr += c.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${file}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal) reject(new Error(`${file} ${signal === 'SIGKILL' ? 'timed out' : `killed by ${signal}`}${stderr ? `: ${stderr.trim()}` : ''}`));
      else resolve(code ?? 0);
    });
  });
}

/** Runs a program and requires exit status 0. */
export async function mustRun(file: string, args: string[], opts: { timeoutMs?: number; cwd?: string } = {}): Promise<void> {
  const code = await runProgram(file, args, opts);
  if (code !== 0) throw new Error(`${file} ${args.join(' ')} exited with ${code}`);
}

/** Syscall numbers perl needs, per architecture (from the kernel's syscall tables). */
const SYSCALLS: Record<string, { ptrace: number; memfd_create: number }> = {
  x64: { ptrace: 101, memfd_create: 319 },
  arm64: { ptrace: 117, memfd_create: 279 },
};

/** The syscall numbers of this architecture, or undefined when not known. */
export function syscallNumbers(): { ptrace: number; memfd_create: number } | undefined {
  return SYSCALLS[process.arch];
}

/** Why raw-syscall actions cannot run here, or undefined. */
export function perlSyscallsUnavailable(): string | undefined {
  if (!which('perl')) return 'needs perl (Debian perl-base) to make the raw syscall';
  if (!syscallNumbers()) return `no syscall numbers for architecture ${process.arch}`;
  return undefined;
}

/** True when running as root. */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** Mount options of the mount at `path` (from /proc/self/mountinfo; the last mount wins). */
export function mountOptions(path: string): string[] | undefined {
  let found: string[] | undefined;
  try {
    for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const f = line.split(' ');
      if (f[4] === path) found = (f[5] ?? '').split(',');
    }
  } catch {
    return undefined;
  }
  return found;
}

/** An action's unavailable() check: the programs missing from PATH, if any. */
export const needs =
  (...programs: string[]) =>
  (): string | undefined => {
    const missing = programs.filter((p) => !which(p));
    return missing.length > 0 ? `needs ${missing.join(', ')} on PATH` : undefined;
  };

/** An action's unavailable() check: the first reason that `checks` give, if any. */
export const first =
  (...checks: Array<() => string | undefined>) =>
  (): string | undefined =>
    checks.map((c) => c()).find((r) => r !== undefined);
