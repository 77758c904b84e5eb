// How a rejected resource is made visible: its located diagnostics on stderr, one internal alert
// (source `internal`, through the forwarder like every detection, so it reaches stdout, the
// metrics and every output), and the ruleset-failure counter. Falco's own "hot restart failure"
// alert has empty output_fields and is refused by falcosidekick (reference §2, §8); this one
// carries fields so it is counted and delivered.
import { type Diagnostic, renderDiagnostic, type SourceLookup } from '../engine/index.js';
import type { Metrics, RulesetFailureReason } from '../metrics/index.js';
import { internalAlert } from '../output/alert.js';
import type { Alert } from '../output/alert.js';

/** The rule name of the internal alert for a rejected resource. */
export const RESOURCE_REJECTED_RULE = 'Engine internal: resource rejected';

/** Where reports go. */
export interface Reporter {
  log(message: string): void;
  /** Submits an alert to the forwarder (the same path as detections). */
  alert(alert: Alert): void;
  metrics?: Pick<Metrics, 'rulesetFailed'>;
  hostname: string;
}

/** One rejected resource (or an unreadable document) and its errors. */
export interface Rejection {
  kind: string;
  name: string;
  /** `file:line:col` of the document. */
  where: string;
  errors: Diagnostic[];
  /** The ruleset-failure metric's reason (default invalid). */
  reason?: RulesetFailureReason;
}

/** A diagnostic in one line: `file:line:col: message` at its innermost location. */
export function headline(d: Diagnostic): string {
  const last = d.locations.at(-1)?.position;
  return `${last ? `${last.name}:${last.line}:${last.column}: ` : ''}${d.message}`;
}

/** What still runs after a rejection. */
function keeps(running: boolean): string {
  return running ? 'the running rules stay' : 'no ruleset is running';
}

/** The internal alert for a rejection; `running` says whether a ruleset is still running. */
function rejectionAlert(r: Rejection, hostname: string, running = true, now: bigint = BigInt(Date.now()) * 1_000_000n): Alert {
  const first = r.errors[0] ? headline(r.errors[0]) : 'invalid';
  const what = r.name ? `${r.kind}/${r.name}` : r.kind || 'a manifest document';
  return internalAlert(
    RESOURCE_REJECTED_RULE,
    'Error',
    ['resources'],
    hostname,
    `${what} at ${r.where} has ${r.errors.length} error(s), ${keeps(running)} (first: ${first})`,
    {
      'resource.kind': r.kind || null,
      'resource.name': r.name || null,
      'resource.file': r.where,
      'resource.errors': r.errors.length,
      'resource.error': first,
    },
    now,
  );
}

/** Reports one rejection on every channel. */
export function reportRejection(rep: Reporter, r: Rejection, lookup: SourceLookup, running = true): void {
  for (const d of r.errors) rep.log(renderDiagnostic(d, lookup));
  const what = r.name ? `${r.kind}/${r.name}` : r.kind || 'document';
  rep.log(`resources: rejected ${what} at ${r.where}: ${r.errors.length} error(s); ${keeps(running)}`);
  rep.metrics?.rulesetFailed(r.reason ?? 'invalid');
  rep.alert(rejectionAlert(r, rep.hostname, running));
}
