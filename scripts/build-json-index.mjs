#!/usr/bin/env node
// The audit webhook's EventList walk (assembly/webhook/json-index.ts) compiled to WebAssembly:
// host/sources/audit/list-walk.ts loads build/json-index.wasm beside host/ (the repository's, or
// the one under scripts/build.mjs's output), and walks in JavaScript when it is missing. Kept out
// of assembly/'s top level, whose files are the rule modules' runtime (host/runtime/compile.ts).
//   node scripts/build-json-index.mjs [OUT_FILE]    (default build/json-index.wasm)
// Prints nothing when it compiled; exits non-zero with the compiler's message when it did not.
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import asc from 'assemblyscript/asc';

const root = fileURLToPath(new URL('..', import.meta.url));
const outFile = resolve(process.argv[2] ?? join(root, 'build/json-index.wasm'));
mkdirSync(dirname(outFile), { recursive: true });
// No allocator or collector (the host lays out memory), no assertions, SIMD for the strings' plain runs.
const args = [join(root, 'assembly/webhook/json-index.ts'), '--outFile', outFile, '-O3', '--runtime', 'stub', '--noAssert', '--enable', 'simd', '--use', 'abort='];
const stderr = asc.createMemoryStream();
const { error } = await asc.main(args, { stderr });
if (error) {
  console.error(`build-json-index: ${error.message}\n${stderr.toString()}`);
  process.exit(1);
}
