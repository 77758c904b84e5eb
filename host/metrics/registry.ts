// Builds the prom-client objects of the metric table (names.ts) in a registry of their own, so a
// process (or a test) can hold several independent sets. Consumes METRICS; produces one
// Counter/Gauge/Histogram per entry, keyed like the table.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { METRICS, type MetricKey } from './names.js';

type Instrument<K extends MetricKey> = (typeof METRICS)[K]['type'] extends 'counter' ? Counter<string> : (typeof METRICS)[K]['type'] extends 'gauge' ? Gauge<string> : Histogram<string>;

/** Every metric of the table, as prom-client objects. */
export type Instruments = { [K in MetricKey]: Instrument<K> };

/** A new registry holding every metric of the table (and, if asked, Node's process metrics). */
export function createRegistry(opts: { processMetrics: boolean }): { registry: Registry; instruments: Instruments } {
  const registry = new Registry();
  const instruments = {} as Record<MetricKey, Counter<string> | Gauge<string> | Histogram<string>>;
  for (const key of Object.keys(METRICS) as MetricKey[]) {
    const d = METRICS[key];
    const common = { name: d.name, help: d.help, labelNames: [...d.labelNames], registers: [registry] };
    if (d.type === 'counter') instruments[key] = new Counter(common);
    else if (d.type === 'gauge') instruments[key] = new Gauge(common);
    else instruments[key] = new Histogram({ ...common, buckets: [...('buckets' in d ? d.buckets : [])] });
  }
  if (opts.processMetrics) collectDefaultMetrics({ register: registry });
  return { registry, instruments: instruments as Instruments };
}
