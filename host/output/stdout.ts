// The stdout alert stream: one JSON line per alert and nothing else, so every stdout line that
// starts with `{` is an event (the log filter in rules/manifests/ relies on that; logs go to
// stderr). Writes never wait: when the stream's buffer holds more than `maxBufferedBytes`
// (a reader that stopped reading), the line is refused and the caller counts the drop.
// Note: Node writes to files and, on Linux, to pipes synchronously, so a stalled pipe reader
// stalls the process as it does Falco; the buffer bound applies to asynchronous streams.
import type { Writable } from 'node:stream';
import { alertJson, type Alert } from './alert.js';

/** Writes alert lines to one stream. */
export interface AlertLineWriter {
  /** Writes the alert (or its ready JSON line); false if refused because the stream is backed up. */
  write(alert: Alert, json?: string): boolean;
}

/** A writer over `stream` (process.stdout by default). */
export function createAlertLineWriter(stream: Writable = process.stdout, maxBufferedBytes = 16 * 1024 * 1024): AlertLineWriter {
  return {
    write(alert, json) {
      if (stream.writableLength > maxBufferedBytes || stream.destroyed) return false;
      stream.write(`${json ?? alertJson(alert)}\n`);
      return true;
    },
  };
}
