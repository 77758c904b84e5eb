// How the events of a batch that failed on their own are made visible (isolate.ts finds them):
// counted by source and reason in the dropped-events metric, one line through onError, and one
// internal alert per batch (source `internal`, through the forwarder like every detection, as
// the kernel drop alert and the rejected-resource alert are). The alert carries counts only:
// no free text from the events.
import { internalAlert } from '../output/alert.js';
import type { Alert } from '../output/alert.js';
import type { DropReason } from '../metrics/index.js';
import type { SourceEvent } from '../engine/index.js';
import type { FailedRange } from './isolate.js';

/** The rule name of the internal alert for events whose evaluation failed. */
export const EVALUATION_FAILED_RULE = 'Engine internal: event evaluation failed';

/** The drop reason of a failed range. */
function dropReason(r: FailedRange): DropReason {
  return r.error.code === 'ETIMEOUT' ? 'watchdog' : 'trap';
}

/** Failed events by source and reason (the drop metric's series). */
export function failedCounts(failed: readonly FailedRange[], sourceOf: (i: number) => SourceEvent['source']): Array<{ source: SourceEvent['source']; reason: DropReason; n: number }> {
  const counts = new Map<string, { source: SourceEvent['source']; reason: DropReason; n: number }>();
  for (const r of failed) {
    const reason = dropReason(r);
    for (let i = r.start; i < r.start + r.count; i++) {
      const source = sourceOf(i);
      const key = `${source}/${reason}`;
      const c = counts.get(key);
      if (c) c.n++;
      else counts.set(key, { source, reason, n: 1 });
    }
  }
  return [...counts.values()];
}

/** The internal alert for a batch with failed events. */
export function evaluationFailedAlert(failedEvents: number, batchEvents: number, failed: readonly FailedRange[], hostname: string, now: bigint = BigInt(Date.now()) * 1_000_000n): Alert {
  const first = failed[0]!.error;
  const reasons = [...new Set(failed.map(dropReason))].join(',');
  return internalAlert(
    EVALUATION_FAILED_RULE,
    'Warning',
    ['evaluation', 'drops'],
    hostname,
    `${failedEvents} of ${batchEvents} event(s) of a batch could not be evaluated (${reasons}: ${first.code}); the other events were judged`,
    { n_failed: failedEvents, n_batch: batchEvents, reason: reasons, error: first.code },
    now,
  );
}
