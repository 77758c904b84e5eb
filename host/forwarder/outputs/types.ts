// What every forwarder output (one file per destination in this folder) looks like to the
// forwarder: it takes deliveries without waiting and is closed once.
import { alertJson, type Alert } from '../../output/alert.js';
import type { Destination } from '../../metrics/index.js';

/** One alert on its way to the outputs; the JSON line is built once, on first use, off the submit path. */
export class Delivery {
  private line: string | undefined;
  constructor(readonly alert: Alert) {}

  /** The alert's JSON line (alertJson), computed once. */
  get json(): string {
    this.line ??= alertJson(this.alert);
    return this.line;
  }
}

/** One destination. */
export interface Output {
  readonly destination: Destination;
  /** Queues the delivery; never waits. Returns false (and counts a drop) when the queue is full. */
  push(d: Delivery): boolean;
  /** Delivers what is queued (up to `drainMs`), then releases resources. */
  close(drainMs: number): Promise<void>;
}

/** The outcome of one delivery attempt: undefined when delivered, else the reason. */
export type AttemptResult = string | undefined;
