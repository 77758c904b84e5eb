#!/usr/bin/env node
// Entry point of the `rae` command. Runs the JavaScript build (`npm run build`, dist/) when it is
// present and no source file is newer than it; otherwise the TypeScript sources through tsx's
// loader, so a fresh checkout needs no compile step. RAE_BUILD=DIR runs the build in DIR
// unconditionally; RAE_TSX=1 always runs the sources.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The newest modification time (ms) of `path` and, for a directory, everything below it. */
function newest(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let t = st.mtimeMs;
  for (const name of readdirSync(path)) t = Math.max(t, newest(join(path, name)));
  return t;
}

/** Whether the build in `dir` was made after the last change to every source it was made from. */
function upToDate(dir) {
  let info;
  try {
    info = JSON.parse(readFileSync(join(dir, 'build-info.json'), 'utf8'));
  } catch {
    return false;
  }
  const sources = ['host', 'assembly', 'asconfig.json', 'rules', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
  return sources.every((s) => newest(join(root, s)) <= info.startedAt);
}

const build = process.env.RAE_BUILD || (process.env.RAE_TSX !== '1' && upToDate(join(root, 'dist')) ? join(root, 'dist') : undefined);
let main;
if (build) ({ main } = await import(pathToFileURL(join(build, 'host/cli/main.js')).href));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../host/cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
