// Every metric the engine exports, with its help text and label names, in one place. Names follow
// `<namespace>_<subsystem>_<name>_<unit|total>`; the forwarder's metrics keep falcosidekick 2.30's
// shape under our names (reference/module-and-forwarder.md §4): `falcosecurity_falcosidekick_*`
// becomes `enginesecurity_enginesidekick_*`. Labels take values only from the closed sets below or
// from bounded sets (see index.ts): no label ever carries free text from an event.

/** Event sources as label values. */
export const SOURCES = ['syscall', 'k8s_audit', 'internal'] as const;
export type SourceLabel = (typeof SOURCES)[number];

/** Why an event was dropped before or during evaluation. */
const DROP_REASONS = [
  'queue_full', // a bounded queue between a source and the evaluator was full
  'kernel_lost', // the kernel ring buffer reported lost records
  'too_large', // an event exceeded the size limit (e.g. an audit event over maxEventSize)
  'decode_error', // a record or audit item could not be decoded
  'trap', // the evaluator trapped on the batch holding the event
  'watchdog', // evaluation of the batch was stopped by the watchdog
  'no_ruleset', // no ruleset was loaded for the event's source
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** Why an event was evaluated with part of its content cut. */
const TRUNCATE_REASONS = [
  'too_deep', // values nested deeper than the decoder's bound (audit webhook.maxEventDepth) were cut
] as const;
export type TruncateReason = (typeof TRUNCATE_REASONS)[number];

/** The audit webhook's answer to one request: `accepted` (200) or why it was refused. */
const WEBHOOK_REASONS = ['accepted', 'not_found', 'method_not_allowed', 'unsupported_media_type', 'body_too_large', 'bad_request', 'invalid_json', 'not_audit_events', 'queue_full', 'stopping', 'internal'] as const;
export type WebhookReason = (typeof WEBHOOK_REASONS)[number];

/** Why the audit webhook closed a connection before any answer (host/net/connections.ts, docs/security.md). */
const WEBHOOK_CONNECTION_CLOSE_REASONS = [
  'client_limit', // the oldest unauthenticated connection of an address past maxConnectionsPerClient
  'unauthenticated_limit', // the oldest unauthenticated connection past maxUnauthenticatedConnections
  'authenticated_limit', // a verified connection past maxAuthenticatedConnections
  'handshake', // the TLS handshake failed or missed handshakeTimeoutSeconds (a missing client certificate under requireClientCert too)
] as const;
export type WebhookConnectionCloseReason = (typeof WEBHOOK_CONNECTION_CLOSE_REASONS)[number];

/** Why a new ruleset was not installed (the running one stays). */
const RULESET_FAILURE_REASONS = ['invalid', 'compile', 'validate', 'warmup'] as const;
export type RulesetFailureReason = (typeof RULESET_FAILURE_REASONS)[number];

/** Why the compiled tier handed an event to the reference interpreter (host/runtime/reference.ts). */
const REFERENCE_REASONS = [
  'too_large', // the event does not fit the module's batch area on its own
  'scratch', // a transformer result (tolower, b64, concat...) does not fit the module's scratch area
] as const;
export type ReferenceReason = (typeof REFERENCE_REASONS)[number];

/** How the entry of a process first seen in a syscall record was filled (host/sources/syscall/unknown-process.ts). */
const PROCESS_LOOKUP_RESULTS = [
  'procfs', // read from /proc, as libsinsp reads a thread it does not know
  'gone', // no longer in /proc (or its pid reused): the record header's pid, uid and gid
  'deferred', // past the per-batch bound of /proc reads: the header's values until a later batch reads it
] as const;
export type ProcessLookupResult = (typeof PROCESS_LOOKUP_RESULTS)[number];

/** Why the kernel path's thread table (host/sources/syscall/thread-table.ts) could not keep a process whole. */
const THREAD_TABLE_DROP_REASONS = [
  'full', // no free entry: the process goes untracked (libs' n_drops_full_threadtable)
  'strings_cut', // a process string not kept, the table's string heap full even after compaction: the field reads as missing
] as const;
export type ThreadTableDropReason = (typeof THREAD_TABLE_DROP_REASONS)[number];

/** How a lookup of a container's runtime metadata ended (host/sources/container/cache.ts). */
const CONTAINER_LOOKUP_RESULTS = [
  'found', // a runtime answered with the container: its container.* and k8s.* fields read from then on
  'not_found', // no connected runtime knew the id after every retry
  'dropped', // the lookup queue was full: asked again at the container's next unknown event
  'error', // a runtime call failed or missed its deadline (containers.callTimeoutMs); retried
] as const;
export type ContainerLookupResult = (typeof CONTAINER_LOOKUP_RESULTS)[number];

/** What became of a container start judged before its metadata came (host/runtime/late-starts.ts). */
const LATE_START_RESULTS = [
  'held', // judged without the metadata, kept to be judged again when it comes
  'judged', // judged again with the metadata (alerts only for rules that had not fired)
  'dropped', // never judged again: the hold's bound (256) or age (2 min) passed, or the ruleset changed shape
] as const;
export type LateStartResult = (typeof LATE_START_RESULTS)[number];

/** Which evaluator judges decoded events: the compiled module, or the reference interpreter while a new ruleset compiles. */
export const EVALUATOR_TIERS = ['wasm', 'interpreter'] as const;
export type EvaluatorTier = (typeof EVALUATOR_TIERS)[number];

/** Why an enabled source cannot run on this host (the kernel probe's support codes, host/sources/syscall/addon.ts SupportCode). */
const SOURCE_UNAVAILABLE_REASONS = ['ENOTLINUX', 'ENOADDON', 'EABI', 'ENOBTF', 'EPERM', 'ENOTRACEPOINT'] as const;
export type SourceUnavailableReason = (typeof SOURCE_UNAVAILABLE_REASONS)[number];

/** The forwarder's outputs, as `destination` label values. */
const DESTINATIONS = ['stdout', 'webhook', 'file', 'program', 'slack', 'teams', 'mattermost', 'discord', 'googlechat', 'alertmanager', 'loki', 'nats', 'mqtt', 'redis', 'syslog', 'smtp', 'store'] as const;
export type Destination = (typeof DESTINATIONS)[number];

interface Def<L extends string> {
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly buckets?: readonly number[];
}

function def<const D extends Def<string>>(d: D): D {
  return d;
}

/** The metric table. */
export const METRICS = {
  alerts: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_engine_events_total',
    help: 'Alerts accepted by the event forwarder: every detection, POST / and POST /test. priority is 1 (Debug) .. 8 (Emergency).',
    labelNames: ['hostname', 'priority', 'priority_raw', 'rule', 'source'],
  }),
  inputs: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_inputs_total',
    help: 'HTTP requests to the forwarder event inputs (POST / and POST /test), by outcome.',
    labelNames: ['source', 'status'],
  }),
  outputs: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_outputs_total',
    help: 'Alert deliveries per output: status ok, or error once every retry has failed.',
    labelNames: ['destination', 'status'],
  }),
  outputRetries: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_output_retries_total',
    help: 'Failed delivery attempts that were retried.',
    labelNames: ['destination'],
  }),
  outputDropped: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_output_dropped_total',
    help: "Alerts an output refused because its bounded queue (or the stream's buffer) was full.",
    labelNames: ['destination'],
  }),
  outputQueue: def({
    type: 'gauge',
    name: 'enginesecurity_enginesidekick_output_queue_length',
    help: 'Alerts waiting in an output queue.',
    labelNames: ['destination'],
  }),
  outputSeconds: def({
    type: 'histogram',
    name: 'enginesecurity_enginesidekick_output_delivery_seconds',
    help: 'Time from queueing an alert on an output to its final outcome (delivered, or failed after every retry), by destination and status.',
    labelNames: ['destination', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
  }),
  aggregationHeld: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_aggregation_held_total',
    help: "Alerts held by output aggregation (repeats of a key inside its window), by rule; each is counted in engine_events_total too, and reported in its window's summary alert.",
    labelNames: ['rule'],
  }),
  aggregationSummaries: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_aggregation_summaries_total',
    help: 'Summary alerts sent by output aggregation at the end of a window that held repeats, by rule.',
    labelNames: ['rule'],
  }),
  aggregationOverflow: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_aggregation_key_overflow_total',
    help: 'Alerts passed unaggregated because output aggregation already tracked its maximum of keys (forwarder.aggregation.maxKeys).',
    labelNames: [],
  }),
  labelOverflow: def({
    type: 'counter',
    name: 'enginesecurity_enginesidekick_label_overflow_total',
    help: 'Alerts counted under the value "(other)" because a label had reached its limit of distinct values.',
    labelNames: ['label'],
  }),
  eventsReceived: def({
    type: 'counter',
    name: 'enginesecurity_engine_events_received_total',
    help: 'Events received from a source.',
    labelNames: ['source'],
  }),
  eventsEvaluated: def({
    type: 'counter',
    name: 'enginesecurity_engine_events_evaluated_total',
    help: 'Events evaluated against the loaded rules.',
    labelNames: ['source'],
  }),
  eventsDropped: def({
    type: 'counter',
    name: 'enginesecurity_engine_events_dropped_total',
    help: 'Events dropped before or during evaluation, by reason.',
    labelNames: ['source', 'reason'],
  }),
  processLookups: def({
    type: 'counter',
    name: 'enginesecurity_engine_process_lookups_total',
    help: 'Processes first seen in a kernel syscall record (no thread entry: their process records never seen), by how their entry was filled (procfs, gone, deferred).',
    labelNames: ['result'],
  }),
  threadTableDrops: def({
    type: 'counter',
    name: 'enginesecurity_engine_thread_table_drops_total',
    help: "Process records of the kernel source the thread table could not keep whole, by reason: full (no free entry, the process goes untracked; Falco: falcosecurity_scap_n_drops_full_threadtable_total), strings_cut (one string of a process not kept because the table's string heap was full even after compaction; the field reads as missing).",
    labelNames: ['reason'],
  }),
  containers: def({
    type: 'gauge',
    name: 'enginesecurity_engine_containers',
    help: "Containers whose runtime metadata the engine holds (listed at start, learned from the runtimes' events or looked up), read when scraped: their events read container.* and k8s.* fields; a container's events before its metadata arrives read them as missing.",
    labelNames: [],
  }),
  containerLookups: def({
    type: 'counter',
    name: 'enginesecurity_engine_container_lookups_total',
    help: 'Lookups of a container id in the runtimes (an id first seen in an event, or named by a runtime event), read when scraped, by result: found, not_found (no runtime knew it after every retry), dropped (lookup queue full; asked again later), error (a call failed or missed its deadline; each failed call counts).',
    labelNames: ['result'],
  }),
  containerLateStarts: def({
    type: 'counter',
    name: 'enginesecurity_engine_container_late_starts_total',
    help: "Container starts (the init's exec) judged before the container's metadata came, read when scraped, by result: held (kept to be judged again), judged (judged again with the metadata; alerts only for rules that had not fired), dropped (never judged again: bound or age passed).",
    labelNames: ['result'],
  }),
  memoryBytes: def({
    type: 'gauge',
    name: 'enginesecurity_engine_memory_bytes',
    help: "The engine process's memory by area, read when scraped (Node's process.memoryUsage()): rss (resident), heap_used and heap_total (the main thread's V8 heap), external (memory of JS objects held outside the heap: WebAssembly memories, addon buffers), array_buffers (ArrayBuffers and Buffers, part of external). Worker threads' heaps count only in rss.",
    labelNames: ['area'],
  }),
  eventsReferenceJudged: def({
    type: 'counter',
    name: 'enginesecurity_engine_events_reference_judged_total',
    help: 'Events the compiled evaluator could not judge whole in its memory, judged by the reference interpreter instead, by reason.',
    labelNames: ['source', 'reason'],
  }),
  evaluationSeconds: def({
    type: 'histogram',
    name: 'enginesecurity_engine_evaluation_seconds',
    help: 'Time to evaluate one batch of events.',
    labelNames: ['source'],
    buckets: [1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1],
  }),
  ruleEvaluations: def({
    type: 'counter',
    name: 'enginesecurity_engine_rule_evaluations_total',
    help: 'Events that reached a rule after the event-type index (under rule_matching first, not stopped by an earlier match), on either evaluator tier; a rule removed by a reload keeps its series.',
    labelNames: ['rule', 'source'],
  }),
  ruleMatches: def({
    type: 'counter',
    name: 'enginesecurity_engine_rule_matches_total',
    help: 'Events a rule matched (before the output path: every detection).',
    labelNames: ['rule', 'source'],
  }),
  ruleCostSeconds: def({
    type: 'counter',
    name: 'enginesecurity_engine_rule_cost_seconds_total',
    help: 'Time a rule cost: its evaluations times its sampled per-evaluation time, what removing it saves (docs/rule-cost.md).',
    labelNames: ['rule', 'source'],
  }),
  eventsTruncated: def({
    type: 'counter',
    name: 'enginesecurity_engine_events_truncated_total',
    help: 'Events evaluated with part of their content cut at decode, by reason (too_deep: values nested past the depth bound read as missing).',
    labelNames: ['source', 'reason'],
  }),
  webhookRequests: def({ type: 'counter', name: 'enginesecurity_engine_webhook_requests_total', help: 'Requests to the audit webhook by HTTP status and reason (accepted, or why refused).', labelNames: ['status', 'reason'] }),
  sourceUnavailable: def({
    type: 'gauge',
    name: 'enginesecurity_engine_source_unavailable',
    help: '1 per enabled source that cannot run on this host, labelled with why (EPERM, ENOBTF...); unless the configuration marks the source optional (syscall.optional), the engine is not ready meanwhile.',
    labelNames: ['source', 'reason'],
  }),
  webhookConnectionsClosed: def({
    type: 'counter',
    name: 'enginesecurity_engine_webhook_connections_closed_total',
    help: 'Connections the audit webhook closed before answering, by reason (a connection bound, or a failed or late TLS handshake).',
    labelNames: ['reason'],
  }),
  sourceQueue: def({ type: 'gauge', name: 'enginesecurity_engine_source_queue_length', help: 'Events waiting in a source queue for evaluation.', labelNames: ['source'] }),
  versionInfo: def({
    type: 'gauge',
    name: 'enginesecurity_engine_version_info',
    help: "1, labelled with this engine's version and the Falco rules engine version it accepts (Falco: falcosecurity_falco_version_info).",
    labelNames: ['version', 'engine_version'],
  }),
  rulesFilesInfo: def({
    type: 'gauge',
    name: 'enginesecurity_engine_rules_files_info',
    help: '1 per loaded rules file of the running ruleset, labelled with its sha256 (Falco: falcosecurity_falco_sha256_rules_files_info); the set is replaced on each reload.',
    labelNames: ['file_name', 'sha256'],
  }),
  rulesLoaded: def({
    type: 'gauge',
    name: 'enginesecurity_engine_rules_loaded',
    help: 'Enabled rules in the running ruleset.',
    labelNames: ['source'],
  }),
  rulesetSwaps: def({
    type: 'counter',
    name: 'enginesecurity_engine_ruleset_swaps_total',
    help: 'Rulesets installed (the first load and every hot swap).',
    labelNames: [],
  }),
  rulesetFailures: def({
    type: 'counter',
    name: 'enginesecurity_engine_ruleset_failures_total',
    help: 'Rulesets rejected; the running ruleset stayed.',
    labelNames: ['reason'],
  }),
  evaluatorTier: def({
    type: 'gauge',
    name: 'enginesecurity_engine_evaluator_tier',
    help: 'The tier judging decoded events (1 for the active one): wasm, or interpreter while a new ruleset is being compiled (or failed to compile).',
    labelNames: ['tier'],
  }),
  compileSeconds: def({
    type: 'histogram',
    name: 'enginesecurity_engine_ruleset_compile_seconds',
    help: 'Time to compile a ruleset to WebAssembly.',
    labelNames: [],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  }),
} as const;

export type MetricKey = keyof typeof METRICS;

/**
 * Falco 0.45's metrics that have a meaning here, under Falco's names and labels
 * (falcosecurity/falco userspace/falco/falco_metrics.cpp; libs' metrics collectors), so Falco's
 * Grafana dashboard and alert rules read this engine unchanged. Each one reads the state behind
 * a metric of the table above (or the process state Falco's libs read), never a count of its
 * own (falco.ts). docs/metrics.md lists them and the dashboard's names that have no meaning here.
 */
export const FALCO_METRICS = {
  rulesMatches: def({
    type: 'counter',
    name: 'falcosecurity_falco_rules_matches_total',
    help: 'Matches of a loaded rule (Falco\'s rule counters): the detections counted in enginesecurity_enginesidekick_engine_events_total; priority is Falco\'s number (0 Emergency .. 7 Debug), one tag_<tag>="true" label per rule tag. Only rules that matched, and only while loaded.',
    labelNames: ['rule_name', 'priority', 'source'],
  }),
  scapEvents: def({
    type: 'counter',
    name: 'falcosecurity_scap_n_evts_total',
    help: 'Events received from every source: the sum of enginesecurity_engine_events_received_total.',
    labelNames: [],
  }),
  scapDrops: def({
    type: 'counter',
    name: 'falcosecurity_scap_n_drops_total',
    help: 'Kernel records lost because the ring buffer was full: enginesecurity_engine_events_dropped_total{reason="kernel_lost"}.',
    labelNames: [],
  }),
  scapDropsFullThreadtable: def({
    type: 'counter',
    name: 'falcosecurity_scap_n_drops_full_threadtable_total',
    help: 'Processes not tracked because the thread table was full: enginesecurity_engine_thread_table_drops_total{reason="full"}.',
    labelNames: [],
  }),
  outputsQueueDrops: def({
    type: 'counter',
    name: 'falcosecurity_falco_outputs_queue_num_drops_total',
    help: 'Alerts an output refused because its queue was full, over every output: the sum of enginesecurity_enginesidekick_output_dropped_total.',
    labelNames: [],
  }),
  cpuUsage: def({
    type: 'gauge',
    name: 'falcosecurity_falco_cpu_usage_ratio',
    help: "CPU time of the engine's process over its lifetime, as a ratio of one CPU (ps's %CPU / 100, as Falco's libs compute it).",
    labelNames: [],
  }),
  memoryRss: def({ type: 'gauge', name: 'falcosecurity_falco_memory_rss_bytes', help: "Resident memory of the engine's process (VmRSS of /proc/self/status).", labelNames: [] }),
  memoryVsz: def({ type: 'gauge', name: 'falcosecurity_falco_memory_vsz_bytes', help: "Virtual memory of the engine's process (VmSize of /proc/self/status).", labelNames: [] }),
  versionInfo: def({ type: 'gauge', name: 'falcosecurity_falco_version_info', help: "1, labelled with this engine's version (as enginesecurity_engine_version_info).", labelNames: ['version'] }),
  engineNameInfo: def({
    type: 'gauge',
    name: 'falcosecurity_scap_engine_name_info',
    help: "1 per running source, labelled with the capture engine Falco would open for it: modern_bpf for the kernel probe (syscall), source_plugin for the audit webhook (k8s_audit, Falco's k8saudit plugin).",
    labelNames: ['engine_name'],
  }),
  evtSourceInfo: def({ type: 'gauge', name: 'falcosecurity_falco_evt_source_info', help: '1 per running event source (syscall, k8s_audit).', labelNames: ['evt_source'] }),
  rulesFilesInfo: def({
    type: 'gauge',
    name: 'falcosecurity_falco_sha256_rules_files_info',
    help: '1 per loaded rules file of the running ruleset, labelled with its sha256 (as enginesecurity_engine_rules_files_info).',
    labelNames: ['file_name', 'sha256'],
  }),
  kernelReleaseInfo: def({ type: 'gauge', name: 'falcosecurity_falco_kernel_release_info', help: "1, labelled with the host's kernel release (uname -r).", labelNames: ['kernel_release'] }),
  hostCpus: def({ type: 'gauge', name: 'falcosecurity_falco_host_num_cpus_total', help: "The host's CPUs.", labelNames: [] }),
  startTimestamp: def({ type: 'gauge', name: 'falcosecurity_falco_start_timestamp_nanoseconds', help: "When the engine's process started, ns since the epoch.", labelNames: [] }),
  duration: def({ type: 'counter', name: 'falcosecurity_falco_duration_seconds_total', help: "Seconds since the engine's process started.", labelNames: [] }),
} as const;

export type FalcoMetricKey = keyof typeof FALCO_METRICS;
