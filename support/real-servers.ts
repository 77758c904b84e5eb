// The real servers the forwarder's output tests deliver to, each started privately: a free
// loopback port, a temp dir for its config and data, its own log, and stopped after the test
// (its whole process group: SIGTERM, then SIGKILL after 10 s; a process-exit hook kills any
// group left running if a test crashes). Binaries come from Debian's packages
// (`npm run setup -- --for test` installs them); a missing one fails the test with that
// message, never a skip.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running server started by a test. */
export interface RealServer {
  readonly port: number;
  /** The server's private temp dir (config, data, what it writes). */
  readonly dir: string;
  /** Its stdout and stderr so far (for failure messages). */
  output(): string;
  /** Stops it (idempotent); the temp dir stays until dispose(). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same config. */
  restart(): Promise<void>;
  /** Stops it and removes its temp dir. */
  dispose(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) signalGroup(child, 'SIGKILL');
});

/** Signals the server and every process it started (its own process group: exim forks per connection). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal); // the group is gone already
  }
}

/** A port free on 127.0.0.1 right now (bound to port 0, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

function requireBinary(bin: string, pkg: string): void {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: install Debian's ${pkg} package (npm run setup -- --for test)`);
}

interface ServerSpec {
  name: string;
  bin: string;
  pkg: string;
  args: (port: number, dir: string) => string[];
  /** Writes config files into `dir` before the first start. */
  prepare?: (port: number, dir: string) => void;
  /** Ready when this resolves true (default: the port accepts connections). */
  ready?: (port: number, dir: string) => Promise<boolean>;
}

const READY_MS = 300_000;
const STOP_MS = 10_000;

async function startServer(spec: ServerSpec): Promise<RealServer> {
  requireBinary(spec.bin, spec.pkg);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `rae-${spec.name}-`));
  spec.prepare?.(port, dir);
  let child: ChildProcess | undefined;
  let text = '';

  async function start(): Promise<void> {
    const c = spawn(spec.bin, spec.args(port, dir), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child = c;
    live.add(c);
    let exited = false;
    c.once('exit', () => {
      exited = true;
      live.delete(c);
    });
    c.stdout?.on('data', (b: Buffer) => (text += b.toString('utf8')));
    c.stderr?.on('data', (b: Buffer) => (text += b.toString('utf8')));
    const ready = spec.ready ?? ((p: number) => accepts(p));
    const deadline = Date.now() + READY_MS;
    while (!(await ready(port, dir))) {
      if (exited) throw new Error(`${spec.name} exited at start:\n${text}`);
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`${spec.name} not ready on 127.0.0.1:${port} within ${READY_MS} ms:\n${text}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function stop(): Promise<void> {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    signalGroup(c, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(c, 'SIGKILL'), STOP_MS);
    await gone;
    clearTimeout(timer);
    signalGroup(c, 'SIGKILL'); // children that outlived the server (an exim connection process)
  }

  await start();
  return {
    port,
    dir,
    output: () => text,
    stop,
    async restart() {
      await stop();
      await start();
    },
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }); // exim's delivery process may still be finishing
    },
  };
}

/** Prometheus Alertmanager (prometheus-alertmanager) with one no-op receiver, clustering off. */
export function startAlertmanager(): Promise<RealServer> {
  return startServer({
    name: 'alertmanager',
    bin: '/usr/bin/prometheus-alertmanager',
    pkg: 'prometheus-alertmanager',
    prepare: (_port, dir) => writeFileSync(join(dir, 'alertmanager.yml'), 'route:\n  receiver: none\nreceivers:\n  - name: none\n'),
    args: (port, dir) => [`--config.file=${join(dir, 'alertmanager.yml')}`, `--storage.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='],
    ready: async (port) => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/-/ready`)).ok;
      } catch {
        return false;
      }
    },
  });
}

/** nats-server on loopback, no persistence. */
export function startNats(): Promise<RealServer> {
  return startServer({ name: 'nats', bin: '/usr/sbin/nats-server', pkg: 'nats-server', args: (port) => ['-a', '127.0.0.1', '-p', String(port)] });
}

/** redis-server on loopback, nothing saved to disk. */
export function startRedis(): Promise<RealServer> {
  return startServer({
    name: 'redis',
    bin: '/usr/bin/redis-server',
    pkg: 'redis-server',
    args: (port, dir) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
  });
}

/** mosquitto with one anonymous loopback listener, no persistence. */
export function startMosquitto(): Promise<RealServer> {
  return startServer({
    name: 'mosquitto',
    bin: '/usr/sbin/mosquitto',
    pkg: 'mosquitto',
    prepare: (port, dir) => writeFileSync(join(dir, 'mosquitto.conf'), `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`),
    args: (_port, dir) => ['-c', join(dir, 'mosquitto.conf')],
  });
}

/**
 * rsyslogd in the foreground (-n) with a private config (-f) and pid file (-i): imtcp and imudp on
 * the same loopback port number, every message written raw (%rawmsg%) and parsed
 * (PRI, HOSTNAME, TAG, MSG) as one line per message to `messages.log` in its dir. No imuxsock, so
 * /dev/log and the system's files are never touched.
 */
export function startRsyslog(): Promise<RealServer> {
  return startServer({
    name: 'rsyslog',
    bin: '/usr/sbin/rsyslogd',
    pkg: 'rsyslog',
    prepare: (port, dir) =>
      writeFileSync(
        join(dir, 'rsyslog.conf'),
        [
          `global(workDirectory="${dir}")`,
          'module(load="imtcp")',
          'module(load="imudp")',
          `input(type="imtcp" address="127.0.0.1" port="${port}")`,
          `input(type="imudp" address="127.0.0.1" port="${port}")`,
          'template(name="rae" type="list") {',
          '  constant(value="pri=") property(name="pri") constant(value=" host=") property(name="hostname") constant(value=" tag=") property(name="syslogtag")',
          '  constant(value=" proto=") property(name="inputname") constant(value=" msg=") property(name="msg" droplastlf="on")',
          '  constant(value=" raw=") property(name="rawmsg" droplastlf="on") constant(value="\\n")',
          '}',
          `action(type="omfile" file="${join(dir, 'messages.log')}" template="rae")`,
          '',
        ].join('\n'),
      ),
    args: (_port, dir) => ['-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid')],
  });
}

/**
 * exim4 as a private daemon (-bdf: foreground, -oX port, -oP pid file, -C its own config): accepts
 * any mail from loopback and appends it to the mbox `mail/mbox` in its dir (delivered as nobody,
 * since exim never delivers as root). Runs as root, which -C with a private config requires.
 */
export function startExim(): Promise<RealServer> {
  return startServer({
    name: 'exim4',
    bin: '/usr/sbin/exim4',
    pkg: 'exim4-daemon-light',
    prepare: (port, dir) => {
      for (const d of ['spool', 'log', 'mail']) mkdirSync(join(dir, d));
      chmodSync(dir, 0o755); // the delivery runs as nobody: it must reach mail/
      chmodSync(join(dir, 'mail'), 0o1777);
      writeFileSync(
        join(dir, 'exim.conf'),
        [
          'primary_hostname = rae-test.localhost',
          'qualify_domain = rae-test.localhost',
          `spool_directory = ${join(dir, 'spool')}`,
          `log_file_path = ${join(dir, 'log')}/%slog`,
          'exim_user = root',
          'exim_group = root',
          `daemon_smtp_ports = ${port}`,
          'local_interfaces = 127.0.0.1',
          'acl_smtp_rcpt = accept',
          'acl_smtp_data = accept',
          'host_lookup =',
          'rfc1413_hosts =',
          'keep_environment =',
          'tls_advertise_hosts =',
          'begin routers',
          'everyone:',
          '  driver = accept',
          '  transport = to_mbox',
          'begin transports',
          'to_mbox:',
          '  driver = appendfile',
          `  file = ${join(dir, 'mail', 'mbox')}`,
          '  user = nobody',
          '  group = nogroup',
          '  mode = 0666',
          '  envelope_to_add',
          'begin retry',
          '*  *  F,1m,10s',
          '',
        ].join('\n'),
      );
    },
    args: (port, dir) => ['-bdf', '-oX', String(port), '-oP', join(dir, 'exim.pid'), '-C', join(dir, 'exim.conf')],
  });
}

/** The text of a file the server writes ('' while it does not exist). */
export function readServerFile(server: RealServer, ...path: string[]): string {
  const file = join(server.dir, ...path);
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

/** Resolves once `cond` holds; rejects naming `what` after `ms` (wide: the machine may be loaded). */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
