// The compiled program of a suite test's processes (leaf.c: perl embedded, running leaf.pl), built
// with the system cc against the node's libperl (Debian's perl ships its headers and shared
// library: libperl5.36) into a fresh temporary directory, once per runner, and removed by
// dispose(). Consumes leaf.c and the node's perl configuration; produces the program's path.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = fileURLToPath(new URL('./leaf.c', import.meta.url));

/** A built leaf program. */
export interface LeafProgram {
  path: string;
  dispose(): void;
}

/** perl's answer to `perl -MExtUtils::Embed -e WHAT` (ccopts, ldopts) or `-MConfig` lookups, as arguments. */
function perlWords(args: string[]): string[] {
  return execFileSync('/usr/bin/perl', args, { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
}

/**
 * Compiles leaf.c; throws an error saying what is missing or the compiler's output. libperl is
 * named by its file (Config's libperl, e.g. libperl.so.5.36): Debian's perl has no unversioned
 * libperl.so without libperl-dev.
 */
export function buildLeafProgram(): LeafProgram {
  const dir = mkdtempSync(join(tmpdir(), 'rae-suite-leaf-'));
  const path = join(dir, 'leaf');
  try {
    const ccopts = perlWords(['-MExtUtils::Embed', '-e', 'ccopts']);
    const libperl = perlWords(['-MConfig', '-e', 'print $Config{libperl}'])[0] ?? 'libperl.so';
    const ldopts = perlWords(['-MExtUtils::Embed', '-e', 'ldopts']).map((w) => (w === '-lperl' ? `-l:${libperl}` : w));
    const cc = spawnSync('cc', ['-O1', '-o', path, SOURCE, ...ccopts, ...ldopts], { encoding: 'utf8' });
    if (cc.error) throw new Error(`cc: ${cc.error.message} (the suite's process program is compiled with the system cc: Debian's gcc)`);
    if (cc.status !== 0) throw new Error(`cc ${SOURCE} failed:\n${cc.stderr.trim()}`);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`building the suite's process program (leaf.c): ${(err as Error).message}`);
  }
  return { path, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
