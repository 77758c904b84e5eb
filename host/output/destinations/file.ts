// The file output (Falco's file_output): each alert line appended to `filename`. With
// keep_alive the file is opened once and kept open (as Falco; a rotated file keeps receiving
// through the old descriptor); without it, it is opened, appended and closed per write, so
// log rotation needs no signal. Lines queued together are written in one write.
import { open, type FileHandle } from 'node:fs/promises';
import type { OutputSettings } from './settings.js';
import type { Sender } from './types.js';

/** The file transport. */
export function createFileSender(s: OutputSettings): Sender {
  const filename = s.string('filename');
  const keepAlive = s.bool('keep_alive');
  let handle: FileHandle | undefined;
  return {
    maxBatch: 256,
    async send(batch) {
      const text = batch.map((d) => `${d.json}\n`).join('');
      try {
        if (keepAlive) {
          handle ??= await open(filename, 'a');
          await handle.appendFile(text);
        } else {
          const h = await open(filename, 'a');
          try {
            await h.appendFile(text);
          } finally {
            await h.close();
          }
        }
        return undefined;
      } catch (err) {
        const h = handle;
        handle = undefined; // reopen on the next attempt
        await h?.close().catch(() => {});
        return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      }
    },
    async close() {
      await handle?.close();
      handle = undefined;
    },
  };
}
