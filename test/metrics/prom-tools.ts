// Test helpers around Debian's prometheus package: locating its binaries (a missing binary makes
// the tests that need it skip loudly, or fail under CI=true), and turning a shipped
// *MetricsRulesGroup manifest into a Prometheus rule file (its `spec` is one rule group without
// the `name`, which is the resource's name), and a private Prometheus on loopback for a test.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/** Where the project keeps the manifests. */
export const MANIFESTS = join(import.meta.dirname, '..', '..', 'rules', 'manifests');

/** The path of a Prometheus tool, or undefined (after printing why) if it is not installed. */
export function findTool(name: 'prometheus' | 'promtool'): string | undefined {
  const path = `/usr/bin/${name}`;
  if (existsSync(path)) return path;
  process.stderr.write(`\n*** SKIPPED: ${path} is missing; install Debian's prometheus package (npm run setup as root, or apt-get install prometheus) ***\n`);
  return undefined;
}

/** The Prometheus Operator resources beside the base (deploy/prometheus-operator). */
export const PROMETHEUS_OPERATOR = join(MANIFESTS, '..', '..', 'deploy', 'prometheus-operator');

/** One Prometheus rule group. */
export type RuleGroup = { name: string; rules: Array<{ alert?: string; record?: string; expr: string; annotations?: Record<string, string> }> };

/** The groups of deploy/prometheus-operator/prometheusrule.yaml (its spec is a Prometheus rule file). */
export function prometheusRuleGroups(): RuleGroup[] {
  const o = parseYaml(readFileSync(join(PROMETHEUS_OPERATOR, 'prometheusrule.yaml'), 'utf8')) as { kind: string; spec: { groups: RuleGroup[] } };
  if (o.kind !== 'PrometheusRule') throw new Error(`prometheusrule.yaml: a ${o.kind}, not a PrometheusRule`);
  return o.spec.groups;
}

/** Runs promtool (found by findTool) in `cwd`: its exit code and its output, stdout then stderr. */
export function runPromtool(args: string[], cwd: string): { code: number | null; out: string } {
  const r = spawnSync('/usr/bin/promtool', args, { cwd, encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Calls `fn` with a new temporary directory, removed afterwards whatever happens. */
export function withTempDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'rae-promtool-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A parsed manifest of rules/manifests/. */
export function readManifest(file: string): { kind: string; metadata: { name: string }; spec: Record<string, unknown> } {
  return parseYaml(readFileSync(join(MANIFESTS, file), 'utf8'));
}

/** The Prometheus rule file (YAML text) holding the rule group of a *MetricsRulesGroup manifest. */
export function ruleFileFromManifest(file: string): string {
  const m = readManifest(file);
  if (!/MetricsRulesGroup$/.test(m.kind)) throw new Error(`${file}: not a MetricsRulesGroup (${m.kind})`);
  return stringifyYaml({ groups: [{ name: m.metadata.name, ...m.spec }] });
}

/** A Prometheus started by a test: its API base URL, instant queries, and a stop that waits for the exit. */
export interface RunningPrometheus {
  api: string;
  /** GET an API path (e.g. `/api/v1/rules`): status 0 when the server does not answer; the body parsed when it is JSON. */
  get(path: string): Promise<{ status: number; body: unknown }>;
  /** An instant query: Prometheus's status ("success" or "error"), its error text, and the result vector. */
  query(expr: string): Promise<{ status: string; error?: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> }>;
  /** Polls `fn` every 250 ms until it returns a value; fails with Prometheus's log past `timeoutMs` or if it exits. */
  poll<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (closed again: the caller binds it). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/**
 * Starts `prometheus` on a free loopback port with the configuration `config` (an object written
 * as prometheus.yml into `dir`, beside the rule files the caller wrote there), storage under
 * `dir`, and waits until it is ready (bounded by `timeoutMs`).
 */
export async function startPrometheus(binary: string, dir: string, config: object, timeoutMs = 300_000): Promise<RunningPrometheus> {
  writeFileSync(join(dir, 'prometheus.yml'), stringifyYaml(config));
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const proc = spawn(binary, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (c: Buffer) => (log += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (log += c.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const ended = () => proc.exitCode !== null || proc.signalCode !== null;
  const get = async (path: string) => {
    try {
      const res = await request(`${api}${path}`);
      const text = await res.body.text();
      return { status: res.statusCode, body: text.startsWith('{') ? (JSON.parse(text) as unknown) : text };
    } catch {
      return { status: 0, body: undefined };
    }
  };
  const poll = async <T>(what: string, fn: () => Promise<T | undefined>, ms = timeoutMs): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (ended()) throw new Error(`prometheus exited (${proc.exitCode ?? proc.signalCode}) while waiting for ${what}:\n${log}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; prometheus log:\n${log}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const running: RunningPrometheus = {
    api,
    get,
    poll,
    async query(expr) {
      const r = await get(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = r.body as { status?: string; error?: string; data?: { result?: [] } } | undefined;
      return { status: body?.status ?? `HTTP ${r.status}`, error: body?.error, result: body?.data?.result ?? [] };
    },
    async stop() {
      if (!ended()) {
        proc.kill('SIGTERM');
        await exited;
      }
    },
  };
  try {
    await poll('ready Prometheus', async () => ((await get('/-/ready')).status === 200 ? true : undefined));
  } catch (err) {
    await running.stop();
    throw err;
  }
  return running;
}
