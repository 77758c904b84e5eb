// The seed's own check, end to end with a real Prometheus (Debian's package): the forwarder runs
// on 127.0.0.1, Prometheus scrapes it every second with the shipped scrape config (target and
// node adapted) and loads the shipped alert rules; after POST /test the query API returns the
// Test rule series with the forwarder's labels and the scrape's labels, value 1.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { findTool, MANIFESTS, ruleFileFromManifest } from '../metrics/prom-tools.js';
import { startTestForwarder } from '../../support/forwarder.js';

const prometheus = findTool('prometheus');
const WAIT_MS = 300_000;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** 9090, Prometheus's own port as the issue names it, when it is free here; else any free port. */
async function prometheusPort(): Promise<number> {
  const srv = createServer();
  const free = await new Promise<boolean>((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(9090, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
  return free ? 9090 : freePort();
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  try {
    const res = await request(url);
    const text = await res.body.text();
    return { status: res.statusCode, body: res.statusCode === 200 && text.startsWith('{') ? JSON.parse(text) : text };
  } catch {
    return { status: 0, body: undefined };
  }
}

function hasExited(proc: ChildProcess): boolean {
  return proc.exitCode !== null || proc.signalCode !== null;
}

/** Polls `fn` until it returns a value (bounded by WAIT_MS). */
async function poll<T>(what: string, fn: () => Promise<T | undefined>, proc: ChildProcess, log: () => string): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (hasExited(proc)) throw new Error(`prometheus exited (${proc.exitCode ?? proc.signalCode}) while waiting for ${what}:\n${log()}`);
    if (Date.now() > deadline) throw new Error(`no ${what} within ${WAIT_MS} ms; prometheus log:\n${log()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

type Sample = { metric: Record<string, string>; value: [number, string] };

const t = prometheus ? test : test.skip;

t('POST /test shows up in a real Prometheus with the forwarder and scrape labels, value 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-prometheus-'));
  const fwd = await startTestForwarder({}, 'node-a-host');
  let proc: ChildProcess | undefined;
  let log = '';
  try {
    const target = new URL(fwd.fwd.url).host;
    // The shipped scrape config, with this test's target, node and a 1 s interval.
    const shipped = parseYaml(readFileSync(join(MANIFESTS, 'prometheus-scrape-config.yaml'), 'utf8')) as {
      scrape_configs: Array<{ scrape_interval: string; static_configs: Array<{ targets: string[]; labels: Record<string, string> }> }>;
    };
    const job = shipped.scrape_configs[0]!;
    job.scrape_interval = '1s';
    job.static_configs[0]!.targets = [target];
    job.static_configs[0]!.labels.node = 'node-a';
    writeFileSync(join(dir, 'rules.yaml'), ruleFileFromManifest('cluster-observability-metrics-rules-group.yaml'));
    writeFileSync(join(dir, 'prometheus.yml'), stringifyYaml({ global: { scrape_interval: '1s', evaluation_interval: '1s' }, rule_files: ['rules.yaml'], ...shipped }));

    const port = await prometheusPort();
    const api = `http://127.0.0.1:${port}`;
    proc = spawn(prometheus as string, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    const running = proc;
    const logText = () => log;

    await poll('ready Prometheus', async () => ((await getJson(`${api}/-/ready`)).status === 200 ? true : undefined), running, logText);
    const res = await request(`${fwd.fwd.url}/test`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' } });
    assert.is(res.statusCode, 200);
    await res.body.dump();

    const query = `${api}/api/v1/query?query=${encodeURIComponent('enginesecurity_enginesidekick_engine_events_total')}`;
    const series = await poll(
      'Test rule series',
      async () => {
        const r = await getJson(query);
        const result = (r.body as { data?: { result?: Sample[] } })?.data?.result ?? [];
        return result.length > 0 ? result : undefined;
      },
      running,
      logText,
    );
    assert.is(series.length, 1);
    const [s] = series as [Sample];
    assert.equal(s.metric, {
      __name__: 'enginesecurity_enginesidekick_engine_events_total',
      container: 'runtime-audit-engine',
      hostname: 'node-a-host',
      instance: target,
      job: 'runtime-audit-engine',
      node: 'node-a',
      priority: '1',
      priority_raw: 'debug',
      rule: 'Test rule',
      source: 'internal',
      tier: 'cluster',
    });
    assert.is(s.value[1], '1');

    // The shipped alert rule is loaded by the real Prometheus and evaluates without error.
    const rules = await poll(
      'evaluated alert rule',
      async () => {
        const r = await getJson(`${api}/api/v1/rules`);
        const groups = (r.body as { data?: { groups?: Array<{ rules: Array<{ name: string; health: string }> }> } })?.data?.groups ?? [];
        const rule = groups[0]?.rules[0];
        return rule && rule.health !== 'unknown' ? rule : undefined;
      },
      running,
      logText,
    );
    assert.equal([rules.name, rules.health], ['RuntimeAuditEngineCriticalEventsAreFiring', 'ok']);
  } finally {
    if (proc && !hasExited(proc)) {
      const exited = new Promise((resolve) => proc!.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    }
    await fwd.fwd.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
