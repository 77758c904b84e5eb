// A field read resolved once for a caller that reads the same field on many events (the batch
// encoder's slots, an alert's output fields): an accessor kind that offers readers
// (EventAccessor.readers) has the field's getter looked up once per FieldRef, not by name on
// every read; any other accessor is read through field() and copyText() as before. The values are
// the accessor's own: a reader gives exactly what field() gives.
import type { EventAccessor, FieldRead, FieldReaders, RawValue, TextCopy } from './interpreter.js';
import { TEXT_COPY } from './interpreter.js';
import type { FieldRef } from './ir.js';

const viaField: FieldRead = (ev, ref) => ev.field(ref);
const viaCopyText: TextCopy = (ev, ref, dst, at, limit) => (ev.copyText === undefined ? TEXT_COPY.other : ev.copyText(ref, dst, at, limit));

/** One FieldRef's reads, resolved for the kind of accessor last seen (events of a batch share one). */
export class BoundField {
  private kind: FieldReaders | undefined = undefined;
  private readFn: FieldRead = viaField;
  private copyFn: TextCopy = viaCopyText;

  constructor(readonly ref: FieldRef) {}

  /** ev.field(ref). */
  read(ev: EventAccessor): RawValue | undefined {
    if (ev.readers !== this.kind) this.resolve(ev.readers);
    return this.readFn(ev, this.ref);
  }

  /** ev.copyText(ref, ...), or TEXT_COPY.other when the accessor has none. */
  copy(ev: EventAccessor, dst: Uint8Array, at: number, limit: number): number {
    if (ev.readers !== this.kind) this.resolve(ev.readers);
    return this.copyFn(ev, this.ref, dst, at, limit);
  }

  private resolve(kind: FieldReaders | undefined): void {
    this.kind = kind;
    this.readFn = kind === undefined ? viaField : kind.read(this.ref);
    this.copyFn = kind === undefined ? viaCopyText : kind.copy(this.ref);
  }
}
