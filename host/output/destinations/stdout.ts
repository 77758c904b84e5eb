// The stdout output (the default): each alert as one JSON line on the process's stdout through
// the shared delivery queue, so submitting never writes synchronously. A stream whose buffer is
// backed up refuses the line; that is counted as a failed delivery, not retried.
import type { Writable } from 'node:stream';
import { createAlertLineWriter } from '../../output/stdout.js';
import type { Destination, Metrics } from '../../metrics/index.js';
import { createQueuedOutput } from './queue.js';
import type { Output } from './types.js';

/** Options of the stdout output. */
export interface StdoutOutputOptions {
  stream?: Writable;
  capacity: number;
  metrics: Metrics;
  log: (message: string) => void;
  onDrop?: (destination: Destination) => void;
}

/** An output writing alert JSON lines to `stream` (process.stdout by default). */
export function createStdoutOutput(opts: StdoutOutputOptions): Output {
  const writer = createAlertLineWriter(opts.stream ?? process.stdout);
  return createQueuedOutput({
    destination: 'stdout',
    capacity: opts.capacity,
    retries: 0,
    sender: {
      send: (batch) => (batch.every((d) => writer.write(d.alert, d.json)) ? undefined : 'stdout is backed up (its reader is not reading)'),
    },
    onDrop: opts.onDrop,
    metrics: opts.metrics,
    log: opts.log,
  });
}
