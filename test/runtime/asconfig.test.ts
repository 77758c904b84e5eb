// asconfig.json (AssemblyScript's config format) describes how assembly/ and a generated ruleset
// are compiled; the compile step takes its options from the target `rules` (compile.ts ascArgs).
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MEM } from '../../host/abi/module.js';
import { ascArgs } from '../../host/runtime/compile.js';

const config = JSON.parse(readFileSync('asconfig.json', 'utf8')) as { targets: Record<string, Record<string, unknown>> };

test('asconfig: the rules target becomes the compiler options, memory fixed at the ABI size', () => {
  assert.equal(ascArgs(config), ['--outFile', 'rules.wasm', '--runtime', 'stub', '--noAssert', '--use', 'abort=', '--noValidate', '--initialMemory', String(MEM.pages), '--maximumMemory', String(MEM.pages)]);
  assert.throws(() => ascArgs({ targets: { rules: { ...config.targets.rules, maximumMemory: MEM.pages + 1 } } }), /must be 512/);
  assert.throws(() => ascArgs(config, 'debug'), /no target "debug"/);
});

test.run();
