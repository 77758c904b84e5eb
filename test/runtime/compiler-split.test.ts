// The compiler split (host/runtime/asc-loader.ts): binaryen's wasm cut out of its JavaScript once,
// so a compile worker loads the compiler in a quarter of the time. A split is written where asked
// (created), a worker loads the compiler from it and builds the same bytes as from the package
// (reused), and one of another install or with a damaged file is not used: the worker loads the
// package and writes a sound one in its place (rebuilt). A split found sound is taken again
// without hashing while its files stat the same; a worker can be started ahead of its build.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateModule } from '../../host/engine/codegen/index.js';
import { findSplit, splitCompiler, splitKey } from '../../host/runtime/asc-loader.js';
import { RuleCompiler } from '../../host/runtime/compiler.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir('rae-compiler-split-');
const code = generateModule([]).module!.code;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const version = (pkg: string) => (JSON.parse(readFileSync(fileURLToPath(import.meta.resolve(`${pkg}/package.json`)), 'utf8')) as { version: string }).version;

/** Builds `code` in a new compiler's worker with `opts`; the module's sha256 and where the worker loaded the compiler from. */
async function build(opts: ConstructorParameters<typeof RuleCompiler>[0]): Promise<{ wasm: string; from: string | undefined; compiler: RuleCompiler }> {
  const compiler = new RuleCompiler(opts);
  const r = await compiler.buildSource(code);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  return { wasm: r.ok ? sha(r.built.wasm) : '', from: compiler.compilerLoadedFrom, compiler };
}

/** Waits for a sound split to appear under `root` (the worker writes it when idle): its asc.js URL. */
async function splitWritten(root: string): Promise<string> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const url = (await findSplit([root]))?.url;
    if (url) return url;
    assert.ok(Date.now() < deadline, 'the worker wrote a split');
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('splitKey names the installed assemblyscript and binaryen versions', () => {
  const key = splitKey();
  assert.ok(key.includes(`assemblyscript-${version('assemblyscript')}-`), key);
  assert.ok(key.includes(`-binaryen-${version('binaryen')}-`), key);
});

test('splitCompiler writes the split (binaryen.wasm: a valid module), findSplit finds it', async () => {
  const root = join(dir, 'created');
  const at = splitCompiler(root);
  assert.is(at, join(root, splitKey()));
  const wasm = readFileSync(join(at!, 'binaryen.wasm'));
  assert.ok(wasm.length > 1_000_000 && WebAssembly.validate(wasm), 'binaryen.wasm is a wasm module');
  assert.not.ok(readFileSync(join(at!, 'binaryen.js'), 'utf8').includes('`\\0asm'), 'binaryen.js holds no wasm literal');
  assert.is((await findSplit([join(dir, 'none'), root]))?.url, pathToFileURL(join(at!, 'asc.js')).href);
});

test('a worker loads the compiler from the split and builds the same module as from the package', async () => {
  const root = join(dir, 'reused');
  assert.ok(splitCompiler(root));
  const from = await build({ compilerCacheDir: root });
  const pkg = await build({});
  await Promise.all([from.compiler.close(), pkg.compiler.close()]);
  assert.is(from.from, 'split');
  assert.is(pkg.from, 'package');
  assert.is(from.wasm, pkg.wasm, 'the same bytes');
  // a read-only split (a build's) is used the same way
  const shipped = await build({ shippedCompilerDir: root });
  await shipped.compiler.close();
  assert.is(shipped.from, 'split');
});

test('no split: the worker loads the package, writes one when idle, and the next worker loads from it', async () => {
  const root = join(dir, 'first');
  const first = await build({ compilerCacheDir: root });
  assert.is(first.from, 'package');
  await splitWritten(root);
  await first.compiler.close();
  const next = await build({ compilerCacheDir: root });
  await next.compiler.close();
  assert.is(next.from, 'split');
  assert.is(next.wasm, first.wasm);
});

test('a damaged file is not used: the package is, and the split is written again', async () => {
  const root = join(dir, 'damaged');
  const at = splitCompiler(root)!;
  const file = join(at, 'binaryen.wasm');
  const bytes = readFileSync(file);
  const sound = sha(bytes);
  bytes[bytes.length >> 1] ^= 0xff;
  writeFileSync(file, bytes);
  assert.is(await findSplit([root]), undefined, 'a damaged split is not found');
  const r = await build({ compilerCacheDir: root });
  assert.is(r.from, 'package');
  await splitWritten(root);
  await r.compiler.close();
  assert.is(sha(readFileSync(file)), sound, 'binaryen.wasm written again');
});

/** Waits (wide deadline, no timing asserted) until `cond` holds. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (!cond()) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('prestart starts a worker that loads the compiler before a build asks for it; unused, it stops when idle', async () => {
  const root = join(dir, 'prestart');
  assert.ok(splitCompiler(root));
  const compiler = new RuleCompiler({ compilerCacheDir: root, idleMs: 300 });
  try {
    compiler.prestart();
    await until(() => compiler.compilerLoadedFrom === 'split', 'the prestarted worker loaded the compiler from the split');
    assert.ok(compiler.workerRunning);
    const r = await compiler.buildSource(code);
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    await until(() => !compiler.workerRunning, 'the worker stopped after idleMs');
    // a worker prestarted for nothing (no build follows) stops the same way
    compiler.prestart();
    assert.ok(compiler.workerRunning, 'the split checked before: the worker starts at once');
    await until(() => !compiler.workerRunning, 'the unused worker stopped after idleMs');
  } finally {
    await compiler.close();
  }
});

test('a split checked once is taken unhashed while unchanged; a file rewritten since is checked again and not used', async () => {
  const root = join(dir, 'rechecked');
  const at = splitCompiler(root)!;
  const compiler = new RuleCompiler({ compilerCacheDir: root });
  try {
    assert.ok((await compiler.buildSource(code)).ok);
    assert.is(compiler.compilerLoadedFrom, 'split');
    await compiler.close();
    const file = join(at, 'binaryen.wasm');
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(file, bytes);
    const r = await compiler.buildSource(code);
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    assert.is(compiler.compilerLoadedFrom, 'package', 'the damaged split was checked again, and refused');
    await splitWritten(root);
  } finally {
    await compiler.close();
  }
});

test("keepBackend: binaryen's module of the split stays on this thread across workers; without it, none", async () => {
  const root = join(dir, 'backend');
  assert.ok(splitCompiler(root));
  const keeps = new RuleCompiler({ compilerCacheDir: root, keepBackend: true });
  const plain = new RuleCompiler({ compilerCacheDir: root });
  try {
    assert.ok((await keeps.buildSource(code)).ok);
    const kept = await keeps.keptBackend();
    assert.ok(kept instanceof WebAssembly.Module, 'a compiled module is kept');
    assert.ok(WebAssembly.Module.exports(kept).length > 100, "binaryen's exports");
    await keeps.close();
    const again = await keeps.buildSource(code);
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    assert.is(keeps.compilerLoadedFrom, 'split');
    assert.is(await keeps.keptBackend(), kept, 'the same module for the next worker');
    assert.ok((await plain.buildSource(code)).ok);
    assert.is(await plain.keptBackend(), undefined);
  } finally {
    await Promise.all([keeps.close(), plain.close()]);
  }
});

test("another install's split is not used, and is replaced by this one's", async () => {
  const root = join(dir, 'versions');
  const at = splitCompiler(root)!;
  // this install's split as another version wrote it: named and keyed by that version
  const old = splitKey().replace(`assemblyscript-${version('assemblyscript')}`, 'assemblyscript-0.0.1');
  mkdirSync(join(root, old));
  for (const f of readdirSync(at)) writeFileSync(join(root, old, f), readFileSync(join(at, f)));
  const manifest = JSON.parse(readFileSync(join(at, 'split.json'), 'utf8')) as { key: string };
  writeFileSync(join(root, old, 'split.json'), JSON.stringify({ ...manifest, key: old }));
  // and this install's directory holding that version's manifest
  writeFileSync(join(at, 'split.json'), JSON.stringify({ ...manifest, key: old }));
  assert.is(await findSplit([root]), undefined);
  const r = await build({ compilerCacheDir: root });
  assert.is(r.from, 'package');
  await splitWritten(root);
  await r.compiler.close();
  assert.equal(readdirSync(root), [splitKey()], "only this install's split is left");
  assert.not.ok(existsSync(join(root, old)));
});

test.run();
