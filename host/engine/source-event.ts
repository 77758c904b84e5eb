// What every event source hands to evaluation: the source name, the event time, the event type
// (syscall events), and field access for the reference interpreter and alert formatting.
import type { Source } from './fields.js';
import type { EventAccessor } from './interpreter.js';

/** One event ready for rule matching. */
export interface SourceEvent {
  source: Source;
  /** Event time, ns since epoch. */
  timeNs: bigint;
  /** `evt.type` of a syscall event. */
  evtType?: string;
  fields: EventAccessor;
}
