// The fan-out: the engine's one way out for alerts. Every detection, every internal alert and
// every alert the forwarder's server receives (POST /, POST /test) goes through `submit`, which
// counts it in enginesecurity_enginesidekick_engine_events_total and hands it to each
// destination's bounded queue: stdout first (JSON lines, on by default), then the destinations
// of forwarder.outputs in table order (destinations/table.ts). It runs whether or not the
// forwarder's server does. Alerts a full queue dropped are reported by one rate-limited internal
// alert. A stage that acts on every alert before the destinations belongs in `submit`, between
// the count and the push, as aggregation does (aggregate.ts: repeats held, their summary pushed
// at the window's end and by close()); a new destination is a file in destinations/ and a row in
// destinations/table.ts. Consumes OutputConfig + Metrics; produces a Fanout.
import type { Writable } from 'node:stream';
import type { Destination, Metrics } from '../metrics/index.js';
import { Aggregator, type AggregationClock } from './aggregate.js';
import { internalAlert, type Alert } from './alert.js';
import { resolveAggregation, type OutputConfig } from './config.js';
import { createOutput, fieldAdapter } from './destinations/common.js';
import { createStdoutOutput } from './destinations/stdout.js';
import { resolveOutputs } from './destinations/table.js';
import { Delivery, type Output, type OutputContext } from './destinations/types.js';
import { falcoJsonWriter } from './falco-json.js';

/** The running fan-out. */
export interface Fanout {
  /** Counts the alert and queues it on every destination (unless aggregation holds it); never waits, drops are counted. */
  submit(alert: Alert): void;
  /** Each destination and its health (undefined = healthy, else its last failure). */
  outputs(): Array<{ destination: Destination; health: string | undefined }>;
  /** Delivers what is queued (bounded wait), reports the last drops, closes the destinations. */
  close(): Promise<void>;
}

/** What startFanout needs. */
export interface FanoutOptions {
  config: OutputConfig;
  metrics: Metrics;
  /** Log lines (stderr); never stdout. */
  log: (message: string) => void;
  /** The hostname of internal alerts and of destinations that name the sender. */
  hostname: string;
  /** Where the stdout destination writes (tests); process.stdout by default. */
  stdout?: Writable;
  /** The environment falcosidekick's variables are read from; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Least time between two drop alerts; default 10 s. */
  dropAlertIntervalMs?: number;
  /** The aggregation windows' clock (unit tests drive it by hand); real time by default. */
  aggregationClock?: AggregationClock;
}

/** How long close() lets queued alerts drain. */
const DRAIN_MS = 5000;

/** The rule name of the internal alert for alerts a destination dropped (its queue was full). */
export const OUTPUT_DROP_RULE = 'Forwarder output dropped alerts';

/** The internal alert for alerts dropped by full destination queues since the last one. */
function outputDropAlert(drops: ReadonlyMap<Destination, number>, hostname: string, now: bigint = BigInt(Date.now()) * 1_000_000n): Alert {
  const list = [...drops].map(([d, n]) => `${d}=${n}`).join(' ');
  const total = [...drops.values()].reduce((a, b) => a + b, 0);
  return internalAlert(OUTPUT_DROP_RULE, 'Warning', ['forwarder', 'drops'], hostname, `${total} alert(s) dropped since the last report because an output's queue was full (${list})`, { n_drops: total, outputs: [...drops.keys()] }, now);
}

/** Starts the destinations. A bad destination setting is a rejected promise whose message names the key. */
export async function startFanout(opts: FanoutOptions): Promise<Fanout> {
  const { config: oc, metrics, log } = opts;
  const resolved = resolveOutputs(oc, opts.env ?? process.env);
  const aggregation = resolveAggregation(oc.aggregation);
  const problems = [...resolved.problems, ...aggregation.problems];
  if (problems.length > 0) throw new Error(problems.map((p) => `config ${p.key}: ${p.message}`).join('; '));
  const globalFieldNames = [...Object.keys(resolved.global.customfields), ...Object.keys(resolved.global.templatedfields)];
  const ctx: OutputContext = { metrics, log, hostname: opts.hostname, globalFieldNames };
  const writeLine = falcoJsonWriter(oc.falco);

  // Drops are reported by one rate-limited internal alert, sent to the destinations that are not dropping.
  const drops = new Map<Destination, number>();
  const dropInterval = opts.dropAlertIntervalMs ?? 10_000;
  let lastDropAlert = -Infinity;
  let dropTimer: NodeJS.Timeout | undefined;
  function reportDrops(): void {
    dropTimer = undefined;
    if (drops.size === 0) return;
    lastDropAlert = performance.now();
    const a = outputDropAlert(drops, opts.hostname);
    const skip = new Set(drops.keys());
    drops.clear();
    metrics.alert(a);
    const d = new Delivery(a, writeLine);
    for (const o of outputs) if (!skip.has(o.destination)) o.push(d);
  }
  function onDrop(destination: Destination): void {
    drops.set(destination, (drops.get(destination) ?? 0) + 1);
    if (dropTimer) return;
    dropTimer = setTimeout(reportDrops, Math.max(0, lastDropAlert + dropInterval - performance.now()));
    dropTimer.unref();
  }

  const outputs: Output[] = [];
  const global = resolved.global;
  if (oc.stdout) {
    const stdout = createStdoutOutput({ stream: opts.stdout, capacity: oc.queueSize, metrics, log, onDrop });
    const adapt = fieldAdapter(global.customfields, global.templatedfields);
    outputs.push({ ...stdout, push: (d) => stdout.push(adapt(d)) });
  }
  try {
    for (const r of resolved.outputs) {
      const sender = await r.row.create(r.settings, ctx);
      outputs.push(createOutput(r.row.name, r.settings, sender, ctx, global, onDrop));
    }
  } catch (err) {
    await Promise.all(outputs.map((o) => o.close(0)));
    throw err;
  }

  function deliver(alert: Alert): void {
    const d = new Delivery(alert, writeLine);
    // read per alert: a ModuleConfig's debugLogging changes it while running (host/resources/module.ts)
    if (oc.debugLogging) log(`[DEBUG] : forwarder payload : ${d.json}`);
    for (const o of outputs) o.push(d);
  }
  // summaries are not detections: engine_events_total counted each held alert already
  const aggregator = new Aggregator(
    aggregation.plan,
    {
      emit(summary) {
        metrics.aggregationSummary(summary.rule);
        deliver(summary);
      },
      held: (rule) => metrics.aggregationHeld(rule),
      overflow: () => metrics.aggregationOverflow(),
    },
    opts.aggregationClock,
  );

  return {
    submit(alert) {
      metrics.alert(alert);
      if (aggregator.offer(alert)) deliver(alert);
    },
    outputs: () => outputs.map((o) => ({ destination: o.destination, health: o.health() })),
    async close() {
      aggregator.flush(); // every pending summary, before the destinations drain and close
      if (dropTimer) {
        clearTimeout(dropTimer);
        reportDrops(); // the drops since the last report, before the destinations close
      }
      await Promise.all(outputs.map((o) => o.close(DRAIN_MS)));
    },
  };
}
