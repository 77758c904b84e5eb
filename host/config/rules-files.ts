// Reading rules files named on the command line (`-r FILE`, repeatable; a directory loads its
// *.yaml files in name order, as Falco does). Unreadable paths are reported, never thrown.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RulesFile } from '../engine/index.js';

/** Reads the named files (directories expand to their .yaml/.yml files, sorted). */
export function readRulesFiles(paths: readonly string[]): { files: RulesFile[]; problems: string[] } {
  const files: RulesFile[] = [];
  const problems: string[] = [];
  for (const p of paths) {
    try {
      if (statSync(p).isDirectory()) {
        for (const name of readdirSync(p)
          .filter((n) => /\.ya?ml$/.test(n))
          .sort()) {
          const full = join(p, name);
          files.push({ name: full, text: readFileSync(full, 'utf8') });
        }
      } else {
        files.push({ name: p, text: readFileSync(p, 'utf8') });
      }
    } catch (err) {
      problems.push(`${p}: LOAD_ERR_FILE_READ (File read error): ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
    }
  }
  return { files, problems };
}
