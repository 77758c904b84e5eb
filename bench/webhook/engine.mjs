// Part of scenario `webhook`: the engine side of one measurement, run as a child process of
// bench/webhook.ts so that each head (this checkout, or RAE_BENCH_OLD's source tree) and each
// decoder runs in a fresh process with its own modules, and process.cpuUsage() is this engine's
// CPU alone. The head's modules are imported from its build (scripts/build.mjs --out BUILD: tsc's
// JavaScript, what a node runs) by path, through the API both heads share (defaultConfig,
// builtinRulesFiles, DetectionEngine, ensureWebhookTls, startWebhook). Plain JavaScript, run
// without tsx: tsx's transform turns each exported `let` into a getter called on every read, which
// doubled the cost of the decoder's walk (json-scan.ts's validDepth and stringEscaped).
// The engine side (TLS, decode, queue, DetectionEngine with the built-in orchestrator-audit rules,
// alerts counted) runs on this process's one thread; the sender is a child process of its own,
// as the API server would be, posting the bodies over loopback with the API server's client
// certificate. Before the measured run the engine judges WARM_CALLS batches directly: the rule
// figures' first profiles (rule-tally.ts: a group's cold one and its warm-up ones, at sampled
// calls) are a start-up cost that a run of a few hundred calls would otherwise count as steady.
// The measured run is 1,000 batches (400,000 events, some seconds of CPU) after 100 batches of
// warm-up: a node's webhook receives a stream for days, and what it pays per event is the steady
// state. A run of 250 batches after 25 (about one second of CPU) also counted the optimizing
// compiler's last tier-ups and the first old-space collections: on the same build, such runs gave
// 10.3 and 11.7 us an event where runs of 1,000 gave 8.8 and 9.8.
// Usage: node bench/webhook/engine.mjs BUILD DECODER BODIES_FILE STATE_DIR
// Prints one JSON line: the figures of the whole path, then of ingestion alone (evaluate a no-op).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [build, decoder, bodiesFile, stateDir] = process.argv.slice(2);
const BATCH = 400;
const WARMUP_BATCHES = 100;
const BATCHES = 1000;
const WARM_CALLS = 600;
const CONNECTIONS = 4;
const TIME_LIMIT_MS = 180_000;

/** A module of the head's build, by its path under host/. */
const load = async (rel) => import(pathToFileURL(join(build, 'host', rel)).href);
const { defaultConfig } = await load('config/config.js');
const { builtinRulesFiles } = await load('engine/builtin.js');
const { createMetrics } = await load('metrics/index.js');
const { DetectionEngine } = await load('runtime/detection-engine.js');
const { ensureWebhookTls, startWebhook } = await load('sources/audit/index.js');
const { decodeAuditEvents } = await load('sources/audit/batch-bytes.js');

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

/** utime + stime of a process in µs (/proc/<pid>/stat fields 14 and 15; USER_HZ 100), or NaN. */
function procCpuUs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return NaN;
  }
}

/**
 * Posts `count` batches; resolves to the batches' latencies, failed and retried batches, and the
 * sender process's CPU time (senderCpuUs: user + system, µs, from /proc/<pid>/stat just before it exits).
 */
function sendBatches(url, tlsDir, count) {
  // The sender is never profiled (RAE_BENCH_CPU_PROF profiles the engine).
  const child = spawn(process.execPath, ['--input-type=module', '-e', SENDER, url, tlsDir, bodiesFile, String(count), String(CONNECTIONS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let senderCpuUs = NaN;
  child.stdout.on('data', (d) => {
    out += d.toString();
    // The result line is written before the sender closes its pool: its CPU is read while it lives.
    if (out.endsWith('\n') && Number.isNaN(senderCpuUs)) senderCpuUs = procCpuUs(child.pid);
  });
  const timer = setTimeout(() => child.kill('SIGTERM'), TIME_LIMIT_MS);
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`sender exited with ${code}`));
      else resolve({ ...JSON.parse(out), senderCpuUs });
    });
  });
}

/** One measured run: BATCHES batches after a warm-up, to a webhook whose batches go to `evaluate`. */
async function measure(evaluate) {
  const config = defaultConfig({});
  const settings = { ...config.webhook, address: '127.0.0.1', port: 0, queueSize: 50 * BATCH, decoder };
  const material = ensureWebhookTls({ stateDir, webhook: settings });
  if (!material.ok) throw new Error(material.error);
  let evaluated = 0;
  const counting = (events) => {
    evaluated += events.length;
    return evaluate(events);
  };
  const log = (m) => process.stderr.write(`  ${m}\n`);
  const webhook = await startWebhook({ webhook: settings, tls: material.tls, evaluate: counting, metrics: createMetrics({ processMetrics: false }), log });
  try {
    await sendBatches(webhook.url, material.tls.dir, WARMUP_BATCHES);
    await webhook.idle();
    evaluated = 0;
    const t0 = performance.now();
    // The engine's own CPU: this process (TLS, decode, queue, evaluation; the sender is a child).
    const cpu0 = process.cpuUsage();
    const sent = await sendBatches(webhook.url, material.tls.dir, BATCHES);
    await webhook.idle();
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t0) / 1000;
    if (sent.failed > 0 || evaluated !== BATCHES * BATCH) throw new Error(`${sent.failed} batches refused, ${evaluated} of ${BATCHES * BATCH} events evaluated`);
    return { perS: evaluated / seconds, latencies: sent.latencies, retries: sent.retries, cpuUsPerEvent: (cpu.user + cpu.system) / evaluated, senderCpuUsPerEvent: sent.senderCpuUs / evaluated };
  } finally {
    await webhook.close();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const p99 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];

let alerts = 0;
const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'bench', onAlert: () => alerts++ });
const loaded = await engine.load(builtinRulesFiles(['orchestrator-audit']).files);
if (!loaded.swapped) throw new Error(`the orchestrator-audit rules do not load (${build})`);
// Past the rule figures' first profiles (see the header), on the bodies as the webhook decodes them.
const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8')).map((b) => Buffer.from(b));
const limits = { maxEventBytes: 256 * 1024, maxEventDepth: 300 };
for (let i = 0; i < WARM_CALLS; i++) {
  const d = decodeAuditEvents(bodies[i % bodies.length], limits, decoder, 1n);
  if (!d.ok || !d.events) throw new Error('a bench body does not decode');
  engine.evaluate(d.events);
}
alerts = 0;
const evalMs = [];
const full = await measure((batch) => {
  const t = performance.now();
  const n = engine.evaluate(batch);
  evalMs.push(performance.now() - t);
  return n;
});
await engine.close();
const ingest = await measure(() => 0);
const measuredEval = evalMs.slice(-BATCHES);
process.stdout.write(
  `${JSON.stringify({
    events_per_s: full.perS,
    cpu_us_per_event: full.cpuUsPerEvent,
    ingest_events_per_s: ingest.perS,
    ingest_cpu_us_per_event: ingest.cpuUsPerEvent,
    sender_cpu_us_per_event: full.senderCpuUsPerEvent,
    alert_ratio: alerts / ((WARMUP_BATCHES + BATCHES) * BATCH),
    batch_p99_ms: p99(full.latencies),
    batch_median_ms: median(full.latencies),
    evaluate_median_ms: median(measuredEval),
    evaluate_p99_ms: p99(measuredEval),
    retries: full.retries,
  })}\n`,
);
