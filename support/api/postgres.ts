// A throwaway PostgreSQL server for tests: initdb into a temp directory (as the `postgres` user
// when running as root, since PostgreSQL refuses root), start on a free loopback port, stop and
// delete at the end. Binaries come from Debian's postgresql package (scripts/setup.sh).
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A running cluster. */
export interface PgCluster {
  /** URL of the `postgres` database (trust auth on 127.0.0.1). */
  adminUrl: string;
  port: number;
  /** The temp directory holding the data directory and the socket. */
  dir: string;
  /** Stops the server, keeping its data (an outage); `startServer` starts it again on the same port. */
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

/** The directory holding initdb and pg_ctl, or undefined with the reason. */
export function findPgBin(): { bin?: string; reason?: string } {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return { bin: join(root, versions[0], 'bin') };
  }
  return { reason: `no ${root}/<version>/bin/initdb: install Debian's postgresql package (npm run setup does it as root)` };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts a fresh cluster. */
export async function startPgCluster(bin: string): Promise<PgCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // uid and gid of the postgres user (getent is in libc-bin on every Debian system)
    const fields = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' }).split(':');
    chownSync(dir, Number(fields[2]), Number(fields[3]));
  }
  const pgRun = (cmd: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args));
  await pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  // fsync off: a throwaway server need not survive a crash, and the tests run faster.
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const startServer = async () => void (await pgRun('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']));
  await startServer();
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    // fast, not immediate: clients are cut off at once all the same, but what was committed is
    // written first (with synchronous_commit off, an immediate stop lost the last commits)
    stopServer: async () => void (await pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'])),
    startServer,
    async stop() {
      try {
        await pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
