// Facade of the engine's own fault tracking (docs/api.md, "The engine's own faults"): what
// `rae run` reports, where to, and the few taps it places. Faults reported: uncaught exceptions
// and unhandled rejections (reported, flushed for at most FATAL_FLUSH_MS, then the process ends
// as Node would), compile worker failures and module traps (the detection engine's onError, and
// a ruleset the module rejected because it did not compile),
// outputs that failed past their retries and webhook requests refused (seen through the metrics
// they already count, aggregated), a source that failed to start and a probe that could not load.
// Where to: errorTracking.dsn when set, else the engine's own project in its integrated tracker
// once the API is up (self-project.ts); neither: nothing is reported (logged once).
import type { Db } from '../api/db/index.js';
import type { Metrics } from '../metrics/index.js';
import type { Alert } from '../output/alert.js';
import { RESOURCE_REJECTED_RULE } from '../resources/report.js';
import type { SourceState } from '../resources/sources.js';
import type { RuntimeError } from '../runtime/index.js';
import { parseDsn } from './dsn.js';
import { FaultReporter, type ReporterCounts } from './reporter.js';
import { ensureSelfProject } from './self-project.js';
import { dsnTransport, localTransport } from './transports.js';

export { SELF_PROJECT_PATH } from './self-project.js';
export { parseDsn } from './dsn.js';

/** Aggregation window of repeating faults (a failing output, refused webhook bodies, traps). */
const WINDOW_MS = 60_000;
/** How long a fatal fault may take to leave before the process ends. */
const FATAL_FLUSH_MS = 2000;

/** The compile worker's failures by error code; other engine errors come from evaluation. */
const COMPILE_CODES = new Set(['EWORKER', 'ECOMPILE', 'ECOMPILETIMEOUT']);

/** The fault tracking of one `rae run`. */
export interface FaultTracking {
  /** The metrics with taps on output failures and webhook refusals (every call still counts). */
  tapMetrics(metrics: Metrics): Metrics;
  /** The detection engine's onError: compile worker failures and failed batches (traps, watchdog). */
  engineError(error: RuntimeError): void;
  /** An internal alert of the module: a rejected ruleset (a compile worker failure among them) is a fault. */
  moduleAlert(alert: Alert): void;
  /** A module source's state (ModuleSources onState): a failed start is a fault. */
  sourceState(name: string, state: SourceState): void;
  /** The kernel probe cannot run on this node. */
  probeUnavailable(reason: string): void;
  setRulesHash(hash: string): void;
  /** The API is up: with no DSN, report to the engine's own project in its database. */
  apiStarted(db: Db): Promise<void>;
  /** The API is off or failed: with no DSN, nothing is reported. */
  apiUnavailable(reason: string): void;
  /** Reports uncaught exceptions and unhandled rejections, then ends the process with code 1. */
  handleProcessFaults(): void;
  /** Sends what is pending (bounded) and stops reporting; returns the counts (a second call, the same). */
  close(): Promise<ReporterCounts>;
}

/** The tracking for `errorTracking`, or the problem with its DSN. */
export function createFaultTracking(opts: { dsn: string; version: string; hostname: string; log: (msg: string) => void }): FaultTracking | { problem: string } {
  const target = opts.dsn === '' ? undefined : parseDsn(opts.dsn);
  if (target && 'problem' in target) return { problem: target.problem };
  const reporter = new FaultReporter({ version: opts.version, hostname: opts.hostname, rulesHash: '' }, { windowMs: WINDOW_MS, log: opts.log });
  if (target) reporter.useTransport(dsnTransport(target, opts.version));
  let fatal = false;
  let closed: Promise<ReporterCounts> | undefined;
  const onFatal = (kind: string) => (err: unknown) => {
    const e = err instanceof Error ? err : new Error(String(err));
    process.stderr.write(`run: ${kind}: ${e.stack ?? e.message}\n`);
    if (fatal) return;
    fatal = true;
    reporter.report({ component: 'process', type: e.name || 'Error', message: `${kind}: ${e.message}`, stack: e.stack });
    void reporter.close(FATAL_FLUSH_MS).finally(() => process.exit(1));
  };
  return {
    tapMetrics(metrics) {
      return {
        ...metrics,
        output(destination, ok, seconds) {
          metrics.output(destination, ok, seconds);
          if (!ok) reporter.reportAggregated(`output:${destination}`, { component: 'output', type: 'OutputFailed', message: `an alert to the ${destination} output failed past its retries` });
        },
        webhookRequest(status, reason) {
          metrics.webhookRequest(status, reason);
          if (reason !== 'accepted') reporter.reportAggregated(`webhook:${reason}`, { component: 'webhook', type: 'WebhookRefused', message: `the audit webhook refused a request: ${reason} (HTTP ${status})` });
        },
      };
    },
    engineError(error) {
      const component = COMPILE_CODES.has(error.code) ? 'compile-worker' : 'evaluator';
      opts.log(`engine: ${component} (${error.code}): ${error.message}`);
      reporter.reportAggregated(`engine:${error.code}`, { component, type: error.code, message: error.message });
    },
    moduleAlert(alert) {
      if (alert.rule !== RESOURCE_REJECTED_RULE) return;
      const error = String(alert.outputFields['resource.error'] ?? alert.message);
      const code = /\b(E[A-Z]+): /.exec(error)?.[1];
      const component = code && COMPILE_CODES.has(code) ? 'compile-worker' : 'resources';
      reporter.reportAggregated(`resources:${code ?? 'rejected'}`, { component, type: code ?? 'ResourceRejected', message: alert.message });
    },
    sourceState(name, state) {
      if (state.state === 'failed') reporter.reportAggregated(`source:${name}`, { component: name, type: 'SourceFailed', message: `the ${name} source failed to start: ${state.error}` });
    },
    probeUnavailable(reason) {
      reporter.report({ component: 'syscall', type: 'ProbeUnavailable', message: `the kernel probe did not load: ${reason}` });
    },
    setRulesHash: (hash) => reporter.setRulesHash(hash),
    async apiStarted(db) {
      if (target) return;
      try {
        const self = await ensureSelfProject(db);
        if ('off' in self) reporter.disable(self.off);
        else reporter.useTransport(localTransport(db, self.project, self.publicKey));
      } catch (err) {
        reporter.disable(`cannot set up the engine's project: ${(err as Error).message}`);
      }
    },
    apiUnavailable(reason) {
      if (!target) reporter.disable(`no errorTracking.dsn, and ${reason}`);
    },
    handleProcessFaults() {
      process.on('uncaughtException', onFatal('uncaught exception'));
      process.on('unhandledRejection', onFatal('unhandled rejection'));
    },
    close() {
      closed ??= reporter.close().then((counts) => {
        opts.log(`error tracking: ${counts.faults} fault(s), ${counts.sent} event(s) sent, ${counts.dropped} dropped, ${counts.failed} not accepted`);
        return counts;
      });
      return closed;
    },
  };
}
