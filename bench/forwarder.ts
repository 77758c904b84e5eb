// Scenario `forwarder`: requests/s of `POST /test` and `POST /` (a Falco JSON alert) against the
// real forwarder on loopback, with p99 latency; then the outputs: alerts/s delivered by the
// webhook, slack-format and file outputs alone, the forwarder's CPU per 1,000 alerts with five
// outputs on (stdout, webhook, slack, teams, file), and stdout's submit-to-line latency with and
// without a stalled webhook output. HTTP receivers run in a child process and deliveries are
// counted as they happen (./forwarder/deliveries.ts), so the CPU figure is the forwarder's own. The stdout output writes into a counting sink so the benchmark's own
// stdout keeps only figure lines. Bounded: fixed request and alert counts.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Alert } from '../host/output/alert.js';
import { Pool } from 'undici';
import { defaultConfig } from '../host/config/config.js';
import { startForwarder } from '../host/forwarder/index.js';
import { startFanout } from '../host/output/fanout.js';
import { createMetrics } from '../host/metrics/index.js';
import { figure, progress } from './report.js';
import { countDeliveries } from './forwarder/deliveries.js';
import { protocolOutputs } from './forwarder/protocol-outputs.js';

const REQUESTS = 20_000;
const CONCURRENCY = 16;
const ALERT = JSON.stringify({
  hostname: 'node-1',
  output: '12:00:00.000000001: Warning Sensitive file opened for reading by non-trusted program (file=/etc/shadow)',
  output_fields: { 'evt.time': 1704196800000000000, 'fd.name': '/etc/shadow', 'proc.name': 'cat', 'user.name': 'root' },
  priority: 'Warning',
  rule: 'Read sensitive file untrusted',
  source: 'syscall',
  tags: ['filesystem', 'mitre_credential_access'],
  time: '2024-01-02T12:00:00.000000001Z',
});

async function load(pool: Pool, path: string, body: string | undefined): Promise<{ perS: number; p99: number; ok: number }> {
  const latencies: number[] = [];
  let ok = 0;
  let next = 0;
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      const t0 = performance.now();
      const res = await pool.request({ method: 'POST', path, headers, body });
      await res.body.dump();
      latencies.push(performance.now() - t0);
      if (res.statusCode === 200) ok++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { perS: latencies.length / seconds, p99: latencies[Math.floor(latencies.length * 0.99)]!, ok };
}

const OUTPUT_ALERTS = 5_000;
/** The file output alone takes 50,000 alerts: about a second, where 5,000 took a tenth. */
const FILE_ALERTS = 50_000;

/** An HTTP receiver in a child process answering 200 (or never, when `hang`); resolves to its URL. */
async function childReceiver(hang: boolean): Promise<{ url: string; child: ChildProcess }> {
  const code = `const s=require('node:http').createServer((q,r)=>{q.resume();q.on('end',()=>{${hang ? '' : 'r.writeHead(200).end()'}})});s.keepAliveTimeout=60000;s.listen(0,'127.0.0.1',()=>process.stdout.write(String(s.address().port)+'\\n'))`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (c: Buffer) => resolve(c.toString().trim())));
  return { url: `http://127.0.0.1:${port}/hook`, child };
}

function benchAlert(i: number): Alert {
  return {
    timeNs: 1_704_196_800_000_000_000n + BigInt(i),
    rule: 'Read sensitive file untrusted',
    priority: 'Warning',
    source: 'syscall',
    tags: ['filesystem', 'mitre_credential_access'],
    hostname: 'node-1',
    message: 'Sensitive file opened for reading by non-trusted program (file=/etc/shadow)',
    outputFields: { 'fd.name': '/etc/shadow', 'proc.name': 'cat', 'user.name': 'root', 'proc.pid': i },
  };
}

function countingSink(onLine: () => void): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const b of chunk) if (b === 10) onLine();
      cb();
    },
  });
}

/** Alerts/s of each output alone, CPU per 1,000 alerts with five outputs, stdout latency with a stalled output. */
async function outputs(): Promise<void> {
  const rx = await childReceiver(false);
  const stalled = await childReceiver(true);
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-fwd-'));
  const start = async (outs: Record<string, unknown>, onLine: () => void = () => {}) => {
    const config = defaultConfig({});
    config.forwarder = { ...config.forwarder, enabled: false, queueSize: FILE_ALERTS + 100, outputs: outs };
    const metrics = createMetrics({ processMetrics: false });
    const deliveries = countDeliveries(metrics);
    const fwd = await startFanout({ config: config.forwarder, metrics, log: () => {}, hostname: 'bench', stdout: countingSink(onLine), env: {} });
    return { fwd, deliveries };
  };
  try {
    for (const [name, outs] of [
      ['warmup', { webhook: { address: rx.url } }], // the receiver's and the HTTP client's first requests, not reported
      ['webhook', { webhook: { address: rx.url } }],
      ['slack', { slack: { webhookurl: rx.url } }],
      ['file', { file: { filename: join(dir, 'alone.json') } }],
    ] as const) {
      const { fwd, deliveries } = await start(outs);
      const alerts = name === 'file' ? FILE_ALERTS : OUTPUT_ALERTS;
      const t0 = performance.now();
      for (let i = 0; i < alerts; i++) fwd.submit(benchAlert(i));
      await deliveries.reached(name === 'warmup' ? 'webhook' : name, alerts);
      const perS = alerts / ((performance.now() - t0) / 1000);
      await fwd.close();
      progress(`${name}: ${alerts} alerts delivered`);
      if (name === 'warmup') continue;
      figure('forwarder', `output_${name}_alerts_per_s`, perS, 'alerts/s', { alerts, receiver: name === 'file' ? 'file' : 'loopback HTTP, child process' });
    }

    const five = { webhook: { address: rx.url }, slack: { webhookurl: rx.url }, teams: { webhookurl: rx.url }, file: { filename: join(dir, 'five.json') } };
    const { fwd, deliveries } = await start(five);
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < OUTPUT_ALERTS; i++) fwd.submit(benchAlert(i));
    await Promise.all((['stdout', 'webhook', 'slack', 'teams', 'file'] as const).map((d) => deliveries.reached(d, OUTPUT_ALERTS)));
    const cpu = process.cpuUsage(cpu0);
    await fwd.close();
    figure('forwarder', 'cpu_ms_per_1000_alerts_5_outputs', ((cpu.user + cpu.system) / 1000) * (1000 / OUTPUT_ALERTS), 'ms CPU', {
      outputs: ['stdout', 'webhook', 'slack', 'teams', 'file'],
      alerts: OUTPUT_ALERTS,
    });

    for (const [label, outs] of [
      ['without', {}],
      ['with_stalled_webhook', { webhook: { address: stalled.url, timeoutms: 600_000, queuesize: 100 } }],
    ] as const) {
      const pending: number[] = [];
      const latencies: number[] = [];
      const s = await start(outs, () => latencies.push(performance.now() - (pending.shift() ?? NaN)));
      for (let i = 0; i < 2000; i++) {
        pending.push(performance.now());
        s.fwd.submit(benchAlert(i));
        await new Promise((r) => setImmediate(r));
      }
      while (latencies.length < 2000) await new Promise((r) => setTimeout(r, 5));
      await s.fwd.close();
      latencies.sort((a, b) => a - b);
      figure('forwarder', `stdout_latency_p50_ms_${label}`, latencies[1000]!, 'ms', { alerts: 2000 });
      figure('forwarder', `stdout_latency_p99_ms_${label}`, latencies[1980]!, 'ms', { alerts: 2000 });
    }
  } finally {
    rx.child.kill();
    stalled.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  await outputs();
  await protocolOutputs();
  const config = defaultConfig({});
  config.forwarder = { ...config.forwarder, port: 0, queueSize: 100_000 };
  let lines = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const b of chunk) if (b === 10) lines++;
      cb();
    },
  });
  const metrics = createMetrics({ processMetrics: false });
  const fanout = await startFanout({ config: config.forwarder, metrics, log: () => {}, hostname: 'bench', stdout: sink });
  const fwd = await startForwarder({ config: config.forwarder, metrics, submit: fanout.submit, log: () => {}, hostname: 'bench' });
  const pool = new Pool(fwd.url, { connections: CONCURRENCY });
  try {
    for (const [name, path, body] of [
      ['test', '/test', undefined],
      ['input', '/', ALERT],
    ] as const) {
      await load(pool, path, body); // warm-up pass
      const r = await load(pool, path, body);
      progress(`${path}: ${r.ok}/${REQUESTS} answered 200, ${lines} alert lines written so far`);
      if (r.ok !== REQUESTS) throw new Error(`${path}: only ${r.ok} of ${REQUESTS} requests answered 200`);
      figure('forwarder', `${name}_requests_per_s`, r.perS, 'requests/s', { requests: REQUESTS, concurrency: CONCURRENCY });
      figure('forwarder', `${name}_p99_ms`, r.p99, 'ms');
    }
  } finally {
    await pool.close();
    await fwd.close();
    await fanout.close();
  }
}
