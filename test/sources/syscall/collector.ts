// Test helper: attaches the real probe, drains it the way the engine will (watch -> poll until
// empty) and keeps every decoded record, so tests can wait for the records of a child process.
// Also the loud skip used by every test that needs the kernel.
import { openCapture, probeSupport, type Capture, type CaptureOptions } from '../../../host/sources/syscall/index.js';
import { decodeBatch, type EventRecord } from '../../helpers/record-decoder.js';

/** probeSupport() or, when unavailable, a message for skipped tests. */
export function kernelGate(file: string): { run: boolean } {
  const s = probeSupport();
  if (s.available) return { run: true };
  process.stderr.write(`\n!!! ${file}: SKIPPING kernel tests: ${s.code}: ${s.reason}\n\n`);
  return { run: false };
}

/** Attached probe plus the records drained so far. */
export class Collector {
  readonly cap: Capture;
  readonly records: EventRecord[] = [];
  readonly view = new Uint8Array(1 << 20);
  private readonly meta = new Uint32Array(1);
  private waiters: (() => void)[] = [];
  decodeErrors: string[] = [];
  polls = 0;

  constructor(opts: CaptureOptions = {}) {
    this.cap = openCapture(opts);
    this.cap.watch(() => this.drain());
  }

  /** Polls until the ring is empty (re-arming the watch), decoding every batch. */
  drain(): void {
    for (;;) {
      const bytes = this.cap.poll(this.view, this.meta);
      this.polls++;
      if (bytes === 0) break;
      const { records, error } = decodeBatch(this.view, bytes);
      if (error) this.decodeErrors.push(error.message);
      for (const r of records) this.records.push(r);
    }
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** Resolves with the records matching `pick` once `done` holds for them; rejects after limitMs. */
  async waitFor<T extends EventRecord>(pick: (r: EventRecord) => r is T, done: (rs: T[]) => boolean, limitMs = 300_000): Promise<T[]> {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const got = this.records.filter(pick);
      if (done(got)) return got;
      if (Date.now() > deadline) throw new Error(`gave up waiting: ${got.length} matching of ${this.records.length} records`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  close(): void {
    this.cap.close();
  }
}
