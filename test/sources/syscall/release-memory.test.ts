// releaseFreeMemory (the addon's malloc_trim): memory freed in the middle of the C heap, which
// glibc keeps resident on its own, goes back to the kernel. No probe, no root: the addon only.
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadNative, releaseFreeMemory } from '../../../host/sources/syscall/addon.js';

const t = 'native' in loadNative() ? test : test.skip;

/** VmRSS of this process, MB. */
const rssMb = () => Number(readFileSync('/proc/self/status', 'utf8').match(/^VmRSS:\s+(\d+) kB/m)![1]) / 1024;

t('releaseFreeMemory: the free pages between live blocks of the C heap are handed back', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // 64 KiB array buffers come from malloc (below its mmap threshold): 2048 of them, 128 MB, every
  // other one kept, so the free ones sit between live ones where glibc does not trim by itself
  const all = Array.from({ length: 2048 }, () => new Uint8Array(64 * 1024).fill(1));
  const kept = all.filter((_, i) => i % 2 === 0);
  all.length = 0;
  gc();
  // the backing stores are freed by V8's sweeper, which may finish after gc() returns
  const before = rssMb();
  let released = false;
  for (const deadline = Date.now() + 60_000; !released && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 50));
    released = releaseFreeMemory();
  }
  assert.ok(released, 'nothing was released');
  const after = rssMb();
  assert.ok(after < before - 32, `RSS ${before.toFixed(0)} -> ${after.toFixed(0)} MB: 64 MB were free`);
  assert.is(kept.length, 1024);
});

test.run();
