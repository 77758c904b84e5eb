// Scenario `webhook`: audit events per second ingested over HTTPS and evaluated, with batches of
// 400 (the API server's default --audit-webhook-batch-max-size), and the p99 round trip of one
// batch. The engine side (TLS, decode, queue, DetectionEngine with the built-in orchestrator-audit
// rules, alerts counted) runs on this process's one thread; the sender is a child process, as the
// API server would be, posting EventLists of corpus samples (auditIDs made unique) over loopback,
// with a few connections and the API server's client certificate (client.crt of the engine's
// CA). Bounded: a fixed number of batches after a warm-up, and a time limit.
// Besides the rate, `engine_cpu_us_per_event` is the engine process's own CPU per event
// (process.cpuUsage over the measured run; the sender's CPU, start-up included, is read from
// /proc/<pid>/stat and reported next to it), which a loaded shared machine disturbs far less.
// Both decoders (webhook.decoder: objects, then bytes) are measured in the same run; every figure
// names its decoder.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig } from '../host/config/config.js';
import { builtinRulesFiles } from '../host/engine/builtin.js';
import { createMetrics } from '../host/metrics/index.js';
import { DetectionEngine } from '../host/runtime/detection-engine.js';
import { ensureWebhookTls, startWebhook } from '../host/sources/audit/index.js';
import type { SourceEvent } from '../host/engine/source-event.js';
import type { AuditDecoder } from '../host/sources/audit/batch-bytes.js';
import { figure, median, progress } from './report.js';
import { K8SAUDIT_SAMPLES_URL } from '../support/corpus.js';

const SAMPLES = K8SAUDIT_SAMPLES_URL;
const BATCH = 400;
const WARMUP_BATCHES = 25;
const BATCHES = 250;
const CONNECTIONS = 4;
const TIME_LIMIT_MS = 120_000;

/** The sender (plain ESM run by `node -e`): posts the bodies, prints one JSON line of latencies. */
const SENDER = `
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
const [url, tlsDir, bodiesFile, count, connections] = process.argv.slice(1);
const u = new URL(url);
const pool = new Pool(u.origin, { connections: Number(connections), connect: { ca: readFileSync(tlsDir + '/ca.crt', 'utf8'), cert: readFileSync(tlsDir + '/client.crt', 'utf8'), key: readFileSync(tlsDir + '/client.key', 'utf8') } });
const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8')).map((b) => Buffer.from(b));
const latencies = [];
let next = 0, failed = 0, retries = 0;
const t0 = performance.now();
// One batch until it is taken: a 429/503 (queue full) is sent again after 20 ms, as the API
// server sends a refused batch again (it waits longer: Retry-After, then backoff).
const sendOne = async (body) => {
  const t = performance.now();
  for (;;) {
    const res = await pool.request({ method: 'POST', path: u.pathname, headers: { 'content-type': 'application/json' }, body });
    await res.body.dump();
    if (res.statusCode === 429 || res.statusCode === 503) { retries++; await new Promise((r) => setTimeout(r, 20)); continue; }
    if (res.statusCode !== 200) failed++;
    return performance.now() - t;
  }
};
const worker = async () => {
  while (next < Number(count)) latencies.push(await sendOne(bodies[next++ % bodies.length]));
};
await Promise.all(Array.from({ length: Number(connections) }, worker));
process.stdout.write(JSON.stringify({ latencies, failed, retries, ms: performance.now() - t0 }) + '\\n');
await pool.close();
`;

/** Every audit event object of the corpus samples. */
function corpusEvents(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const f of readdirSync(SAMPLES)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const text = readFileSync(new URL(f, SAMPLES), 'utf8');
    let docs: unknown[];
    try {
      docs = [JSON.parse(text)];
    } catch {
      docs = text
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as unknown);
    }
    for (const d of docs) if (typeof (d as { auditID?: unknown }).auditID === 'string') out.push(d as Record<string, unknown>);
  }
  return out;
}

interface Sent {
  latencies: number[];
  failed: number;
  retries: number;
  ms: number;
  /** The sender process's CPU time (user + system), µs, from /proc/<pid>/stat just before it exits. */
  senderCpuUs: number;
}

const CLOCK_TICK_US = 10_000; // USER_HZ = 100 on Linux

/** utime + stime of a process in µs (/proc/<pid>/stat fields 14 and 15), or NaN. */
function procCpuUs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * CLOCK_TICK_US;
  } catch {
    return NaN;
  }
}

function sendBatches(url: string, tlsDir: string, bodiesFile: string, count: number): Promise<Sent> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SENDER, url, tlsDir, bodiesFile, String(count), String(CONNECTIONS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let senderCpuUs = NaN;
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    // The result line is written before the sender closes its pool: its CPU is read while it lives.
    if (out.endsWith('\n') && Number.isNaN(senderCpuUs)) senderCpuUs = procCpuUs(child.pid);
  });
  const timer = setTimeout(() => child.kill('SIGTERM'), TIME_LIMIT_MS);
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`sender exited with ${code}`));
      else resolve({ ...(JSON.parse(out) as Omit<Sent, 'senderCpuUs'>), senderCpuUs });
    });
  });
}

/** Sends BATCHES batches (after a warm-up) to a webhook whose batches go to `evaluate`; returns rate and latencies. */
async function measure(
  dir: string,
  evaluate: (events: readonly SourceEvent[]) => number,
  bodiesFile: string,
  decoder: AuditDecoder,
): Promise<{ perS: number; latencies: number[]; retries: number; engineCpuUsPerEvent: number; senderCpuUsPerEvent: number }> {
  const config = defaultConfig({});
  const settings = { ...config.webhook, address: '127.0.0.1', port: 0, queueSize: 50 * BATCH, decoder };
  const material = ensureWebhookTls({ stateDir: dir, webhook: settings });
  if (!material.ok) throw new Error(material.error);
  let evaluated = 0;
  const counting = (events: readonly SourceEvent[]) => {
    evaluated += events.length;
    return evaluate(events);
  };
  const webhook = await startWebhook({ webhook: settings, tls: material.tls, evaluate: counting, metrics: createMetrics({ processMetrics: false }), log: progress });
  try {
    await sendBatches(webhook.url, material.tls.dir, bodiesFile, WARMUP_BATCHES);
    await webhook.idle();
    evaluated = 0;
    const t0 = performance.now();
    // The engine's own CPU: this process (TLS, decode, queue, evaluation; the sender is a child).
    const cpu0 = process.cpuUsage();
    const sent = await sendBatches(webhook.url, material.tls.dir, bodiesFile, BATCHES);
    await webhook.idle();
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t0) / 1000;
    if (sent.failed > 0 || evaluated !== BATCHES * BATCH) throw new Error(`${sent.failed} batches refused, ${evaluated} of ${BATCHES * BATCH} events evaluated`);
    return {
      perS: evaluated / seconds,
      latencies: sent.latencies,
      retries: sent.retries,
      engineCpuUsPerEvent: (cpu.user + cpu.system) / evaluated,
      senderCpuUsPerEvent: sent.senderCpuUs / evaluated,
    };
  } finally {
    await webhook.close();
  }
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;

/** The figures of one decoder: the whole path with the built-in orchestrator-audit rules, then ingestion alone. */
async function measureDecoder(dir: string, bodiesFile: string, meanBytes: number, decoder: AuditDecoder): Promise<void> {
  // The whole path: TLS, decode, queue, DetectionEngine (built-in orchestrator-audit rules).
  let alerts = 0;
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'bench', onAlert: () => alerts++ });
  const loaded = await engine.load(builtinRulesFiles(['orchestrator-audit']).files);
  if (!loaded.swapped) throw new Error('the orchestrator-audit rules do not load');
  const evalMs: number[] = [];
  const full = await measure(
    dir,
    (batch) => {
      const t = performance.now();
      const n = engine.evaluate(batch);
      evalMs.push(performance.now() - t);
      return n;
    },
    bodiesFile,
    decoder,
  );
  await engine.close();
  const measuredEval = evalMs.slice(-BATCHES);
  progress(`${decoder}: with evaluation: ${full.perS.toFixed(0)} events/s, ${alerts} alerts in all; evaluate() median ${median(measuredEval).toFixed(2)} ms per batch`);
  // The webhook alone (evaluate does nothing): the ingestion ceiling.
  const ingest = await measure(dir, () => 0, bodiesFile, decoder);
  progress(`${decoder}: ingestion only: ${ingest.perS.toFixed(0)} events/s`);
  const us = (x: number) => Number(x.toFixed(2));
  progress(`${decoder}: engine CPU per event: ${us(full.engineCpuUsPerEvent)} µs with evaluation, ${us(ingest.engineCpuUsPerEvent)} µs ingestion only; sender ${us(full.senderCpuUsPerEvent)} µs`);

  const extra = { decoder, batch: BATCH, batches: BATCHES, connections: CONNECTIONS, body_kib: Math.round(meanBytes / 1024) };
  figure('webhook', 'audit_events_per_s', full.perS, 'events/s', { ...extra, alert_ratio: Number((alerts / ((WARMUP_BATCHES + BATCHES) * BATCH)).toFixed(3)) });
  figure('webhook', 'batch_p99_ms', p99(full.latencies), 'ms', {
    decoder,
    what: 'HTTPS round trip of one 400-event batch until its 200 (429 answers sent again after 20 ms)',
    retries: full.retries,
    median_ms: Number(median(full.latencies).toFixed(2)),
    evaluate_p99_ms: Number(p99(measuredEval).toFixed(2)),
  });
  figure('webhook', 'ingest_events_per_s', ingest.perS, 'events/s', { ...extra, what: 'TLS + decode + queue, evaluate() a no-op' });
  // CPU per event of the engine process alone (not the sender), so a loaded machine or a slow
  // sender does not hide the engine's own cost: 1e6 / this = events/s on one free core.
  figure('webhook', 'engine_cpu_us_per_event', full.engineCpuUsPerEvent, 'µs', {
    decoder,
    what: 'engine process CPU (user + system, all its threads) per event ingested and evaluated over HTTPS',
    one_core_events_per_s: Math.round(1e6 / full.engineCpuUsPerEvent),
    ingest_only_us: us(ingest.engineCpuUsPerEvent),
    sender_cpu_us_per_event: us(full.senderCpuUsPerEvent),
  });
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-webhook-'));
  try {
    // Eight distinct bodies of 400 events each, cycled; every auditID is unique within a body.
    const events = corpusEvents();
    const bodies: string[] = [];
    for (let b = 0; b < 8; b++) {
      const items = Array.from({ length: BATCH }, (_, i) => ({ ...events[(b * BATCH + i) % events.length]!, auditID: `bench-${b}-${i}` }));
      bodies.push(JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items }));
    }
    const bodiesFile = join(dir, 'bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    const meanBytes = bodies.reduce((n, b) => n + b.length, 0) / bodies.length;
    progress(`${events.length} corpus events; batches of ${BATCH} events, ${(meanBytes / 1024).toFixed(0)} KiB per body; ${CONNECTIONS} connections`);

    // Each decoder in turn in the same run (webhook.decoder): `objects` parses every event into
    // JavaScript objects, `bytes` reads fields from the body's bytes (figures carry `decoder`).
    for (const decoder of ['objects', 'bytes'] as const) await measureDecoder(dir, bodiesFile, meanBytes, decoder);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
