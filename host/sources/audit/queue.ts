// The bounded queue between the audit webhook and the detection engine. A request's batch is
// admitted whole or not at all (the webhook then answers 429 and the API server sends it again),
// so an accepted event is never dropped for lack of room. The bound is in events and in request
// bytes; a batch larger than the whole bound is still admitted into an empty queue (the body
// limit bounds it). A consumer drains the queue on the event loop, one evaluate() call per
// request batch, yielding to I/O between turns. Consumes SourceEvents; produces evaluate() calls,
// metrics (queue length, evaluated, evaluation time) and, if evaluate throws, counted drops.
import type { Metrics } from '../../metrics/index.js';
import type { SourceEvent } from '../types.js';

/** What the queue needs. */
export interface AuditQueueOptions {
  /** Most events held at once. */
  capacity: number;
  /** Most request bytes held at once. */
  capacityBytes: number;
  /** Evaluates one batch synchronously (DetectionEngine.evaluate). */
  evaluate(events: readonly SourceEvent[]): number;
  metrics: Metrics;
  log: (message: string) => void;
  /** Events evaluated per event-loop turn before yielding (default 2000). */
  turnEvents?: number;
}

interface Chunk {
  events: SourceEvent[];
  bytes: number;
}

/** A bounded FIFO of audit event batches with its consumer. */
export class AuditQueue {
  private chunks: Chunk[] = [];
  private head = 0;
  private events = 0;
  private byteCount = 0;
  private scheduled = false;
  private waiters: Array<() => void> = [];

  constructor(private readonly opts: AuditQueueOptions) {}

  /** Events waiting. */
  get length(): number {
    return this.events;
  }

  /** True when no batch of any size would be admitted now. */
  get full(): boolean {
    return this.events >= this.opts.capacity || this.byteCount >= this.opts.capacityBytes;
  }

  /** True when a batch of `events` events and `bytes` request bytes would be admitted now. */
  fits(events: number, bytes: number): boolean {
    return this.events === 0 || (this.events + events <= this.opts.capacity && this.byteCount + bytes <= this.opts.capacityBytes);
  }

  /** Admits the whole batch, or nothing (false) when it does not fit. */
  offer(events: SourceEvent[], bytes: number): boolean {
    if (events.length === 0) return true;
    if (!this.fits(events.length, bytes)) return false;
    this.chunks.push({ events, bytes });
    this.events += events.length;
    this.byteCount += bytes;
    this.opts.metrics.sourceQueueLength('k8s_audit', this.events);
    this.schedule();
    return true;
  }

  /** Resolves once every admitted event has been evaluated. */
  idle(): Promise<void> {
    if (this.events === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.turn());
  }

  private turn(): void {
    this.scheduled = false;
    const budget = this.opts.turnEvents ?? 2000;
    let done = 0;
    while (this.head < this.chunks.length && done < budget) {
      const chunk = this.chunks[this.head]!;
      this.chunks[this.head++] = undefined as unknown as Chunk;
      this.evaluate(chunk.events);
      done += chunk.events.length;
      this.events -= chunk.events.length;
      this.byteCount -= chunk.bytes;
    }
    if (this.head > 1024 || this.head === this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
    this.opts.metrics.sourceQueueLength('k8s_audit', this.events);
    if (this.events > 0) this.schedule();
    else for (const w of this.waiters.splice(0)) w();
  }

  private evaluate(events: SourceEvent[]): void {
    const { metrics } = this.opts;
    const start = process.hrtime.bigint();
    try {
      this.opts.evaluate(events);
      metrics.eventsEvaluated('k8s_audit', events.length);
    } catch (err) {
      // A failing batch is counted and reported; the next batches still run.
      metrics.eventsDropped('k8s_audit', 'trap', events.length);
      this.opts.log(`webhook: evaluation of ${events.length} audit events failed: ${(err as Error).message}`);
    }
    metrics.evaluationTime('k8s_audit', Number(process.hrtime.bigint() - start) / 1e9);
  }
}
