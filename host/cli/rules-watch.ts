// Falco's watch_config_files for `rae run`: the rules files and directories in rules.files (and
// -r) are watched, and a change reloads through the same path as SIGHUP (reload.ts), so an
// invalid change is refused with its located error and the running rules stay. The directory
// holding each path is watched rather than the file, which catches a file rewritten in place, a
// file added to a watched directory, an editor's rename-over, and a Kubernetes ConfigMap's swap
// of the `..data` symlink (the files are links through it). Events are debounced: one reload per
// burst. Consumes paths; produces calls of `onChange`.
import { watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { statSync } from 'node:fs';

/** A running watch; `close` stops it. */
export interface RulesWatch {
  dirs: string[];
  close(): void;
}

/** Watches the directories of `paths` (a directory is watched itself); calls onChange once per burst of events. */
export function watchRulesFiles(paths: readonly string[], onChange: () => void, log: (m: string) => void, debounceMs = 250): RulesWatch {
  const dirs = [...new Set(paths.map((p) => {
    const full = resolve(p);
    try {
      return statSync(full).isDirectory() ? full : dirname(full);
    } catch {
      return dirname(full);
    }
  }))];
  let timer: NodeJS.Timeout | undefined;
  const fire = () => {
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  };
  const watchers: FSWatcher[] = [];
  for (const dir of dirs) {
    try {
      watchers.push(watch(dir, { persistent: false }, fire).on('error', (err) => log(`run: watching ${dir}: ${err.message}; changes there need a SIGHUP`)));
    } catch (err) {
      log(`run: cannot watch ${dir}: ${(err as Error).message}; changes there need a SIGHUP`);
    }
  }
  return {
    dirs,
    close() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
