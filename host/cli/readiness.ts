// The readiness of `rae run`: one status per component (forwarder, engine, api, module, each
// source), set by whoever starts it. The engine is ready when no component is starting, failed,
// or off while required; `off` on purpose (disabled, the module disabled) does not count against
// it, nor does an enabled source that cannot run here when the configuration marks it optional
// (`syscall.optional`). The forwarder serves it on /healthz and /readyz (docs/forwarder.md).
// Consumes component states; produces a Readiness and, on every change, `onChange`; for a source
// that cannot run, the same fact on every channel (reportUnavailableSource).
import type { ComponentStatus, Readiness } from '../forwarder/index.js';
import type { Metrics, SourceUnavailableReason } from '../metrics/index.js';
import { internalAlert, type Alert } from '../output/alert.js';

/** The internal alert's rule name for an enabled source that cannot run on this host. */
const SOURCE_UNAVAILABLE_RULE = 'Engine internal: source unavailable';

/** The component states of one run. */
export class ReadinessBoard {
  private readonly parts = new Map<string, ComponentStatus>();

  constructor(private readonly onChange?: (readiness: Readiness, changed: ComponentStatus) => void) {}

  /** Sets one component's status (a component keeps its first position in the report). */
  set(name: string, status: Omit<ComponentStatus, 'name'>): void {
    const next = { name, ...status };
    const prev = this.parts.get(name);
    if (prev && JSON.stringify(prev) === JSON.stringify(next)) return;
    this.parts.set(name, next);
    this.onChange?.(this.report(), next);
  }

  /** Every component and whether the engine is ready. */
  report(): Readiness {
    const components = [...this.parts.values()];
    return { ready: components.length > 0 && components.every(counts), components };
  }
}

/** Whether a component lets the engine be ready: up, or off and not required. */
function counts(c: ComponentStatus): boolean {
  return c.state === 'up' || (c.state === 'off' && !c.required);
}

/** `name state (why)` of each component that keeps the engine from being ready. */
export function notReady(r: Readiness): string {
  return r.components
    .filter((c) => !counts(c))
    .map((c) => (c.state === 'off' ? `${c.name} off (${c.reason}; ${c.name}.optional is false)` : `${c.name} ${c.state}${c.error ? ` (${c.error})` : ''}`))
    .join(', ');
}

/** Where reportUnavailableSource reports. */
export interface UnavailableChannels {
  board: ReadinessBoard;
  metrics: Pick<Metrics, 'sourceUnavailable'>;
  /** The forwarder (stdout and the configured outputs). */
  submit(alert: Alert): void;
  hostname: string;
  log(message: string, level?: 'error' | 'warning' | 'info'): void;
}

/**
 * An enabled source that cannot run on this host (the kernel probe without privilege or BTF):
 * `off` with the reason on /readyz, required (not ready) unless `optional`; the metric
 * enginesecurity_engine_source_unavailable{source,reason}; one internal alert; and, when
 * required, a log line saying how to accept running without it.
 */
export function reportUnavailableSource(to: UnavailableChannels, source: 'syscall', code: SourceUnavailableReason, reason: string, optional: boolean): void {
  const why = `${code}: ${reason}`;
  to.board.set(source, { state: 'off', reason: why, required: !optional });
  to.metrics.sourceUnavailable(source, code);
  const outcome = optional ? `the engine is ready without it (${source}.optional: true)` : `the engine is not ready without it (${source}.optional: false)`;
  to.submit(
    internalAlert(SOURCE_UNAVAILABLE_RULE, optional ? 'Warning' : 'Critical', ['source', 'readiness'], to.hostname, `the ${source} source cannot run on this host, ${outcome}: ${why}`, {
      'source.name': source,
      'source.code': code,
      'source.reason': reason,
      'source.optional': optional,
    }),
  );
  if (!optional) to.log(`run: not ready while the ${source} source is off (${code}); /healthz and /readyz answer 503. Give the process what it lacks, or set ${source}.optional: true to run ready without it`, 'warning');
}
