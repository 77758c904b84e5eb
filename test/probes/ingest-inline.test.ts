// The native translator's field writers (probes/addon/ingest-{evt,arg,fd,proc}.c, one file per
// field class) must be inlined into its pass (ingest.c rae_ingest): left out of line, as a table
// of function pointers and exported, interposable calls left them, the calls (up to 19 an open
// record with the default rules) cost the kernel byte path 8 % (issue #26; the figure is
// `npm run bench -- eval`'s kernel_path_events_per_s, measured there, never here). An inlined
// writer has no symbol of its own in the built addon: its symbol table (nm) tells.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ADDON_PATH } from '../../host/sources/syscall/index.js';

const built = existsSync(ADDON_PATH) ? test : test.skip;
const WRITERS = ['rae_evt_value', 'rae_arg_value', 'rae_fd_value', 'rae_proc_value'];

built("the field classes' writers are inlined into the native translator's pass", () => {
  const nm = spawnSync('nm', [ADDON_PATH], { encoding: 'utf8' });
  assert.is(nm.status, 0, `nm ${ADDON_PATH}: ${nm.stderr}`);
  const functions = new Set(
    nm.stdout
      .split('\n')
      .map((line) => line.split(' '))
      .filter((p) => p.length === 3 && (p[1] === 't' || p[1] === 'T'))
      .map((p) => p[2]),
  );
  assert.ok(functions.has('rae_ingest'), `no rae_ingest among the functions of ${ADDON_PATH}`);
  const outOfLine = WRITERS.filter((w) => functions.has(w));
  assert.equal(outOfLine, [], `out of line in ${ADDON_PATH} (ingest.c value() must call them directly, the parts be hidden, binding.gyp link with -flto)`);
});

test.run();
