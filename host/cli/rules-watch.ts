// Falco's watch_config_files for `rae run`: the rules files and directories in rules.files (and
// -r) are watched, and a change reloads through the same path as SIGHUP (reload.ts), so an
// invalid change is refused with its located error and the running rules stay. The directory
// holding each path is watched rather than the file, which catches a file rewritten in place, a
// file added to a watched directory, an editor's rename-over, and a Kubernetes ConfigMap's swap
// of the `..data` symlink (the files are links through it). Events are debounced: one reload per
// burst. Consumes paths; produces calls of `onChange`.
import { statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/** A running watch; `close` stops it. */
export interface RulesWatch {
  dirs: string[];
  close(): void;
}

/** Watches the directories of `paths` (a directory is watched itself); calls onChange once per burst of events. */
export function watchRulesFiles(paths: readonly string[], onChange: () => void, log: (m: string) => void, debounceMs = 250): RulesWatch {
  // Per watched directory, which entry names matter: a file's own name, any *.yaml/*.yml of a
  // watched directory, and `..data` (a ConfigMap swap); other entries (a state directory, a file
  // read by a test) do not reload.
  const wanted = new Map<string, (name: string) => boolean>();
  const add = (dir: string, test: (name: string) => boolean) => {
    const prev = wanted.get(dir);
    wanted.set(dir, prev ? (n) => prev(n) || test(n) : test);
  };
  for (const p of paths) {
    const full = resolve(p);
    let isDir = false;
    try {
      isDir = statSync(full).isDirectory();
    } catch {
      // Not there yet: its directory is watched for it.
    }
    if (isDir) add(full, (n) => n === '..data' || /\.ya?ml$/.test(n));
    else add(dirname(full), (n) => n === '..data' || n === basename(full));
  }
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  for (const [dir, test] of wanted) {
    const fire = (_: string, name: string | null) => {
      if (name !== null && !test(name)) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
    };
    try {
      watchers.push(watch(dir, { persistent: false }, fire).on('error', (err) => log(`run: watching ${dir}: ${err.message}; changes there need a SIGHUP`)));
    } catch (err) {
      log(`run: cannot watch ${dir}: ${(err as Error).message}; changes there need a SIGHUP`);
    }
  }
  return {
    dirs: [...wanted.keys()],
    close() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
