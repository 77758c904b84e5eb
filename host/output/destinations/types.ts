// What every destination (one file each in this folder) looks like: a Sender (the destination's
// transport: send a batch, health, close) that common.ts wraps in the common behaviour — minimum
// priority, custom and templated fields, the bounded queue with retries (../queue.ts) — and an
// Output, which is what the fan-out (../fanout.ts) pushes alerts to.
import { alertJson, type Alert } from '../alert.js';
import type { Destination, Metrics } from '../../metrics/index.js';

/** One alert on its way to the outputs; the JSON line is built once, on first use, off the submit path. */
export class Delivery {
  private line: string | undefined;
  /** `format` writes the JSON line: alertJson, or Falco's JSON switches applied (falco-json.ts). */
  constructor(
    readonly alert: Alert,
    readonly format: (a: Alert) => string = alertJson,
  ) {}

  /** The alert's JSON line, computed once. */
  get json(): string {
    this.line ??= this.format(this.alert);
    return this.line;
  }
}

/** One destination, as the forwarder sees it. */
export interface Output {
  readonly destination: Destination;
  /** Queues the delivery; never waits. Returns false (and counts a drop) when the queue is full. */
  push(d: Delivery): boolean;
  /** undefined while healthy (the last delivery succeeded or none was tried), else the last failure. */
  health(): string | undefined;
  /** Delivers what is queued (up to `drainMs`), then releases resources. */
  close(drainMs: number): Promise<void>;
}

/** The outcome of one delivery attempt: undefined when delivered, else the reason. */
export type AttemptResult = string | undefined;

/** A destination's transport; each output file builds one. */
export interface Sender {
  /** Most alerts one send() takes (default 1: one alert per attempt, as falcosidekick). */
  readonly maxBatch?: number;
  /** One attempt to deliver the batch (1..maxBatch alerts); `signal` aborts it when the output is closed. Never throws. */
  send(batch: readonly Delivery[], signal: AbortSignal): AttemptResult | Promise<AttemptResult>;
  /** Releases connections, files, processes; called once, after the queue has drained. */
  close?(): Promise<void>;
}

/** What an output's factory gets besides its settings. */
export interface OutputContext {
  metrics: Metrics;
  /** Log lines (stderr). */
  log: (message: string) => void;
  /** The forwarder's hostname (used by outputs that name the sender). */
  hostname: string;
  /** Names of the global customfields and templatedfields (Loki sends them as stream labels). */
  globalFieldNames?: readonly string[];
  /** The API's database, once open (the store destination's; store.ts). */
  alertDatabase?: AlertDatabaseLink;
}

/** What the store writes through: the API's database (host/api/db's Db has this shape). */
export interface AlertDatabase {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
}

/** The API's database as the store sees it: not open yet, open, or gone (failed to start, or closed). */
export interface AlertDatabaseLink {
  /** The open database, or why there is none; while it is still opening, waits (until `signal` aborts: the output closes). */
  get(signal: AbortSignal): Promise<AlertDatabase | string>;
}
