// The engine a suite runs against: a private `rae run` (its own state directory, forwarder on a
// free port, API, audit webhook and resources watch off) whose webhook output posts every alert to
// the suite's receiver, as upstream configures Falco (`http_output` to the event-generator's
// server, `append_output` extra field `proc.env`). The runner appends ` proc_env=%proc.env` and
// the container's fields (container.id, container.name, container.image: a test in a container,
// host for the others) to the output of every syscall rule it loads (a rules file of
// `override: {output: append}` loaded last): the alert's output_fields then carry proc.env, where
// the test id is found, and say where the test's process ran. (The engine's append_output now
// fills extra_fields from the event too, so upstream's configuration would also work; the runner
// keeps the override, which puts the fields in the output text as well.) It also loads the
// runner's own rule CONTAINER_KNOWN_RULE, which tells the runner that the engine has a test
// container's runtime metadata (container.ts), and follows the runtimes the runner makes its
// containers in. Consumes the rules files (default: the built-in sets), the receiver's URL, the
// runtimes and the DNS servers to resolve the rules' domain names with; produces a ready engine
// and its stop().
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { builtinRulesFiles } from '../../engine/index.js';
import type { ContainersConfig } from '../../sources/container/index.js';
import { CONTAINER_WAIT_ENV } from './container.js';

/** The sets `rae run` loads by default (config rules.builtIn). */
const DEFAULT_BUILTIN = ['syscall', 'orchestrator-audit'];

const RAE = fileURLToPath(new URL('../../../bin/rae.js', import.meta.url));

/** A running private engine. */
export interface SuiteEngine {
  stop(): Promise<void>;
}

/** The rules files of a path list: files as given, a directory's *.yaml files sorted. */
function expand(paths: readonly string[]): string[] {
  return paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((n) => /\.ya?ml$/.test(n))
          .sort()
          .map((n) => join(p, n))
      : [p],
  );
}

/** Names of the syscall rules defined in rules texts (a rule without `source` is a syscall rule). */
function syscallRules(texts: readonly string[]): string[] {
  const names = new Set<string>();
  for (const text of texts) {
    for (const doc of parseAllDocuments(text)) {
      const items = 'toJS' in doc ? (doc.toJS() as unknown) : undefined;
      if (!Array.isArray(items)) continue;
      for (const it of items as Array<Record<string, unknown>>) {
        if (typeof it?.rule === 'string' && typeof it.condition === 'string' && (it.source === undefined || it.source === 'syscall')) names.add(it.rule);
      }
    }
  }
  return [...names];
}

/** What the runner appends to every syscall rule's output: the test id's carrier, and where the process ran. */
const APPENDED = ' proc_env=%proc.env container_id=%container.id container_name=%container.name container_image=%container.image';

/** The rules file that appends APPENDED to every syscall rule's output. */
function procEnvOverrides(names: readonly string[]): string {
  return names.map((n) => `- rule: ${JSON.stringify(n)}\n  output: "${APPENDED}"\n  override:\n    output: append\n`).join('');
}

/** The runner's own rule: a waiting process of a test's runtime container, once the engine has that container's runtime metadata. */
export const CONTAINER_KNOWN_RULE = 'rae suite container known';

/** The rules file of CONTAINER_KNOWN_RULE (its output carries proc.env: the alert is the test's). */
const CONTAINER_KNOWN = `- rule: ${CONTAINER_KNOWN_RULE}
  desc: the suite runner's own rule (host/testing/suite/engine.ts), not a detection
  condition: evt.type in (execve, execveat) and proc.env contains "${CONTAINER_WAIT_ENV}=1" and container.name exists and container.privileged exists
  output: "suite container known proc_env=%proc.env container_name=%container.name"
  priority: DEBUG
`;

/** The configuration's containers section for `c`. */
function containersSection(c: ContainersConfig): string {
  const one = (k: 'cri' | 'docker' | 'podman') => `  ${k}:\n    enabled: ${c[k].enabled}\n    sockets: ${JSON.stringify(c[k].sockets)}`;
  return ['containers:', one('cri'), one('docker'), one('podman')].join('\n');
}

/** What the engine a suite runs against is started with, besides its rules and receiver. */
export interface SuiteEngineOptions {
  /** The container runtimes it follows (default: the configuration's defaults). */
  containers?: ContainersConfig;
  /**
   * The DNS servers (`host:port`) it resolves the rules' domain names with (config dns.servers;
   * default: the node's resolver): a resolver the tester runs can give a rule's name, such as the
   * cluster's API server name, the address a test connects to, without touching the node.
   */
  dnsServers?: readonly string[];
}

/**
 * Starts `rae run` for a suite; resolves once it is ready (its syscall source running), or
 * rejects with its stderr.
 */
export async function startSuiteEngine(rulesFiles: readonly string[], alertsUrl: string, log: (line: string) => void, opts: SuiteEngineOptions = {}, readyTimeoutMs = 600_000): Promise<SuiteEngine> {
  const { containers, dnsServers = [] } = opts;
  const dir = mkdtempSync(join(tmpdir(), 'rae-suite-engine-'));
  const files = expand(rulesFiles);
  const texts = files.length > 0 ? files.map((f) => readFileSync(f, 'utf8')) : builtinRulesFiles(DEFAULT_BUILTIN).files.map((f) => f.text);
  const overrides = join(dir, 'suite-proc-env.yaml');
  writeFileSync(overrides, procEnvOverrides(syscallRules(texts)));
  const known = join(dir, 'suite-container-known.yaml');
  writeFileSync(known, CONTAINER_KNOWN);
  const config = join(dir, 'config.yaml');
  const builtIn = files.length > 0 ? '[]' : JSON.stringify(DEFAULT_BUILTIN);
  writeFileSync(
    config,
    [
      `rules:\n  builtIn: ${builtIn}\n  watch: false`,
      'forwarder:\n  port: 0',
      `  outputs:\n    webhook:\n      address: ${JSON.stringify(alertsUrl)}\n      retries: 5`,
      'api:\n  enabled: false',
      'webhook:\n  enabled: false',
      ...(containers ? [containersSection(containers)] : []),
      ...(dnsServers.length > 0 ? [`dns:\n  servers: ${JSON.stringify(dnsServers)}`] : []),
      '',
    ].join('\n'),
  );
  const args = [RAE, 'run', '--config', config, '--state-dir', join(dir, 'state'), ...files.flatMap((f) => ['-r', f]), '-r', overrides, '-r', known];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-20_000);
  });
  const stop = async () => {
    await ended(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(child, () => stderr, readyTimeoutMs);
  } catch (err) {
    await stop();
    throw err;
  }
  log(`suite: rae run ready (alerts to ${alertsUrl})`);
  return { stop };
}

function waitReady(child: ChildProcess, stderr: () => string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => finish(new Error(`rae run was not ready after ${timeoutMs / 1000} s:\n${stderr()}`)), timeoutMs);
    const poll = setInterval(() => {
      if (/run: ready/.test(stderr())) finish();
      else if (/waiting for syscall/.test(stderr())) finish(new Error(`rae run cannot see syscalls, so no suite can pass (run as root on a kernel the probe loads):\n${stderr()}`));
    }, 50);
    const onExit = () => finish(new Error(`rae run exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${stderr()}`));
    child.once('exit', onExit);
    const finish = (err?: Error) => {
      clearTimeout(deadline);
      clearInterval(poll);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
  });
}

/** SIGTERM, and the exit awaited. */
function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
