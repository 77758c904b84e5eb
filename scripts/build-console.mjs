#!/usr/bin/env node
// The web console's pages (host/console/web/: TypeScript, one style sheet, index.html) bundled by
// Vite into OUT (default build/console/, gitignored: rebuilt at set-up, never committed), which
// host/console/assets.ts serves. Run by scripts/build.mjs (`npm run build`) and scripts/setup.sh.
// Only files of this origin come out: no CDN, no web font, nothing fetched at run time.
//
//   node scripts/build-console.mjs [--out DIR]
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const outArg = process.argv.indexOf('--out');
const out = resolve(outArg >= 0 ? process.argv[outArg + 1] : join(root, 'build/console'));
const startedAt = Date.now();

await build({
  root: join(root, 'host/console/web'),
  // relative asset URLs: the pages work under any path prefix a proxy puts them at
  base: './',
  configFile: false,
  logLevel: 'warn',
  clearScreen: false,
  build: { outDir: out, emptyOutDir: true, target: 'es2022', sourcemap: false, reportCompressedSize: false, modulePreload: { polyfill: false } },
});
// when the build started: setup.sh rebuilds when a source of host/console/web/ is newer
writeFileSync(join(out, 'build-info.json'), `${JSON.stringify({ startedAt })}\n`);
