// The last suite of a storage's file: releases the storage (stops the PostgreSQL cluster,
// deletes temp directories) and checks that it did.
import { existsSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Storage } from '../helpers/storage.js';

/** Registers the clean-up suite; register it after the storage's other suites. */
export function finalSuite(storage: Storage): void {
  const s = suite(`api storage clean-up [${storage.name}]`);
  s('the storage shuts down and leaves nothing behind', async () => {
    const probe = await storage.fresh();
    await storage.shutdown();
    assert.not.ok(existsSync(probe.stateDir), `${probe.stateDir} removed`);
  });
  s.run();
}
