// Scenario `webhook`: audit events per second ingested over HTTPS and evaluated, with batches of
// 400 (the API server's default --audit-webhook-batch-max-size), and the p99 round trip of one
// batch, for each decoder (webhook.decoder: objects, bytes). Each measurement runs in a child
// process of its own (bench/webhook/engine.mjs: the engine on its one thread, the sender a child
// of it, as the API server would be), posting EventLists of corpus samples (auditIDs made unique).
// Each head runs from its build (scripts/build.mjs --out, made once per bench run), as a node runs
// it: plain JavaScript without tsx, whose transform makes every exported `let` a getter call.
// `engine_cpu_us_per_event` is the engine process's own CPU per event (process.cpuUsage over the
// measured run), which a loaded shared machine disturbs far less than the rate; 1e6 / it is the
// events/s of one free core. RAE_BENCH_OLD=REF measures REF as well (unpacked from git and built,
// with this checkout's node_modules), in turn with this checkout within each round (the
// order flips every round), as old_... figures, with each figure's ratio this/old: the machine's
// load falls on both. RAE_BENCH_ROUNDS sets the rounds (default 3); a figure is the median of its
// rounds and lists every round's value. RAE_BENCH_CPU_PROF=DIR writes each engine's CPU profile
// (node --cpu-prof) into DIR/<head>-<decoder>-<round>/.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { K8SAUDIT_SAMPLES_URL } from '../support/corpus.js';
import { buildHead } from './footprint-split.js';
import { figure, median, progress } from './report.js';

const S = 'webhook';
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const BATCH = 400;
const DECODERS = ['objects', 'bytes'] as const;

/** Every audit event object of the corpus samples. */
function corpusEvents(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const f of readdirSync(K8SAUDIT_SAMPLES_URL)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const text = readFileSync(new URL(f, K8SAUDIT_SAMPLES_URL), 'utf8');
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

/** What one engine run prints (bench/webhook/engine.mjs). */
interface Run {
  events_per_s: number;
  cpu_us_per_event: number;
  ingest_events_per_s: number;
  ingest_cpu_us_per_event: number;
  sender_cpu_us_per_event: number;
  alert_ratio: number;
  batch_p99_ms: number;
  batch_median_ms: number;
  evaluate_median_ms: number;
  evaluate_p99_ms: number;
  retries: number;
}

/** Runs the engine of the head built at `build` with `decoder` in a child process; its figures. */
function engineRun(build: string, decoder: string, bodiesFile: string, stateDir: string, profDir: string | undefined): Promise<Run> {
  const prof = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  const child = spawn(process.execPath, [...prof, join(ROOT, 'bench/webhook/engine.mjs'), build, decoder, bodiesFile, stateDir], { cwd: build, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((res, reject) => {
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`webhook: the engine run (${build}, ${decoder}) exited with ${code}`));
      else res(JSON.parse(out) as Run);
    });
  });
}

const round2 = (x: number) => Number(x.toFixed(2));

/** Runs the scenario. */
export async function run(): Promise<void> {
  const old = process.env.RAE_BENCH_OLD;
  const rounds = Number(process.env.RAE_BENCH_ROUNDS ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`webhook: RAE_BENCH_ROUNDS must be a whole number >= 1, not ${process.env.RAE_BENCH_ROUNDS}`);
  const profRoot = process.env.RAE_BENCH_CPU_PROF;
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
    progress(`${events.length} corpus events; batches of ${BATCH} events, ${(meanBytes / 1024).toFixed(0)} KiB per body`);
    progress(`building this checkout${old ? ` and ${old}` : ''}`);
    mkdirSync(join(dir, 'new'));
    const heads = [{ prefix: '', label: 'this checkout', build: buildHead(join(dir, 'new')).build, runs: new Map<string, Run[]>() }];
    if (old) {
      mkdirSync(join(dir, 'old'));
      heads.push({ prefix: 'old_', label: `old (${old})`, build: buildHead(join(dir, 'old'), old).build, runs: new Map() });
    }
    for (let r = 0; r < rounds; r++) {
      for (const h of r % 2 ? [...heads].reverse() : heads) {
        for (const decoder of DECODERS) {
          const state = join(dir, `state-${h.prefix}${decoder}-${r}`);
          const prof = profRoot ? join(profRoot, `${h.prefix || 'new_'}${decoder}-${r + 1}`) : undefined;
          const x = await engineRun(h.build, decoder, bodiesFile, state, prof);
          progress(
            `round ${r + 1}, ${h.label}, ${decoder}: ${x.events_per_s.toFixed(0)} events/s, engine CPU ${x.cpu_us_per_event.toFixed(2)} µs/event (ingestion only ${x.ingest_cpu_us_per_event.toFixed(2)}), evaluate() median ${x.evaluate_median_ms.toFixed(2)} ms per batch`,
          );
          h.runs.set(decoder, [...(h.runs.get(decoder) ?? []), x]);
        }
      }
    }
    for (const decoder of DECODERS) {
      const extra = { decoder, batch: BATCH, body_kib: Math.round(meanBytes / 1024) };
      for (const h of heads) {
        const runs = h.runs.get(decoder)!;
        const of = (k: keyof Run) => ({ value: median(runs.map((x) => x[k])), values: runs.map((x) => round2(x[k])) });
        const cpu = of('cpu_us_per_event');
        const ingest = of('ingest_cpu_us_per_event');
        figure(S, `${h.prefix}engine_cpu_us_per_event`, cpu.value, 'µs', {
          ...extra,
          what: 'engine process CPU (user + system, all its threads) per event ingested and evaluated over HTTPS',
          values: cpu.values,
          one_core_events_per_s: Math.round(1e6 / cpu.value),
          one_core_range: [Math.round(1e6 / Math.max(...cpu.values)), Math.round(1e6 / Math.min(...cpu.values))],
          alert_ratio: round2(of('alert_ratio').value),
          sender_cpu_us_per_event: round2(of('sender_cpu_us_per_event').value),
        });
        figure(S, `${h.prefix}ingest_cpu_us_per_event`, ingest.value, 'µs', { ...extra, what: 'TLS + decode + queue, evaluate() a no-op', values: ingest.values });
        figure(S, `${h.prefix}audit_events_per_s`, of('events_per_s').value, 'events/s', { ...extra, values: of('events_per_s').values });
        figure(S, `${h.prefix}ingest_events_per_s`, of('ingest_events_per_s').value, 'events/s', { ...extra, values: of('ingest_events_per_s').values });
        figure(S, `${h.prefix}batch_p99_ms`, of('batch_p99_ms').value, 'ms', {
          decoder,
          what: 'HTTPS round trip of one 400-event batch until its 200 (429 answers sent again after 20 ms)',
          median_ms: round2(of('batch_median_ms').value),
          evaluate_median_ms: round2(of('evaluate_median_ms').value),
          evaluate_p99_ms: round2(of('evaluate_p99_ms').value),
          retries: runs.map((x) => x.retries),
        });
      }
      if (heads[1]) {
        const cpu = (h: (typeof heads)[number]) => median(h.runs.get(decoder)!.map((x) => x.cpu_us_per_event));
        figure(S, 'engine_cpu_us_per_event_ratio', cpu(heads[0]!) / cpu(heads[1]), 'this/old', { decoder, old });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
