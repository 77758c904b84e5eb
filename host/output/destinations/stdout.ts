// The stdout destination (the default): each alert as one JSON line on the process's stdout,
// through the shared delivery queue, so submitting never writes synchronously. One JSON line
// per alert and nothing else, so every stdout line that starts with `{` is an event (the log
// filter in rules/manifests/ relies on that; logs go to stderr). Writes never wait: when the
// stream's buffer holds more than `maxBufferedBytes` (a reader that stopped reading), the line
// is refused, counted as a failed delivery, not retried.
// Note: Node writes to files and, on Linux, to pipes synchronously, so a stalled pipe reader
// stalls the process as it does Falco; the buffer bound applies to asynchronous streams.
import type { Writable } from 'node:stream';
import type { Destination, Metrics } from '../../metrics/index.js';
import { createQueuedOutput } from '../queue.js';
import type { Output } from './types.js';

/** Options of the stdout destination. */
export interface StdoutOutputOptions {
  stream?: Writable;
  capacity: number;
  metrics: Metrics;
  log: (message: string) => void;
  onDrop?: (destination: Destination) => void;
  /** Bytes the stream may hold unwritten before lines are refused; default 16 MiB. */
  maxBufferedBytes?: number;
}

/** A destination writing alert JSON lines to `stream` (process.stdout by default). */
export function createStdoutOutput(opts: StdoutOutputOptions): Output {
  const stream = opts.stream ?? process.stdout;
  const maxBufferedBytes = opts.maxBufferedBytes ?? 16 * 1024 * 1024;
  const write = (line: string): boolean => {
    if (stream.writableLength > maxBufferedBytes || stream.destroyed) return false;
    stream.write(`${line}\n`);
    return true;
  };
  return createQueuedOutput({
    destination: 'stdout',
    capacity: opts.capacity,
    retries: 0,
    sender: {
      send: (batch) => (batch.every((d) => write(d.json)) ? undefined : 'stdout is backed up (its reader is not reading)'),
    },
    onDrop: opts.onDrop,
    metrics: opts.metrics,
    log: opts.log,
  });
}
