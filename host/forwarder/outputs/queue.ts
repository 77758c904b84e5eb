// The delivery loop every output shares: a bounded FIFO (a full queue refuses and counts the
// alert, never blocking the producer), one worker that delivers in order, retries a failed
// attempt with exponential backoff and jitter, and counts each final outcome. Logs only when
// an output starts failing and when it recovers, so a dead receiver cannot flood stderr.
import type { Metrics, Destination } from '../../metrics/index.js';
import type { AttemptResult, Delivery, Output } from './types.js';

/** How an output delivers one alert and how hard it tries. */
export interface QueuedOutputSpec {
  destination: Destination;
  /** Queue bound (alerts waiting, not counting the one in flight). */
  capacity: number;
  /** Attempts after the first failed one. */
  retries: number;
  /** Delay before retry number `attempt` (0-based); default 100 ms doubling, capped at 5 s, ±20 % jitter. */
  backoffMs?: (attempt: number) => number;
  /** One attempt; `signal` aborts it when the output is closed. */
  deliver(d: Delivery, signal: AbortSignal): AttemptResult | Promise<AttemptResult>;
  /** Releases resources after the queue has drained. */
  dispose?(): Promise<void>;
  metrics: Metrics;
  log: (message: string) => void;
}

/** Default backoff: 100 ms, 200 ms, 400 ms ... capped at 5 s, each ±20 %. */
export function defaultBackoffMs(attempt: number): number {
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

/** An output that runs `spec.deliver` behind a bounded queue. */
export function createQueuedOutput(spec: QueuedOutputSpec): Output {
  const queue = new Ring<Delivery>(Math.max(1, spec.capacity));
  const stop = new AbortController();
  const backoff = spec.backoffMs ?? defaultBackoffMs;
  const { destination, metrics } = spec;
  let running: Promise<void> | undefined;
  let closed = false;
  let failing = false;

  async function deliverWithRetries(d: Delivery): Promise<void> {
    let reason: AttemptResult;
    for (let attempt = 0; ; attempt++) {
      reason = await spec.deliver(d, stop.signal);
      if (reason === undefined || attempt >= spec.retries || stop.signal.aborted) break;
      metrics.outputRetry(destination);
      await sleep(backoff(attempt), stop.signal);
    }
    metrics.output(destination, reason === undefined);
    if (reason !== undefined && !failing) spec.log(`forwarder: ${destination} output failing: ${reason} (alerts are counted in enginesecurity_enginesidekick_outputs_total)`);
    if (reason === undefined && failing) spec.log(`forwarder: ${destination} output recovered`);
    failing = reason !== undefined;
  }

  async function work(): Promise<void> {
    for (let d = queue.shift(); d !== undefined; d = queue.shift()) {
      metrics.outputQueueLength(destination, queue.length);
      if (stop.signal.aborted) metrics.outputDropped(destination); // closing, past the drain deadline
      else await deliverWithRetries(d);
    }
    running = undefined;
  }

  return {
    destination,
    push(d) {
      if (closed || !queue.push(d)) {
        metrics.outputDropped(destination);
        return false;
      }
      metrics.outputQueueLength(destination, queue.length);
      // Start the worker on a later tick: push never runs a delivery itself.
      running ??= new Promise<void>((resolve) => setImmediate(resolve)).then(work);
      return true;
    },
    async close(drainMs) {
      closed = true;
      const timer = setTimeout(() => stop.abort(), drainMs);
      await running;
      clearTimeout(timer);
      stop.abort();
      await spec.dispose?.();
    },
  };
}
