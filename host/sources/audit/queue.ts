// The bounded queue between the audit webhook and the detection engine. A request's batch is
// admitted whole or not at all (the webhook then answers 429 and the API server sends it again),
// so an accepted event is never dropped for lack of room. The bound is in events and in request
// bytes; a batch larger than the whole bound is still admitted into an empty queue (the body
// limit bounds it). A consumer drains the queue on the event loop, one evaluate() call per
// request batch in arrival order (an evaluator may be asynchronous: its promise is awaited before
// the next batch), yielding to I/O once a turn has evaluated for `turnMs`. The budget is time, not
// a count of batches: with a fixed count, requests (each decoded on arrival) could take most of the
// thread while the queue filled, and full-queue refusals then wasted their decoding; a time slice
// gives evaluation a fair share however large the batches. Consumes SourceEvents; produces evaluate() calls,
// metrics (queue length, evaluated, evaluation time) and, if evaluate throws, counted drops.
import type { Metrics } from '../../metrics/index.js';
import type { SourceEvent } from '../../engine/index.js';

/** What the queue needs. */
export interface AuditQueueOptions {
  /** Most events held at once. */
  capacity: number;
  /** Most request bytes held at once. */
  capacityBytes: number;
  /** Evaluates one batch (DetectionEngine.evaluate); a promise is awaited before the next batch. */
  evaluate(events: readonly SourceEvent[]): number | Promise<number>;
  metrics: Metrics;
  log: (message: string) => void;
  /** Evaluation time per event-loop turn before yielding to I/O, ms (default 50; at least one batch per turn). */
  turnMs?: number;
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
  private running = false;
  private waiters: Array<() => void> = [];
  private done = 0;

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

  /** Events taken off the queue since start: evaluated, or dropped by a failed evaluation. */
  get handled(): number {
    return this.done;
  }

  /** Drops every batch not yet taken for evaluation (a bounded shutdown gave up); returns their event count. */
  discard(): number {
    let n = 0;
    // The batch being evaluated (at `head`) stays: the consumer removes it when its evaluation ends.
    const from = this.running ? this.head + 1 : this.head;
    for (const c of this.chunks.splice(from)) {
      n += c.events.length;
      this.events -= c.events.length;
      this.byteCount -= c.bytes;
    }
    this.opts.metrics.sourceQueueLength('k8s_audit', this.events);
    return n;
  }

  /** Resolves once every admitted event has been evaluated. */
  idle(): Promise<void> {
    if (this.events === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private schedule(): void {
    if (this.running) return;
    this.running = true;
    setImmediate(() => void this.consume());
  }

  /** Evaluates batches in order until the queue is empty, yielding to I/O after `turnMs` of a turn. */
  private async consume(): Promise<void> {
    const budget = this.opts.turnMs ?? 50;
    let turnStart = performance.now();
    while (this.head < this.chunks.length) {
      const chunk = this.chunks[this.head]!;
      const pending = this.evaluate(chunk.events);
      if (pending) await pending;
      // The batch counts against the bound until it has been evaluated.
      this.chunks[this.head++] = undefined as unknown as Chunk;
      this.done += chunk.events.length;
      this.events -= chunk.events.length;
      this.byteCount -= chunk.bytes;
      this.opts.metrics.sourceQueueLength('k8s_audit', this.events);
      if (this.head >= 1024) {
        this.chunks.splice(0, this.head);
        this.head = 0;
      }
      if (this.head < this.chunks.length && performance.now() - turnStart >= budget) {
        await new Promise((resolve) => setImmediate(resolve));
        turnStart = performance.now();
      }
    }
    this.chunks = [];
    this.head = 0;
    this.running = false;
    for (const w of this.waiters.splice(0)) w();
  }

  /** One evaluate() call, timed and counted; a failure drops (and counts) only this batch. */
  private evaluate(events: SourceEvent[]): Promise<void> | undefined {
    const { metrics, log } = this.opts;
    const start = process.hrtime.bigint();
    const finish = (err?: unknown) => {
      metrics.evaluationTime('k8s_audit', Number(process.hrtime.bigint() - start) / 1e9);
      if (err === undefined) metrics.eventsEvaluated('k8s_audit', events.length);
      else {
        metrics.eventsDropped('k8s_audit', 'trap', events.length);
        log(`webhook: evaluation of ${events.length} audit events failed: ${(err as Error)?.message ?? String(err)}`);
      }
    };
    try {
      const r = this.opts.evaluate(events);
      if (typeof r === 'number') return void finish();
      return r.then(
        () => finish(),
        (err: unknown) => finish(err ?? new Error('rejected')),
      );
    } catch (err) {
      finish(err ?? new Error('thrown'));
      return undefined;
    }
  }
}
