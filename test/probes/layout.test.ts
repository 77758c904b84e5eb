// The wire format must not drift: the TypeScript mirror (host/abi/records.ts, syscalls.ts)
// against probes/src/events.h and syscalls.h. Constants are read from the header text; struct
// offsets and sizes come from the C compiler through the addon's layout() (offsetof/sizeof of
// the very header the probe is compiled with).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { abi, DATA_ONLY, DECODED, loadNative, syscallNr, NR_SYSCALLS } from '../../host/sources/syscall/index.js';

const header = readFileSync(new URL('../../probes/src/events.h', import.meta.url), 'utf8');
const syscallsH = readFileSync(new URL('../../probes/src/syscalls.h', import.meta.url), 'utf8');

/** #define NAME value (decimal or hex) from a header. */
function defines(text: string, prefix: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^#define ${prefix}(\\w+)\\s+(0x[0-9a-fA-F]+|\\d+)`, 'gm'))) out.set(m[1], Number(m[2]));
  return out;
}

test('ABI version and size limits match events.h', () => {
  const d = defines(header, 'RAE_');
  assert.is(d.get('ABI_VERSION'), abi.ABI_VERSION);
  assert.is(d.get('MAX_RECORD'), abi.MAX_RECORD);
  assert.is(d.get('MAX_PATH'), abi.MAX_PATH);
  assert.is(d.get('MAX_ARGS'), abi.MAX_ARGS);
  assert.is(d.get('MAX_ENV'), abi.MAX_ENV);
});

test('record kinds and flag bits match events.h', () => {
  assert.equal(Object.fromEntries(defines(header, 'RAE_KIND_')), { ...abi.KIND });
  assert.equal(Object.fromEntries(defines(header, 'RAE_SF_')), { ...abi.SF });
  assert.equal(Object.fromEntries(defines(header, 'RAE_PF_')), { ...abi.PF });
  assert.equal(Object.fromEntries(defines(header, 'RAE_XF_')), { ...abi.XF });
});

test('decoded syscalls and their numbers match syscalls.h', () => {
  const nrs = defines(syscallsH, 'NR_');
  assert.equal([...nrs.keys()].sort(), [...DECODED].sort());
  for (const [name, nr] of nrs) assert.is(syscallNr(name), nr, name);
  assert.is(defines(syscallsH, 'RAE_').get('NR_SYSCALLS'), NR_SYSCALLS);
  const data = defines(syscallsH, 'DNR_');
  assert.equal([...data.keys()].sort(), [...DATA_ONLY].sort());
  for (const [name, nr] of data) assert.is(syscallNr(name), nr, name);
});

test('the values of the interesting-syscall table, the data bound and the open-path key match events.h', () => {
  assert.equal(Object.fromEntries(defines(header, 'RAE_INT_')), { ...abi.INT });
  assert.is(defines(header, 'RAE_').get('MAX_DATA'), abi.MAX_DATA);
  assert.is(defines(header, 'RAE_').get('OPEN_KEY_BYTES'), abi.OPEN_KEY_BYTES);
});

const loaded = loadNative();
const withAddon = 'native' in loaded ? test : test.skip;
if (!('native' in loaded)) process.stderr.write(`\n!!! layout.test.ts: SKIPPING compiled-layout checks: ENOADDON: ${loaded.error}\n\n`);

withAddon('struct offsets and sizes match the C compiler (addon layout())', () => {
  const { native } = loaded as Extract<typeof loaded, { native: unknown }>;
  const layout = native.layout();
  assert.is(native.abiVersion, abi.ABI_VERSION);
  assert.is(native.maxRecord, abi.MAX_RECORD);
  assert.equal(layout.hdr, { ...abi.HDR });
  assert.equal(layout.syscall, { ...abi.SYSCALL });
  assert.equal(layout.proc, Object.fromEntries(Object.entries(abi.PROC)));
  assert.equal(layout.exit, { ...abi.EXIT });
  assert.equal(layout.sockaddr, { ...abi.SOCKADDR });
  assert.equal(layout.sizes, { ...abi.SIZES });
  assert.equal(layout.kinds, { ...abi.KIND });
});

test.run();
