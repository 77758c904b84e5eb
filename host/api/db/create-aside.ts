// Creates the API's PGlite database in a short-lived child process, so that what the creation
// leaves behind goes with that process: `rae run`'s way when the build's migrated template cannot
// be used (template.ts; running from the sources, or a template made from other migrations).
// Creating a database (initdb, then every migration: pg_trgm, the tables, their GIN
// indexes) leaves the process that does it with about 110 MB more resident than one that only
// opens the database (bench footprint-split, `npm start` defaults: 377 MB after a first start,
// 265 after a restart; malloc's arenas 69 against 18 MB, other anonymous pages 207 against 146),
// and neither malloc_trim nor a second PGlite instance gives it back. `rae run` creates its
// database here, then opens it as on a restart. Consumes a state directory; produces its
// database, migrated and closed (the child holds the directory's lock while it works).
import { spawn } from 'node:child_process';

/** The facade whose openApiDatabase the child runs: the build's JavaScript, or the sources through tsx. */
const FACADE = new URL(import.meta.url.endsWith('.ts') ? './index.ts' : './index.js', import.meta.url).href;

/** The child's program (`node -e`, the state directory as its argument): creates, migrates, closes, prints the migrations applied and how the database was made. */
function childProgram(): string {
  const open = `const { openApiDatabase } = await import(${JSON.stringify(FACADE)});
const { db, applied, created } = await openApiDatabase({ stateDir: process.argv[1], databaseUrl: '' });
await db.close();
process.stdout.write(JSON.stringify({ applied, created }));`;
  // from the sources, tsx's loader first (bin/rae.js registers it the same way)
  return FACADE.endsWith('.ts') ? `const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}); register();\n${open}` : open;
}

/**
 * Creates and migrates the PGlite database of `stateDir` (pgliteDir) in a child process; resolves
 * with the migrations applied and how it was made (openApiDatabase's `created`) once the child has
 * closed it, rejects with the child's exit status and the end of its stderr when it fails (the
 * caller may then create it in process).
 */
export function createPgliteAside(stateDir: string): Promise<{ pid: number; applied: string[]; created?: string }> {
  return new Promise((resolve, reject) => {
    // its own process group: a terminal's Ctrl-C (SIGINT to the foreground group) stops `rae run`,
    // which waits for the creation to end, and must not cut the creation short (a half-unpacked directory)
    const child = spawn(process.execPath, ['--input-type=module', '-e', childProgram(), stateDir], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-4000)));
    child.once('error', (e) => reject(new Error(`cannot start the process that creates the API database: ${e.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0) return resolve({ pid: child.pid!, ...(JSON.parse(out) as { applied: string[]; created?: string }) });
      const lines = err.trim().split('\n');
      const why = lines.find((l) => /Error:/.test(l)) ?? lines.at(-1) ?? '';
      reject(new Error(`the process that created the API database ended with ${signal ?? `exit code ${code}`}${why ? `: ${why.trim()}` : ''}`));
    });
  });
}
