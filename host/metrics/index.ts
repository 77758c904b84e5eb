// The engine's metrics facade: typed helpers over the metric table (names.ts), each backed by its
// own prom-client registry (registry.ts). Label values are closed enums or bounded sets:
// `rule` admits the loaded rules' names plus at most `maxExtraRules` others, `hostname` at most
// `maxHostnames`, `source` the engine's sources plus at most `maxExtraSources`; past a limit the
// value is "(other)" and enginesecurity_enginesidekick_label_overflow_total counts it. Falco 0.45's
// names are served beside them from the same state (falco.ts).
import type { Registry } from 'prom-client';
import { priorityNumber, type Priority } from '../engine/priority.js';
import type { RuleFigure } from '../engine/index.js';
import { BoundedLabel } from './bounded.js';
import { registerFalcoMetrics, type RuleLabels } from './falco.js';
import { createRegistry } from './registry.js';
import {
  SOURCES,
  type ContainerLookupResult,
  type LateStartResult,
  type Destination,
  type DropReason,
  type ProcessLookupResult,
  type ReferenceReason,
  type RulesetFailureReason,
  type SourceLabel,
  type SourceUnavailableReason,
  type ThreadTableDropReason,
  type TruncateReason,
  type WebhookConnectionCloseReason,
  type WebhookReason,
} from './names.js';

export { FALCO_METRICS, METRICS } from './names.js';
export type { Destination, DropReason, RulesetFailureReason, SourceLabel, SourceUnavailableReason, WebhookReason } from './names.js';

/** What the events counter needs to know about an alert (an Alert fits). */
interface AlertLabels {
  hostname: string;
  priority: Priority;
  rule: string;
  source: string;
}

/** Limits on label values that come from outside. */
export interface MetricsOptions {
  /** Node process metrics (process_*, nodejs_*) in the same registry; default true. */
  processMetrics?: boolean;
  maxExtraRules?: number;
  maxHostnames?: number;
  maxExtraSources?: number;
}

/** The engine's metrics. */
export interface Metrics {
  readonly registry: Registry;
  /** The Prometheus text exposition and its content type (for GET /metrics). */
  exposition(): Promise<{ contentType: string; body: string }>;
  /** The running ruleset's rules (call on every load): their names are always valid `rule` label values, and their labels those of falcosecurity_falco_rules_matches_total. */
  knownRules(rules: Iterable<RuleLabels>): void;
  /** One alert through the forwarder: enginesecurity_enginesidekick_engine_events_total; `ruleMatch` when the detection engine raised it (a match of a loaded rule also counts in falcosecurity_falco_rules_matches_total). */
  alert(a: AlertLabels, ruleMatch?: boolean): void;
  /** One request to POST / or POST /test. */
  input(accepted: boolean): void;
  /** One finished delivery; `seconds` from queueing to the outcome, when known. */
  output(destination: Destination, ok: boolean, seconds?: number): void;
  outputRetry(destination: Destination): void;
  outputDropped(destination: Destination): void;
  outputQueueLength(destination: Destination, length: number): void;
  /** One alert held by output aggregation (a repeat inside its key's window). */
  aggregationHeld(rule: string): void;
  /** One summary alert sent by output aggregation. */
  aggregationSummary(rule: string): void;
  /** One alert passed unaggregated because aggregation tracked its maximum of keys. */
  aggregationOverflow(): void;
  eventsReceived(source: SourceLabel, n?: number): void;
  eventsEvaluated(source: SourceLabel, n?: number): void;
  eventsDropped(source: SourceLabel, reason: DropReason, n?: number): void;
  /** Events evaluated with part of their content cut at decode. */
  eventsTruncated(source: SourceLabel, reason: TruncateReason, n?: number): void;
  /** A process first seen in a syscall record, by how its thread entry was filled. */
  processLookup(result: ProcessLookupResult): void;
  /** Events of the compiled tier judged by the reference interpreter, by reason. */
  eventsReferenceJudged(source: SourceLabel, reason: ReferenceReason, n?: number): void;
  /** One audit webhook request, by HTTP status and reason. */
  webhookRequest(status: number, reason: WebhookReason): void;
  /** One connection the audit webhook closed before answering, by reason. */
  webhookConnectionClosed(reason: WebhookConnectionCloseReason): void;
  /** Events waiting in a source's queue. */
  sourceQueueLength(source: SourceLabel, length: number): void;
  /** A source started (true) or stopped: falcosecurity_scap_engine_name_info and falcosecurity_falco_evt_source_info. */
  sourceUp(source: SourceLabel, up: boolean): void;
  /** An enabled source that cannot run on this host, and why: enginesecurity_engine_source_unavailable. */
  sourceUnavailable(source: SourceLabel, reason: SourceUnavailableReason): void;
  /** Seconds spent evaluating one batch. */
  evaluationTime(source: SourceLabel, seconds: number): void;
  rulesLoaded(source: SourceLabel, count: number): void;
  /** enginesecurity_engine_version_info = 1. */
  versionInfo(version: string, engineVersion: string): void;
  /** The configured rules files and their sha256 (bounded: the files the operator configured), replacing the previous set. */
  rulesFiles(files: ReadonlyArray<{ name: string; sha256: string }>): void;
  rulesetSwapped(): void;
  rulesetFailed(reason: RulesetFailureReason): void;
  /** Seconds spent compiling one ruleset. */
  compileTime(seconds: number): void;
  /** Where the kernel path's thread-table drops are counted (its running totals, plain numbers: no prom-client call on the hot path): read at each exposition into enginesecurity_engine_thread_table_drops_total. */
  threadTableDrops(read: () => Readonly<Record<ThreadTableDropReason, number>>): void;
  /** Where the container metadata cache keeps its figures (plain numbers): read at each exposition into enginesecurity_engine_containers and enginesecurity_engine_container_lookups_total. */
  containerMetadata(read: () => ContainerMetadataFigures): void;
  /** Where the per-rule figures come from (the detection engine's ruleFigures): read at each exposition into the enginesecurity_engine_rule_* counters. */
  ruleFigures(read: () => readonly RuleFigure[]): void;
}

/** The container metadata cache's running figures. */
interface ContainerMetadataFigures {
  /** Containers whose metadata is held now. */
  containers: number;
  /** Lookups by how they ended, since start. */
  lookups: Readonly<Record<ContainerLookupResult, number>>;
  /** Container starts judged before their metadata came, by what became of them, since start. */
  lateStarts: Readonly<Record<LateStartResult, number>>;
}

/** A new, independent set of metrics in its own registry. */
export function createMetrics(opts: MetricsOptions = {}): Metrics {
  const { registry, instruments: m } = createRegistry({ processMetrics: opts.processMetrics ?? true });
  const overflow = (label: string) => () => m.labelOverflow.inc({ label });
  const rules = new BoundedLabel(opts.maxExtraRules ?? 256, overflow('rule'));
  rules.allow(['Test rule']);
  const hosts = new BoundedLabel(opts.maxHostnames ?? 64, overflow('hostname'));
  const sources = new BoundedLabel(opts.maxExtraSources ?? 8, overflow('source'));
  sources.allow([...SOURCES, 'syscalls']); // 'syscalls': falcosidekick's value for a payload without source
  const falco = registerFalcoMetrics(registry, m);

  // Rule figures are running totals: each exposition adds what grew since the last one. Their
  // `rule` labels are the loaded rules' names (bounded by the rules ever loaded), not the bounded alert label.
  let readFigures: (() => readonly RuleFigure[]) | undefined;
  const exported = new Map<string, RuleFigure>();
  const syncFigures = () => {
    for (const f of readFigures?.() ?? []) {
      const key = `${f.source}\0${f.rule}`;
      const last = exported.get(key);
      const labels = { rule: f.rule, source: f.source };
      const add = (c: typeof m.ruleMatches, now: number, before: number) => {
        if (now > before || !last) c.inc(labels, Math.max(0, now - before));
      };
      add(m.ruleEvaluations, f.evaluations, last?.evaluations ?? 0);
      add(m.ruleMatches, f.matches, last?.matches ?? 0);
      add(m.ruleCostSeconds, f.costSeconds, last?.costSeconds ?? 0);
      exported.set(key, f);
    }
  };

  // Thread-table drops are the table's running totals: each exposition sets the counter to them.
  let readThreadTableDrops: (() => Readonly<Record<ThreadTableDropReason, number>>) | undefined;
  const syncThreadTableDrops = () => {
    const drops = readThreadTableDrops?.();
    if (!drops) return;
    m.threadTableDrops.reset();
    for (const [reason, n] of Object.entries(drops)) m.threadTableDrops.inc({ reason }, n);
  };

  // The container metadata cache's figures are running totals too: set at each exposition.
  let readContainers: (() => ContainerMetadataFigures) | undefined;
  const syncContainers = () => {
    const f = readContainers?.();
    if (!f) return;
    m.containers.set(f.containers);
    m.containerLookups.reset();
    for (const [result, n] of Object.entries(f.lookups)) m.containerLookups.inc({ result }, n);
    m.containerLateStarts.reset();
    for (const [result, n] of Object.entries(f.lateStarts)) m.containerLateStarts.inc({ result }, n);
  };

  // The process's memory by area (bench footprint reads it): read at each exposition.
  const syncMemory = () => {
    const u = process.memoryUsage();
    for (const [area, bytes] of [
      ['rss', u.rss],
      ['heap_used', u.heapUsed],
      ['heap_total', u.heapTotal],
      ['external', u.external],
      ['array_buffers', u.arrayBuffers],
    ] as const)
      m.memoryBytes.set({ area }, bytes);
  };

  return {
    registry,
    async exposition() {
      syncFigures();
      syncThreadTableDrops();
      syncContainers();
      syncMemory();
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    ruleFigures: (read) => {
      readFigures = read;
    },
    threadTableDrops: (read) => {
      readThreadTableDrops = read;
    },
    containerMetadata: (read) => {
      readContainers = read;
    },
    knownRules(loaded) {
      const list = [...loaded];
      rules.allow(list.map((r) => r.name));
      falco.loadedRules(list);
    },
    alert(a, ruleMatch = false) {
      m.alerts.inc({
        hostname: hosts.value(a.hostname || 'unknown'),
        priority: String(priorityNumber(a.priority)),
        priority_raw: a.priority.toLowerCase(),
        rule: rules.value(a.rule),
        source: sources.value(a.source),
      });
      if (ruleMatch) falco.ruleMatched(a.rule, a.source);
    },
    input: (accepted) => m.inputs.inc({ source: 'requests', status: accepted ? 'accepted' : 'rejected' }),
    output(destination, ok, seconds) {
      const status = ok ? 'ok' : 'error';
      m.outputs.inc({ destination, status });
      if (seconds !== undefined) m.outputSeconds.observe({ destination, status }, seconds);
    },
    outputRetry: (destination) => m.outputRetries.inc({ destination }),
    outputDropped: (destination) => m.outputDropped.inc({ destination }),
    outputQueueLength: (destination, length) => m.outputQueue.set({ destination }, length),
    aggregationHeld: (rule) => m.aggregationHeld.inc({ rule: rules.value(rule) }),
    aggregationSummary: (rule) => m.aggregationSummaries.inc({ rule: rules.value(rule) }),
    aggregationOverflow: () => m.aggregationOverflow.inc(),
    eventsReceived: (source, n = 1) => m.eventsReceived.inc({ source }, n),
    eventsEvaluated: (source, n = 1) => m.eventsEvaluated.inc({ source }, n),
    eventsDropped: (source, reason, n = 1) => m.eventsDropped.inc({ source, reason }, n),
    eventsTruncated: (source, reason, n = 1) => m.eventsTruncated.inc({ source, reason }, n),
    processLookup: (result) => m.processLookups.inc({ result }),
    eventsReferenceJudged: (source, reason, n = 1) => m.eventsReferenceJudged.inc({ source, reason }, n),
    webhookRequest: (status, reason) => m.webhookRequests.inc({ status: String(status), reason }),
    webhookConnectionClosed: (reason) => m.webhookConnectionsClosed.inc({ reason }),
    sourceQueueLength: (source, length) => m.sourceQueue.set({ source }, length),
    sourceUp: (source, up) => falco.sourceUp(source, up),
    sourceUnavailable: (source, reason) => m.sourceUnavailable.set({ source, reason }, 1),
    evaluationTime: (source, seconds) => m.evaluationSeconds.observe({ source }, seconds),
    rulesLoaded: (source, count) => m.rulesLoaded.set({ source }, count),
    versionInfo: (version, engine_version) => m.versionInfo.set({ version, engine_version }, 1),
    rulesFiles: (files) => {
      m.rulesFilesInfo.reset();
      for (const f of files) m.rulesFilesInfo.set({ file_name: f.name, sha256: f.sha256 }, 1);
    },
    rulesetSwapped: () => m.rulesetSwaps.inc(),
    rulesetFailed: (reason) => m.rulesetFailures.inc({ reason }),
    compileTime: (seconds) => m.compileSeconds.observe(seconds),
  };
}
