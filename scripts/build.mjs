#!/usr/bin/env node
// `npm run build`: the TypeScript under host/ to JavaScript in OUT (default dist/), laid out as
// the repository is, so every path the code derives from import.meta.url resolves the same way:
//   OUT/host/**.js       tsc's output, plus every other file under host/ (SQL migrations, ...)
//                        and the API's PGlite template (a new database's data directory, migrated)
//   OUT/assembly/        the AssemblyScript runtime sources the compile worker reads, and
//   OUT/asconfig.json    the options it compiles them with
//   OUT/rules/           the built-in rule sets
//   OUT/module-cache/    the compiled module of a default start's rules (host/runtime/module-cache.ts)
//   OUT/compiler-cache/  the compiler split the compile worker loads the compiler from (host/runtime/asc-loader.ts)
//   OUT/package.json     the version `rae --version` reports (and "type": "module")
//   OUT/build/json-index.wasm  the audit webhook's EventList walk (scripts/build-json-index.mjs), which
//                        host/sources/audit/list-walk.ts loads from OUT/host/sources/audit/
//   OUT/build/console/   the web console's pages (scripts/build-console.mjs, Vite), as host/console/assets.ts
//                        finds them from OUT/host/console/
//   OUT/probes           a link to the repository's probes/ (its build/ holds the native addons)
//   OUT/node_modules     a link to the repository's, when OUT is outside the repository
//   OUT/build-info.json  when the build started; bin/rae.js runs the build only while no source
//                        file is newer than that (and tsx otherwise)
//
//   node scripts/build.mjs [--out DIR]
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outArg = process.argv.indexOf('--out');
const out = resolve(outArg >= 0 ? process.argv[outArg + 1] : join(root, 'dist'));
const startedAt = Date.now();

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

/** Copies every file under `dir` (relative to the root) that is not TypeScript. */
function copyAssets(dir) {
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = join(dir, e.name);
    if (e.isDirectory()) copyAssets(rel);
    else if (!e.name.endsWith('.ts')) {
      mkdirSync(dirname(join(out, rel)), { recursive: true });
      cpSync(join(root, rel), join(out, rel));
    }
  }
}
copyAssets('host');
for (const p of ['assembly', 'asconfig.json', 'rules', 'package.json']) cpSync(join(root, p), join(out, p), { recursive: true });

/** A link at OUT/name to the repository's `name`: relative inside the repository, absolute outside. */
function link(name) {
  const target = join(root, name);
  if (!existsSync(target)) return;
  const inside = !relative(root, out).startsWith('..');
  symlinkSync(inside ? relative(out, target) : target, join(out, name));
}
link('probes');
// the console's pages, bundled into the repository's build/console/ (the sources' copy) and copied
// here. A build newer than every source of it is reused: scripts/build-image.sh ships the host's in
// the image's context, since Vite's bundler (rolldown) finds no native binding in the image's builder.
if (!consoleFresh()) {
  const consoleBuild = spawnSync(process.execPath, [join(root, 'scripts/build-console.mjs')], { stdio: 'inherit', cwd: root });
  if (consoleBuild.status !== 0) process.exit(consoleBuild.status ?? 1);
}
cpSync(join(root, 'build/console'), join(out, 'build/console'), { recursive: true });
const walk = spawnSync(process.execPath, [join(root, 'scripts/build-json-index.mjs'), join(out, 'build/json-index.wasm')], { stdio: 'inherit', cwd: root });
if (walk.status !== 0) process.exit(walk.status ?? 1);
if (relative(root, out).startsWith('..')) link('node_modules');
// OUT/host/api/db/pglite-template.tar.gz and .key: a new PGlite database with every migration
// applied and what it was made for, which a first start unpacks instead of running initdb and the
// migrations (host/api/db/template.ts).
const dump = `const { writeTemplate } = await import(process.argv[1]); await writeTemplate();`;
const made = spawnSync(process.execPath, ['--input-type=module', '-e', dump, pathToFileURL(join(out, 'host/api/db/template.js')).href], { stdio: 'inherit', cwd: root });
if (made.status !== 0) process.exit(made.status ?? 1);
// OUT/module-cache/<key>.wasm: the compiled module of a default start's rules (host/cli/run/ship-module.ts),
// which a first start takes instead of compiling, after the same checks as the state directory's module cache.
const ship = `const { shipModule } = await import(process.argv[1]); await shipModule(process.argv[2]);`;
const shipped = spawnSync(process.execPath, ['--input-type=module', '-e', ship, pathToFileURL(join(out, 'host/cli/run/ship-module.js')).href, join(out, 'module-cache')], { stdio: 'inherit', cwd: root });
if (shipped.status !== 0) process.exit(shipped.status ?? 1);
// OUT/compiler-cache/<key>/: the AssemblyScript compiler with binaryen's wasm cut out of its
// JavaScript (host/runtime/asc-loader.ts), which a compile worker loads in a quarter of the time,
// so a first start's rule change has it. Without it (an unknown binaryen) the worker loads the package.
const splitJs = `const { splitCompiler } = await import(process.argv[1]); if (!splitCompiler(process.argv[2])) console.error('build: no compiler split (host/runtime/asc-loader.ts): the compile worker loads the compiler from its package');`;
spawnSync(process.execPath, ['--input-type=module', '-e', splitJs, pathToFileURL(join(out, 'host/runtime/asc-loader.js')).href, join(out, 'compiler-cache')], { stdio: 'inherit', cwd: root });

writeFileSync(join(out, 'build-info.json'), `${JSON.stringify({ startedAt })}\n`);

/** Whether build/console/ holds a build newer than host/console/web/, host/console/shapes.ts and the lockfile (as scripts/setup.sh decides). */
function consoleFresh() {
  const info = join(root, 'build/console/build-info.json');
  if (!existsSync(info)) return false;
  const built = statSync(info).mtimeMs;
  const newest = (path) => {
    const st = statSync(path);
    if (!st.isDirectory()) return st.mtimeMs;
    return Math.max(st.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
  };
  return [join(root, 'host/console/web'), join(root, 'host/console/shapes.ts'), join(root, 'package-lock.json')].every((p) => newest(p) <= built);
}
