// The program output (Falco's program_output): each alert line written to the standard input
// of `program`, run by /bin/sh -c. With keep_alive one process receives every line (restarted
// when it has exited); without it, a new process per alert gets one line and end-of-input, and
// the attempt fails when it exits non-zero or outlives timeoutms (it is then killed).
import { spawn, type ChildProcess } from 'node:child_process';
import type { OutputSettings } from './settings.js';
import type { Delivery, OutputContext, Sender } from './types.js';

function write(child: ChildProcess, text: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const stdin = child.stdin;
    if (!stdin || stdin.destroyed || child.exitCode !== null) return resolve('the program has exited');
    stdin.write(text, (err) => resolve(err ? ((err as NodeJS.ErrnoException).code ?? err.message) : undefined));
  });
}

/** The program transport. */
export function createProgramSender(s: OutputSettings, ctx: OutputContext): Sender {
  const program = s.string('program');
  const keepAlive = s.bool('keep_alive');
  const timeoutMs = s.number('timeoutms');
  let kept: ChildProcess | undefined;

  function start(): ChildProcess {
    const child = spawn('/bin/sh', ['-c', program], { stdio: ['pipe', 'ignore', 'pipe'] });
    child.stdin?.on('error', () => {}); // EPIPE after the program exits: reported by write()
    child.stderr?.on('data', (c: Buffer) => ctx.log(`forwarder: program output: ${c.toString('utf8').trimEnd()}`));
    return child;
  }

  async function once(d: Delivery, signal: AbortSignal): Promise<string | undefined> {
    const child = start();
    const exited = new Promise<string | undefined>((resolve) => {
      child.on('error', (err) => resolve(err.message));
      child.on('exit', (code, sig) => resolve(code === 0 ? undefined : sig ? `killed by ${sig}` : `exit status ${code}`));
    });
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(kill, timeoutMs);
    signal.addEventListener('abort', kill, { once: true });
    const written = await write(child, `${d.json}\n`);
    child.stdin?.end();
    const result = await exited;
    clearTimeout(timer);
    signal.removeEventListener('abort', kill);
    return written ?? result;
  }

  return {
    maxBatch: keepAlive ? 256 : 1,
    async send(batch, signal) {
      if (!keepAlive) return once(batch[0] as Delivery, signal);
      if (!kept || kept.exitCode !== null || kept.signalCode !== null) kept = start();
      return write(kept, batch.map((d) => `${d.json}\n`).join(''));
    },
    async close() {
      const child = kept;
      kept = undefined;
      if (!child || child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
