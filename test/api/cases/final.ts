// The last suite of a storage's file: releases the storage (stops the PostgreSQL cluster,
// deletes temp directories) and checks that it did.
import { existsSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Storage } from '../../../support/api/storage.js';

/** Registers the clean-up suite; register it after the storage's other suites. */
export function finalSuite(storage: Storage): void {
  const s = suite(`api storage clean-up [${storage.name}]`);
  s('the storage shuts down and leaves nothing behind', async () => {
    const removed = await storage.shutdown();
    assert.ok(removed.length > 0, 'the storage had made directories');
    for (const dir of removed) assert.not.ok(existsSync(dir), `${dir} removed`);
  });
  s.run();
}
