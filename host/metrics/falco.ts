// Falco 0.45's metric names (names.ts FALCO_METRICS) in the engine's registry, beside the seed's.
// No second count source: each is a prom-client collector that reads, at scrape time, the seed's
// instruments (events received, kernel drops, thread-table drops, output drops, version, rules files) or the process
// state Falco's libs read (/proc/self/status, CPU time); the running sources are the state that
// the readiness board also gets. The one counter updated on the hot path, rules_matches_total,
// is counted by the same call as the seed's detection counter (index.ts alert), because its
// labels vary per rule (a tag_<tag> label per tag, falco_metrics.cpp) where prom-client fixes a
// metric's label names; its series are bounded by the loaded rules and only matched ones appear.
// Consumes the registry and the seed's instruments; produces the hooks the facade calls.
import { readFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { Counter, Gauge, type Metric, type Registry } from 'prom-client';
import { prioritySeverity, type Priority } from '../engine/priority.js';
import { FALCO_METRICS, type FalcoMetricKey, type SourceLabel } from './names.js';
import type { Instruments } from './registry.js';

/** What rules_matches_total needs to know about a loaded rule. */
export interface RuleLabels {
  name: string;
  priority: Priority;
  source: string;
  tags: readonly string[];
}

/** The hooks of Falco's metrics the facade calls. */
export interface FalcoMetrics {
  /** The rules of the running ruleset (replacing the previous set): series of rules no longer loaded, or loaded with other labels, go. */
  loadedRules(rules: Iterable<RuleLabels>): void;
  /** One match of a loaded rule of `source` (anything else is not a rule match and is ignored). */
  ruleMatched(rule: string, source: string): void;
  /** A source started (true) or stopped (false). */
  sourceUp(source: SourceLabel, up: boolean): void;
}

/** Falco's scap engine for each of our sources (libsinsp's engine names). */
const ENGINE_NAMES: Record<SourceLabel, string | undefined> = { syscall: 'modern_bpf', k8s_audit: 'source_plugin', internal: undefined };

/** A tag as a label name: Prometheus admits [a-zA-Z0-9_] after the `tag_` prefix. */
function tagLabel(tag: string): string {
  return `tag_${tag.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}

/** VmRSS and VmSize of /proc/self/status in bytes (what Falco's libs read); undefined off Linux. */
function processMemory(): { rss: number; vsz: number } | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/status', 'latin1');
  } catch {
    return undefined;
  }
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s*(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), vsz: kb('VmSize') };
}

/** Sum of a seed counter's series, optionally those whose labels pass `keep`. */
async function sum(metric: Counter<string>, keep: (labels: Record<string, string | number | undefined>) => boolean = () => true): Promise<number> {
  return (await metric.get()).values.filter((v) => keep(v.labels)).reduce((n, v) => n + v.value, 0);
}

/** Registers Falco's metrics in `registry`, reading `m` (the seed's instruments of the same registry). */
export function registerFalcoMetrics(registry: Registry, m: Instruments): FalcoMetrics {
  const common = (key: FalcoMetricKey) => {
    const d = FALCO_METRICS[key];
    return { name: d.name, help: d.help, labelNames: [...d.labelNames], registers: [registry] };
  };
  const running = new Set<SourceLabel>();

  // Counters that sum a seed counter's series (those passing `keep`) when scraped.
  const summed = (key: FalcoMetricKey, source: Counter<string>, keep?: Parameters<typeof sum>[1]) =>
    new Counter({
      ...common(key),
      async collect() {
        this.reset();
        this.inc(await sum(source, keep));
      },
    });
  summed('scapEvents', m.eventsReceived);
  summed('scapDrops', m.eventsDropped, (l) => l.reason === 'kernel_lost');
  summed('scapDropsFullThreadtable', m.threadTableDrops, (l) => l.reason === 'full');
  summed('outputsQueueDrops', m.outputDropped);
  new Gauge({
    ...common('cpuUsage'),
    collect() {
      const { user, system } = process.cpuUsage();
      this.set((user + system) / 1e6 / Math.max(process.uptime(), 1e-3));
    },
  });
  new Gauge({
    ...common('memoryRss'),
    collect() {
      this.set(processMemory()?.rss ?? process.memoryUsage.rss());
    },
  });
  new Gauge({
    ...common('memoryVsz'),
    collect() {
      const mem = processMemory();
      if (mem) this.set(mem.vsz);
    },
  });
  // Info gauges over the seed's: the same label values, renamed where Falco names them otherwise.
  new Gauge({
    ...common('versionInfo'),
    async collect() {
      this.reset();
      for (const v of (await m.versionInfo.get()).values) this.set({ version: String(v.labels.version) }, 1);
    },
  });
  new Gauge({
    ...common('rulesFilesInfo'),
    async collect() {
      this.reset();
      for (const v of (await m.rulesFilesInfo.get()).values) this.set({ file_name: String(v.labels.file_name), sha256: String(v.labels.sha256) }, 1);
    },
  });
  new Gauge({
    ...common('engineNameInfo'),
    collect() {
      this.reset();
      for (const s of running) {
        const engine_name = ENGINE_NAMES[s];
        if (engine_name) this.set({ engine_name }, 1);
      }
    },
  });
  new Gauge({
    ...common('evtSourceInfo'),
    collect() {
      this.reset();
      for (const evt_source of running) this.set({ evt_source }, 1);
    },
  });
  new Gauge(common('kernelReleaseInfo')).set({ kernel_release: release() }, 1);
  new Gauge(common('hostCpus')).set(cpus().length);
  new Gauge(common('startTimestamp')).set(Math.round(performance.timeOrigin * 1e6));
  new Counter({
    ...common('duration'),
    collect() {
      this.reset();
      this.inc(Math.floor(process.uptime()));
    },
  });

  // rules_matches_total: one series per loaded rule that matched, labels as falco_metrics.cpp writes them.
  const d = FALCO_METRICS.rulesMatches;
  let loaded = new Map<string, Record<string, string>>();
  const counts = new Map<string, { labels: Record<string, string>; value: number }>();
  const rulesMatches = {
    name: d.name,
    help: d.help,
    type: d.type,
    aggregator: 'sum',
    get: async () => ({ name: d.name, help: d.help, type: d.type, aggregator: 'sum', values: [...counts.values()].map((c) => ({ labels: c.labels, value: c.value })) }),
    reset: () => counts.clear(),
  };
  // prom-client's registry takes any object with its metric's get(); its types name only its own classes.
  registry.registerMetric(rulesMatches as unknown as Metric);

  return {
    loadedRules(rules) {
      const next = new Map<string, Record<string, string>>();
      for (const r of rules) {
        const labels: Record<string, string> = { rule_name: r.name, priority: String(prioritySeverity(r.priority)), source: r.source };
        for (const t of r.tags) labels[tagLabel(t)] = 'true';
        next.set(r.name, labels);
      }
      for (const [name, c] of counts) {
        const now = next.get(name);
        if (!now || JSON.stringify(now) !== JSON.stringify(c.labels)) counts.delete(name);
      }
      loaded = next;
    },
    ruleMatched(rule, source) {
      const labels = loaded.get(rule);
      if (!labels || labels.source !== source) return;
      const c = counts.get(rule);
      if (c) c.value++;
      else counts.set(rule, { labels, value: 1 });
    },
    sourceUp(source, up) {
      if (up) running.add(source);
      else running.delete(source);
    },
  };
}
