// What the detection engine needs from a source whose records it judges without a JS object per
// event (the syscall byte path: host/sources/syscall/ingest.ts). The source's translator writes
// one eval record per event into the module's batch region and decodes matched events for their
// alerts; the runtime knows only modules, records and offsets, never the record format. A source
// whose events can be judged before their context is known (a container's start before its
// metadata) names those events (lateStarts) and gives the context once it came (containerFieldsOf).
import type { RuleModule } from './evaluator.js';

/** A source's translator from its wire records to a module's eval records. */
export interface RecordTranslator {
  /** Writes the eval records of view[0..bytes) into `m`'s batch region; returns how many (event i's wire record at offsets[i]). */
  ingestInto(m: RuleModule, view: Uint8Array, bytes: number, bootToEpochNs: bigint): number;
  /** The wire-record offsets of the last ingestInto() batch (reused by the next call). */
  readonly offsets: Uint32Array;
  /** Event i of the last batch (its wire record at `recordOffset`) as fields, for alert formatting and the reference interpreter. */
  fieldsOf(m: RuleModule, view: Uint8Array, recordOffset: number, event: number): Record<string, unknown>;
  /** Events of the last batch (view as given to ingestInto, n its count) that start a container whose metadata is still missing. */
  lateStarts?(view: Uint8Array, n: number): readonly LateStart[];
  /** The container fields of container `key` as the rules read them now. */
  containerFieldsOf?(key: string): Record<string, unknown>;
}

/** An event judged before its container's metadata came: event index in its batch, and the container it waits for. */
export interface LateStart {
  event: number;
  key: string;
}
