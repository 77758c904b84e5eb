// Part of scenario `forwarder`: waits for an output's deliveries by the event itself. The metrics
// object the fan-out is given counts each delivery (`output(destination, ok)`); wrapping that
// call resolves a wait the moment the n-th delivery is counted. Polling the exposition every
// 20 ms instead put up to a poll's interval on every figure (a fifth of the file output's 0.1 s
// run) and rendered the whole exposition in the measured thread.
import type { Destination, Metrics } from '../../host/metrics/index.js';

interface Waiter {
  destination: Destination;
  n: number;
  resolve: () => void;
}

/** Deliveries counted per destination (ok and failed) since the wrapper was put on `metrics`. */
export interface DeliveryCounts {
  ok(destination: Destination): number;
  error(destination: Destination): number;
  /** Resolves once `destination` counted `n` deliveries (ok or failed); rejects after `timeoutMs`. */
  reached(destination: Destination, n: number, timeoutMs?: number): Promise<void>;
}

/** Wraps `metrics.output` (before the fan-out starts) to count deliveries as they happen. */
export function countDeliveries(metrics: Metrics): DeliveryCounts {
  const ok = new Map<Destination, number>();
  const error = new Map<Destination, number>();
  const total = (d: Destination) => (ok.get(d) ?? 0) + (error.get(d) ?? 0);
  let waiters: Waiter[] = [];
  const output = metrics.output.bind(metrics);
  metrics.output = (destination, delivered, seconds) => {
    output(destination, delivered, seconds);
    const counts = delivered ? ok : error;
    counts.set(destination, (counts.get(destination) ?? 0) + 1);
    if (waiters.length === 0) return;
    const n = total(destination);
    const due = waiters.filter((w) => w.destination === destination && n >= w.n);
    if (due.length === 0) return;
    waiters = waiters.filter((w) => !due.includes(w));
    for (const w of due) w.resolve();
  };
  return {
    ok: (d) => ok.get(d) ?? 0,
    error: (d) => error.get(d) ?? 0,
    reached(destination, n, timeoutMs = 120_000) {
      if (total(destination) >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`${destination}: ${total(destination)} of ${n} deliveries counted in ${timeoutMs / 1000} s`));
        }, timeoutMs);
        const waiter: Waiter = {
          destination,
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        waiters.push(waiter);
      });
    },
  };
}
