// The delivery loop every output shares: a bounded FIFO (a full queue refuses and counts the
// alert, never blocking the producer), one worker that delivers in order (in batches when the
// sender takes them), retries a failed attempt with exponential backoff and jitter, and counts
// each final outcome and its latency from queueing. Logs only when
// an output starts failing and when it recovers, so a dead receiver cannot flood stderr.
import type { Metrics, Destination } from '../metrics/index.js';
import type { AttemptResult, Delivery, Output, Sender } from './destinations/types.js';

/** How an output delivers alerts and how hard it tries. */
export interface QueuedOutputSpec {
  destination: Destination;
  /** Queue bound (alerts waiting, not counting the ones in flight). */
  capacity: number;
  /** Attempts after the first failed one. */
  retries: number;
  /** Delay before retry number `attempt` (0-based); default 100 ms doubling, capped at 5 s, ±20 % jitter. */
  backoffMs?: (attempt: number) => number;
  /** The transport: one attempt per call, with up to `sender.maxBatch` alerts. */
  sender: Sender;
  /** Called with the number of alerts refused because the queue was full (the forwarder's drop alert). */
  onDrop?: (destination: Destination) => void;
  metrics: Metrics;
  log: (message: string) => void;
}

/** Default backoff: 100 ms, 200 ms, 400 ms ... capped at 5 s, each ±20 %. */
function defaultBackoffMs(attempt: number): number {
  const base = Math.min(5000, 100 * 2 ** attempt);
  return base * (0.8 + Math.random() * 0.4);
}

/** A fixed-capacity FIFO over an array ring. */
class Ring<T> {
  private readonly items: Array<T | undefined>;
  private head = 0;
  length = 0;
  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }
  push(v: T): boolean {
    if (this.length === this.capacity) return false;
    this.items[(this.head + this.length) % this.capacity] = v;
    this.length++;
    return true;
  }
  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const v = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.length--;
    return v;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

interface Queued {
  d: Delivery;
  /** performance.now() when queued. */
  at: number;
}

/** An output that runs `spec.sender` behind a bounded queue. */
export function createQueuedOutput(spec: QueuedOutputSpec): Output {
  const queue = new Ring<Queued>(Math.max(1, spec.capacity));
  const maxBatch = Math.max(1, spec.sender.maxBatch ?? 1);
  const stop = new AbortController();
  const backoff = spec.backoffMs ?? defaultBackoffMs;
  const { destination, metrics } = spec;
  let running: Promise<void> | undefined;
  let closed = false;
  let failing: string | undefined;

  async function attempt(batch: Delivery[]): Promise<AttemptResult> {
    try {
      return await spec.sender.send(batch, stop.signal);
    } catch (err) {
      return (err as Error).message; // a sender that throws is a bug, but must not stop the worker
    }
  }

  async function deliverWithRetries(items: Queued[]): Promise<void> {
    const batch = items.map((q) => q.d);
    let reason: AttemptResult;
    for (let n = 0; ; n++) {
      reason = await attempt(batch);
      if (reason === undefined || n >= spec.retries || stop.signal.aborted) break;
      metrics.outputRetry(destination);
      await sleep(backoff(n), stop.signal);
    }
    const now = performance.now();
    for (const q of items) metrics.output(destination, reason === undefined, (now - q.at) / 1000);
    if (reason !== undefined && failing === undefined) spec.log(`forwarder: ${destination} output failing: ${reason} (alerts are counted in enginesecurity_enginesidekick_outputs_total)`);
    if (reason === undefined && failing !== undefined) spec.log(`forwarder: ${destination} output recovered`);
    failing = reason;
  }

  async function work(): Promise<void> {
    while (queue.length > 0) {
      const items: Queued[] = [];
      for (let q = queue.shift(); q !== undefined; q = items.length < maxBatch ? queue.shift() : undefined) items.push(q);
      metrics.outputQueueLength(destination, queue.length);
      if (stop.signal.aborted)
        for (const _ of items) metrics.outputDropped(destination); // closing, past the drain deadline
      else await deliverWithRetries(items);
    }
    running = undefined;
  }

  return {
    destination,
    push(d) {
      if (closed || !queue.push({ d, at: performance.now() })) {
        metrics.outputDropped(destination);
        if (!closed) spec.onDrop?.(destination);
        return false;
      }
      metrics.outputQueueLength(destination, queue.length);
      // Start the worker on a later tick: push never runs a delivery itself.
      running ??= new Promise<void>((resolve) => setImmediate(resolve)).then(work);
      return true;
    },
    health: () => failing,
    async close(drainMs) {
      closed = true;
      const timer = setTimeout(() => stop.abort(), drainMs);
      await running;
      clearTimeout(timer);
      stop.abort();
      await spec.sender.close?.();
    },
  };
}
