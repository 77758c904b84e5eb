// Temporary directories for a test file: made in the machine's temporary directory (the runner's
// per-file TMPDIR under scripts/run-tests.mjs) and removed when the test process exits, passing
// or failing, so a file leaves nothing behind. A process stopped by SIGKILL cannot remove them:
// the runner removes its TMPDIR after every file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A new empty directory `<tmpdir>/<prefix>XXXXXX`, removed with everything in it at process exit. */
export function tempDir(prefix: string): string {
  if (made.length === 0) process.once('exit', () => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
