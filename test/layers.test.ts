// The shape of host/, read from the sources' import statements so that a wrong import fails here
// before it spreads. Three rules:
// - layers: every folder of host/ has a layer (LAYERS) and imports only from its own layer or
//   the ones below it; host/abi/ (the layouts mirrored from probes/src/*.h) imports nothing, the
//   engine (rules language, codegen) knows no runtime, source or command, nothing imports cli/;
// - no import circle, between any files (type-only imports count: they couple as much);
// - host/engine/ and host/runtime/ are used through their facades (index.ts) and the few named
//   entry points of ENTRY_POINTS, never through another of their files.
// And one rule outside host/: bench/ and support/ import nothing from test/ (what benches share with
// tests lives in support/, which both import; a test file is no library).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const ROOT = resolve(import.meta.dirname, '..');
const HOST = join(ROOT, 'host');

/** The .ts and .mjs files below a folder. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.(ts|mjs)$/.test(e.name) ? [join(dir, e.name)] : []));
}

/** Every relative import below a folder (`from '...'`, `import '...'`, `import('...')`): [importing file, imported file], both relative to `base`, `.js` read as `.ts`. */
function importsBelow(dir: string, base: string): (readonly [string, string])[] {
  return sourceFiles(dir).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => [relative(base, file), relative(base, resolve(dirname(file), m[1]!)).replace(/\.js$/, '.ts')] as const),
  );
}

/** Every relative import of host/, both files relative to host/. */
const imports = importsBelow(HOST, HOST);

/** The folder of host/ a file belongs to. */
const folderOf = (file: string): string => file.split('/')[0]!;

/**
 * The layers, lowest first: a folder imports only from its own layer and those below. Folders of
 * one layer may import each other (the cycle check still holds between files).
 */
const LAYERS: readonly (readonly string[])[] = [
  ['abi'], // the module ABI and the kernel record layouts (mirrors of probes/src/*.h)
  ['engine'], // the rules language: load pipeline, checker, reference interpreter, codegen
  ['net', 'metrics', 'output'], // connection limits, the metrics registry, the alert and its rendering
  ['runtime'], // rule modules, batches, the state region, watchdog, hot swap, compile worker
  ['config', 'sources', 'forwarder', 'api'], // the configuration and the services it configures
  ['resources', 'generator', 'tracking', 'testing', 'console'], // Kubernetes resources and the control plane; the event generator; the engine's own faults reported; rule tests (suites, unit tests); the web console
  ['cli'], // one file per command: wires everything
];
const layerOf = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)));

/** Files any layer may import, each with its reason: leaves that import nothing. */
const SHARED_LEAVES: Record<string, string> = {
  'config/problem.ts': "the configuration's problem type, which each subsystem's own section resolver returns (config/ composes those resolvers, so they sit below it); it imports nothing",
};

/** The files of host/engine/ and host/runtime/ that the other folders may import, each with its reason. */
const ENTRY_POINTS: Record<string, string> = {
  'engine/index.ts': "the engine's facade: loading rules, diagnostics, fields, events, the matcher",
  'engine/codegen/index.ts': 'the code generator, a stage the runtime drives on its own (the compile worker, and the slot layout the encoders and the kernel translator fill) without loading the rule pipeline',
  'engine/priority.ts': "Falco's priority levels, the vocabulary the alert's way out (output, forwarder destinations, metrics) shares with the rules; it imports nothing",
  'runtime/index.ts': "the runtime's facade: the detection engine, the compiler and module rae replay drives, the RecordTranslator a source implements",
};

/**
 * Import edges left out of the cycle check, each a circle that is known and being removed.
 * Every entry must still exist (a stale one fails below, so it is removed with its circle).
 */
const KNOWN_CIRCLES: Record<string, string> = {};

test('imports: every relative import of host/ names a file that exists', () => {
  assert.ok(imports.length > 500, `${imports.length} imports read`);
  assert.equal(
    imports.filter(([, to]) => !existsSync(join(HOST, to))).map(([from, to]) => `${from} -> ${to}`),
    [],
  );
});

test('layers: every folder of host/ has a layer', () => {
  const folders = readdirSync(HOST, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  assert.equal(
    folders.filter((f) => !layerOf.has(f)),
    [],
  );
  assert.equal(
    [...layerOf.keys()].filter((f) => !folders.includes(f)),
    [],
    'a layer names a folder that is gone',
  );
});

test('layers: no import points up a layer', () => {
  const up = imports.filter(([from, to]) => !(to in SHARED_LEAVES) && (layerOf.get(folderOf(to)) ?? Infinity) > (layerOf.get(folderOf(from)) ?? -1));
  assert.equal(
    up.map(([from, to]) => `${from} -> ${to}`),
    [],
  );
});

test('layers: each shared leaf exists and imports nothing', () => {
  for (const leaf of Object.keys(SHARED_LEAVES)) {
    assert.ok(existsSync(join(HOST, leaf)), `${leaf} is gone: remove it from SHARED_LEAVES`);
    assert.equal(
      imports.filter(([from]) => from === leaf).map(([, to]) => to),
      [],
      `${leaf} imports`,
    );
  }
});

test('facades: nothing outside host/engine/ and host/runtime/ imports their inner files', () => {
  const inner = imports.filter(([from, to]) => ['engine', 'runtime'].includes(folderOf(to)) && folderOf(from) !== folderOf(to) && !(to in ENTRY_POINTS));
  assert.equal(
    inner.map(([from, to]) => `${from} -> ${to}`),
    [],
  );
  assert.equal(
    Object.keys(ENTRY_POINTS).filter((f) => !existsSync(join(HOST, f))),
    [],
    'an entry point that is gone',
  );
});

/** The import circles of a graph: one circle (a file path closing on itself) per strongly connected component (Tarjan). */
function circles(edges: readonly (readonly [string, string])[]): string[][] {
  const next = new Map<string, string[]>();
  for (const [from, to] of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = new Set<string>();
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.add(w);
    } while (w !== v);
    if (component.size > 1 || next.get(v)?.includes(v)) found.push(circleIn(v, component, next));
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** A shortest path from `start` back to itself inside one component (breadth first). */
function circleIn(start: string, component: ReadonlySet<string>, next: ReadonlyMap<string, string[]>): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of next.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path: string[] = [];
        for (let u = v; u !== start; u = parent.get(u)!) path.push(u);
        return [start, ...path.reverse(), start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

test('circles: the circle finder finds a circle and names its files', () => {
  assert.equal(
    circles([
      ['a.ts', 'b.ts'],
      ['b.ts', 'c.ts'],
      ['c.ts', 'a.ts'],
      ['c.ts', 'd.ts'],
      ['e.ts', 'e.ts'],
    ]),
    [
      ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
      ['e.ts', 'e.ts'],
    ],
  );
  assert.equal(
    circles([
      ['a.ts', 'b.ts'],
      ['a.ts', 'c.ts'],
      ['b.ts', 'c.ts'],
    ]),
    [],
  );
});

test('circles: no import circle in host/ (but the known ones, which must still exist)', () => {
  const edge = ([from, to]: readonly [string, string]) => `${from} -> ${to}`;
  const known = new Set(Object.keys(KNOWN_CIRCLES));
  const edges = new Set(imports.map(edge));
  assert.equal(
    [...known].filter((e) => !edges.has(e)),
    [],
    'a known circle is gone: remove its entry from KNOWN_CIRCLES',
  );
  assert.equal(
    circles(imports.filter((e) => !known.has(edge(e)))).map((c) => c.join(' -> ')),
    [],
  );
});

test('bench/ and support/ import nothing from test/', () => {
  const outside = ['bench', 'support'].flatMap((dir) => importsBelow(join(ROOT, dir), ROOT));
  assert.ok(outside.length > 100, `${outside.length} imports of bench/ and support/ read`);
  assert.equal(
    outside.filter(([, to]) => to.startsWith('test/')).map(([from, to]) => `${from} -> ${to}`),
    [],
  );
});

test.run();
