// The layers import downward only: host/engine/ (rules language, codegen, the module ABI) knows
// no runtime, source or command; host/runtime/ (modules, batches, slots, state, watchdog, hot
// swap) knows no source or command; nothing below host/cli/ imports it. Read from the sources'
// import statements, so a forbidden import fails here before it spreads.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const HOST = resolve(import.meta.dirname, '../host');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every relative import of host/: [importing file, imported file], both relative to host/. */
const imports = tsFiles(HOST).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => [relative(HOST, file), relative(HOST, resolve(dirname(file), m[1]!))] as const));

/** Layers a folder of host/ must not import from. */
const FORBIDDEN: Record<string, string[]> = {
  'engine/': ['runtime/', 'sources/', 'resources/', 'cli/'],
  'runtime/': ['sources/', 'resources/', 'cli/'],
  'sources/': ['resources/', 'cli/'],
  'resources/': ['cli/'],
};

test('layers: no import points up a layer', () => {
  assert.ok(imports.length > 500, `${imports.length} imports read`);
  const up = imports.filter(([from, to]) => Object.entries(FORBIDDEN).some(([layer, above]) => from.startsWith(layer) && above.some((a) => to.startsWith(a))));
  assert.equal(
    up.map(([from, to]) => `${from} -> ${to}`),
    [],
  );
  // and nothing outside the commands reaches into them
  assert.equal(
    imports.filter(([from, to]) => to.startsWith('cli/') && !from.startsWith('cli/')).map(([from, to]) => `${from} -> ${to}`),
    [],
  );
});

test.run();
