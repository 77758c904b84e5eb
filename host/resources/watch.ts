// Watches one directory of manifest files and hands a full snapshot of it to `onChange` whenever
// its content changes. inotify (fs.watch) gives the fast path; a periodic stat rescan covers what
// inotify misses (network file systems, the directory being replaced, events lost under load).
// Changes are debounced (50 ms of silence; Falco waits 100 ms: reference §2 "Hot reload") and
// reconciles never overlap: a change during one schedules exactly one more. Bounded: at most
// `maxFiles` files of at most `maxFileBytes` each are read; the rest are reported, not read.
// Consumes a directory path; produces ManifestFile snapshots (sorted by path).
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** One file of a snapshot: its text, or why it was not read. */
export interface ManifestFile {
  path: string;
  text?: string;
  error?: string;
}

export interface WatchOptions {
  dir: string;
  /** Called with every changed snapshot, one call at a time. */
  onChange(files: ManifestFile[]): Promise<void>;
  log(message: string): void;
  debounceMs?: number;
  rescanMs?: number;
  maxFiles?: number;
  maxFileBytes?: number;
}

/** A running watch. */
export interface DirectoryWatch {
  /** Resolves once no change is pending or being handled. */
  idle(): Promise<void>;
  close(): void;
}

/** Manifest file names: YAML (or JSON) and not hidden (editor swap files, `..data` of mounted volumes). */
export function isManifestName(name: string): boolean {
  return !name.startsWith('.') && /\.(ya?ml|json)$/i.test(name);
}

async function listing(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter(isManifestName).sort();
  } catch {
    return [];
  }
}

/** A cheap signature of the directory: names, sizes, mtimes and inodes. */
async function statSignature(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const name of await listing(dir)) {
    try {
      const s = await stat(join(dir, name));
      if (s.isFile()) parts.push(`${name}:${s.size}:${s.mtimeMs}:${s.ino}`);
    } catch {
      parts.push(`${name}:gone`);
    }
  }
  return parts.join('/');
}

/** Reads the directory: every manifest file, bounded in number and size. */
export async function readSnapshot(dir: string, maxFiles = 256, maxFileBytes = 1 << 20): Promise<ManifestFile[]> {
  const out: ManifestFile[] = [];
  const names = await listing(dir);
  for (const [i, name] of names.entries()) {
    const path = join(dir, name);
    if (i >= maxFiles) {
      out.push({ path, error: `not read: the directory has more than ${maxFiles} manifest files` });
      continue;
    }
    try {
      const s = await stat(path);
      if (!s.isFile()) continue;
      if (s.size > maxFileBytes) {
        out.push({ path, error: `not read: ${s.size} bytes is over the limit of ${maxFileBytes} bytes per manifest file` });
        continue;
      }
      out.push({ path, text: await readFile(path, 'utf8') });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') out.push({ path, error: `cannot read: ${(err as Error).message}` });
    }
  }
  return out;
}

function contentKey(files: ManifestFile[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(`${f.path}\0${f.text ?? ''}\0${f.error ?? ''}\0`);
  return h.digest('hex');
}

/** Starts watching; the first snapshot is delivered (and handled) before this resolves. */
export async function watchDirectory(opts: WatchOptions): Promise<DirectoryWatch> {
  const debounceMs = opts.debounceMs ?? 50;
  const rescanMs = opts.rescanMs ?? 1000;
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastKey = '';
  let lastStat = '';
  let running: Promise<void> | undefined;
  let dirty = false;
  let closed = false;
  const waiters: Array<() => void> = [];

  const settleIfIdle = () => {
    if (!running && !timer) while (waiters.length > 0) waiters.shift()!();
  };

  async function reconcile(): Promise<void> {
    do {
      dirty = false;
      const files = await readSnapshot(opts.dir, opts.maxFiles, opts.maxFileBytes);
      const key = contentKey(files);
      if (key === lastKey || closed) continue;
      lastKey = key;
      try {
        await opts.onChange(files);
      } catch (err) {
        opts.log(`resources: handling a change failed: ${(err as Error).message}`);
      }
    } while (dirty && !closed);
  }

  function trigger(delay = debounceMs): void {
    if (closed) return;
    if (running) {
      dirty = true;
      return;
    }
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      running = reconcile().finally(() => {
        running = undefined;
        settleIfIdle();
      });
    }, delay);
  }

  function startWatcher(): void {
    if (watcher || closed) return;
    try {
      watcher = watch(opts.dir, { persistent: false }, () => trigger());
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined; // the rescan re-creates it once the directory is back
        trigger();
      });
    } catch {
      watcher = undefined;
    }
  }

  startWatcher();
  lastStat = await statSignature(opts.dir);
  running = reconcile().finally(() => {
    running = undefined;
    settleIfIdle();
  });
  await running;

  let dirIno = await stat(opts.dir).then((s) => s.ino, () => -1);
  const interval = setInterval(() => {
    // A directory replaced under the same path (rename, volume remount): watch the new one.
    void stat(opts.dir).then((s) => s.ino, () => -1).then((ino) => {
      if (ino !== dirIno) {
        dirIno = ino;
        watcher?.close();
        watcher = undefined;
      }
      startWatcher();
    });
    void statSignature(opts.dir).then((sig) => {
      if (sig !== lastStat) {
        lastStat = sig;
        trigger();
      }
    });
  }, rescanMs);
  interval.unref();

  return {
    idle: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        settleIfIdle();
      }),
    close() {
      closed = true;
      clearInterval(interval);
      if (timer) clearTimeout(timer);
      timer = undefined;
      watcher?.close();
      settleIfIdle();
    },
  };
}
