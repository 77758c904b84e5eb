// The engine's fault reporter: never blocks, never throws into its caller, and is bounded. A
// fault becomes an event in a queue of at most MAX_QUEUE (past it the event is dropped and
// counted); one sender at a time hands events to the transport, each send bounded by
// SEND_TIMEOUT_MS (a failure is counted, not retried). Faults that repeat (a failing output, a
// refused webhook body, a trapping module) are aggregated by key: the first is sent at once, the
// next ones within `windowMs` are counted and sent as one event at the window's end. Until a
// transport is set (the engine's own project waits for the API), events wait in the queue.
// Consumes faults; produces events for a transport and counters.
import { faultEvent, type EngineContext, type Fault } from './fault-event.js';

/** Where events go: the Sentry envelope endpoint of a DSN, or the engine's own API. */
export interface Transport {
  /** What it reports to, for logs. */
  readonly target: string;
  /** Sends one event; rejects (or resolves false) when it was not accepted. */
  send(event: Record<string, unknown>, signal: AbortSignal): Promise<boolean>;
}

/** What was reported, dropped (queue full, or no transport) and not accepted. */
export interface ReporterCounts {
  faults: number;
  sent: number;
  dropped: number;
  failed: number;
}

const MAX_QUEUE = 100;
const SEND_TIMEOUT_MS = 5000;

/** The fault reporter of one `rae run`. */
export class FaultReporter {
  readonly counts: ReporterCounts = { faults: 0, sent: 0, dropped: 0, failed: 0 };
  private readonly queue: Array<Record<string, unknown>> = [];
  private readonly windows = new Map<string, { fault: Fault; count: number; timer: NodeJS.Timeout }>();
  private transport: Transport | undefined;
  private off = false;
  private sending: Promise<void> | undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly opts: { windowMs: number; log: (msg: string) => void },
  ) {}

  /** Reports a fault now. */
  report(fault: Fault): void {
    this.counts.faults++;
    this.enqueue(fault);
  }

  /** Reports a fault that may repeat: at once the first time, then once per window with the count. */
  reportAggregated(key: string, fault: Fault): void {
    this.counts.faults++;
    const open = this.windows.get(key);
    if (open) {
      open.count++;
      open.fault = fault;
      return;
    }
    this.enqueue(fault);
    this.openWindow(key, fault);
  }

  /** Sets the rules hash that later events carry. */
  setRulesHash(hash: string): void {
    this.ctx.rulesHash = hash;
  }

  /** Starts sending (the queued events first). */
  useTransport(t: Transport): void {
    this.transport = t;
    this.opts.log(`error tracking: reporting the engine's faults to ${t.target}`);
    this.pump();
  }

  /** No transport will come: queued and later events are dropped (counted). */
  disable(reason: string): void {
    this.off = true;
    this.counts.dropped += this.queue.splice(0).length;
    this.opts.log(`error tracking: the engine's faults are not reported: ${reason}`);
  }

  /** Sends what the open windows counted and what is queued, waiting at most `timeoutMs`. */
  async close(timeoutMs = 3000): Promise<ReporterCounts> {
    for (const [key, w] of this.windows) {
      clearTimeout(w.timer);
      this.windows.delete(key);
      if (w.count > 0) this.enqueue({ ...w.fault, count: w.count });
    }
    if (this.transport && !this.off) {
      const deadline = Date.now() + timeoutMs;
      while ((this.sending || this.queue.length > 0) && Date.now() < deadline) await (this.sending ?? new Promise((r) => setTimeout(r, 10)));
    }
    this.off = true;
    this.counts.dropped += this.queue.splice(0).length;
    return { ...this.counts };
  }

  private openWindow(key: string, fault: Fault): void {
    const timer = setTimeout(() => {
      const w = this.windows.get(key);
      this.windows.delete(key);
      if (w && w.count > 0) {
        this.enqueue({ ...w.fault, count: w.count });
        this.openWindow(key, w.fault);
      }
    }, this.opts.windowMs).unref();
    this.windows.set(key, { fault, count: 0, timer });
  }

  private enqueue(fault: Fault): void {
    if (this.off || this.queue.length >= MAX_QUEUE) {
      this.counts.dropped++;
      return;
    }
    try {
      this.queue.push(faultEvent(fault, this.ctx));
    } catch {
      this.counts.dropped++; // an unserializable fault must not reach the caller
      return;
    }
    this.pump();
  }

  private pump(): void {
    if (this.sending || !this.transport) return;
    const t = this.transport;
    this.sending = (async () => {
      for (let event = this.queue.shift(); event !== undefined; event = this.queue.shift()) {
        const ok = await t.send(event, AbortSignal.timeout(SEND_TIMEOUT_MS)).catch(() => false);
        if (ok) this.counts.sent++;
        else this.counts.failed++;
      }
    })().finally(() => {
      this.sending = undefined;
      if (this.queue.length > 0 && !this.off) this.pump();
    });
  }
}
