// Watches one directory of manifest files and hands a full snapshot of it to `onChange` whenever
// its content changes. inotify (fs.watch) gives the fast path; a periodic stat rescan covers what
// inotify misses (network file systems, the directory being replaced, events lost under load).
// Changes are debounced (50 ms of silence; Falco waits 100 ms: reference §2 "Hot reload") and
// reconciles never overlap: a change during one schedules exactly one more. Bounded: at most
// `maxFiles` files of at most `maxFileBytes` each are read; the rest are reported, not read.
// Confined (docs/resources.md "What is read"): a file is read only when its real path, every
// link resolved, is a regular file inside the directory's real path, so the `..data` links of a
// ConfigMap mount work and a link out of the directory (to /etc/shadow) is refused unread; its
// report names the link only, so no diagnostic can quote what the engine must not read.
// Consumes a directory path; produces ManifestFile snapshots (sorted by path).
import { createHash } from 'node:crypto';
import { constants, watch, type FSWatcher } from 'node:fs';
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

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

/** Reads the directory: every manifest file, bounded in number and size, confined to the directory. */
async function readSnapshot(dir: string, maxFiles = 256, maxFileBytes = 1 << 20): Promise<ManifestFile[]> {
  const out: ManifestFile[] = [];
  const names = await listing(dir);
  const root = await realpath(dir).catch(() => undefined);
  for (const [i, name] of names.entries()) {
    const path = join(dir, name);
    if (i >= maxFiles) {
      out.push({ path, error: `not read: the directory has more than ${maxFiles} manifest files` });
      continue;
    }
    const file = root === undefined ? undefined : await readConfined(path, root, maxFileBytes);
    if (file) out.push(file);
  }
  return out;
}

/** True when `real` names something strictly below the directory `root` (both real paths). */
function inside(root: string, real: string): boolean {
  const rel = relative(root, real);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** A read that met a change in progress (a ConfigMap's `..data` swap): try again, else refuse for `why`. */
interface Retry {
  retry: string;
}

/**
 * Reads one manifest file if its real path is a regular file inside `root`, of at most
 * `maxBytes`; otherwise says why not, naming only `path`, never what it points to. Undefined
 * when the file is gone. A read that meets a change in progress is tried again (three times).
 */
async function readConfined(path: string, root: string, maxBytes: number): Promise<ManifestFile | undefined> {
  let why = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const r = await readOnce(path, root, maxBytes);
    if (r === undefined || !('retry' in r)) return r;
    why = r.retry;
  }
  return { path, error: `not read: ${why}` };
}

/**
 * One attempt. The file is opened by its real path without following a link, and the opened
 * file must be the one checked (same device and inode), so a link swapped between the check
 * and the read cannot redirect the read out of the directory.
 */
async function readOnce(path: string, root: string, maxBytes: number): Promise<ManifestFile | Retry | undefined> {
  const refuse = (why: string): ManifestFile => ({ path, error: `not read: ${why}` });
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') return refuse(`cannot resolve its path (${code ?? 'error'})`);
    return (await lstat(path).then(
      () => true,
      () => false,
    ))
      ? { retry: 'it is a link to nothing' }
      : undefined;
  }
  if (!inside(root, real)) return refuse('it is a link to a file outside the resources directory (links may only point inside it)');
  try {
    const checked = await lstat(real);
    if (!checked.isFile()) return refuse('not a regular file');
    if (checked.size > maxBytes) return refuse(`${checked.size} bytes is over the limit of ${maxBytes} bytes per manifest file`);
    const fh = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      const opened = await fh.stat();
      if (opened.dev !== checked.dev || opened.ino !== checked.ino) return { retry: 'it kept changing while it was being read' };
      // Up to one byte past the limit: a file that grew since the check is refused, not cut.
      const chunks: Buffer[] = [];
      for (let n = 0; ; ) {
        const chunk = Buffer.alloc(Math.min(1 << 16, maxBytes + 1 - n));
        const { bytesRead } = await fh.read(chunk, 0, chunk.length, n);
        if (bytesRead === 0) break;
        chunks.push(chunk.subarray(0, bytesRead));
        n += bytesRead;
        if (n > maxBytes) return refuse(`it grew over the limit of ${maxBytes} bytes per manifest file`);
      }
      return { path, text: Buffer.concat(chunks).toString('utf8') };
    } finally {
      await fh.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Gone or turned into a link since it was resolved: a swap in progress.
    if (code === 'ENOENT' || code === 'ELOOP') return { retry: 'it kept changing while it was being read' };
    return refuse(`cannot read it (${code ?? 'error'})`);
  }
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

  let dirIno = await stat(opts.dir).then(
    (s) => s.ino,
    () => -1,
  );
  const interval = setInterval(() => {
    // A directory replaced under the same path (rename, volume remount): watch the new one.
    void stat(opts.dir)
      .then(
        (s) => s.ino,
        () => -1,
      )
      .then((ino) => {
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
