// Loading the AssemblyScript compiler without binaryen's 13 MB string. binaryen's JavaScript (the
// compiler's back end) carries its 8.9 MB wasm binary as a string literal, decoded to bytes at
// every load: V8 scanning, parsing and decoding it was most of the 1.2-1.6 s CPU a compile worker
// spent loading the compiler, on the way from a rules change to the compiled tier. A split cuts
// the literal out once: binaryen.js reads binaryen.wasm beside it instead, and copies of the
// compiler's two modules import that binaryen.js (plain relative file imports, so no loader hooks
// and no flags). Measured on the loaded 2-core machine: 0.6-1.0 s CPU -> 0.2-0.3 s.
// A split is a directory named by the installed assemblyscript and binaryen versions and where
// they are installed (splitKey), with split.json last: the sha256 of every file. It is only used
// when split.json names this install and every file matches its sum; else the compiler loads from
// its package as before and the compile worker writes a fresh split when idle (splitCompiler),
// replacing whatever the directory held. A build ships one (scripts/build.mjs, SHIPPED_COMPILER_DIR).
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The compiler split a build ships (OUT/compiler-cache; from the sources, the repository's compiler-cache/, normally absent). */
export const SHIPPED_COMPILER_DIR = fileURLToPath(new URL('../../compiler-cache/', import.meta.url));

/** Changes when the way a split is made changes, so older splits are not taken for current ones. */
const SPLIT_FORMAT = 1;
const FILES = ['asc.js', 'assemblyscript.js', 'binaryen.js', 'binaryen.wasm'] as const;
const MANIFEST = 'split.json';

/** Where the compiler's modules are installed, and their versions. */
interface Install {
  asc: string;
  assemblyscript: string;
  binaryen: string;
  long: string;
  versions: string;
}

let installCache: Install | undefined;
function install(): Install {
  if (installCache) return installCache;
  const ascPkg = fileURLToPath(import.meta.resolve('assemblyscript/package.json'));
  // binaryen as the compiler finds it (its own dependency), not as this package would
  const binPkg = createRequire(ascPkg).resolve('binaryen/package.json');
  const version = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  installCache = {
    asc: import.meta.resolve('assemblyscript/asc'),
    assemblyscript: import.meta.resolve('assemblyscript'),
    binaryen: pathToFileURL(join(dirname(binPkg), 'index.js')).href,
    long: import.meta.resolve('long'),
    versions: `assemblyscript-${version(ascPkg)}-binaryen-${version(binPkg)}`,
  };
  return installCache;
}

/** The name of this install's split: the versions, and a hash of the format and the modules' locations (the copies import long and name their originals by URL). */
export function splitKey(): string {
  const i = install();
  const where = createHash('sha256').update(`${SPLIT_FORMAT}\0${i.asc}\0${i.assemblyscript}\0${i.binaryen}\0${i.long}`).digest('hex');
  return `${i.versions.replace(/[^\w.-]/g, '_')}-${where.slice(0, 16)}`;
}

/**
 * The file URL of asc.js in the first of `roots` holding a sound split of this install, with the
 * stat of its files as they were hashed (splitStat), or undefined. About 10 MB, read and hashed
 * in 64 KiB pieces between other work (fileSum).
 */
export async function findSplit(roots: readonly string[]): Promise<{ url: string; stat: string } | undefined> {
  let key: string;
  try {
    key = splitKey();
  } catch {
    return undefined;
  }
  for (const root of roots) {
    const dir = join(root, key);
    try {
      const m = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as { key?: string; files?: Record<string, string> };
      if (m.key !== key || !m.files) continue;
      const url = pathToFileURL(join(dir, 'asc.js')).href;
      // a file rewritten while it was hashed changes its stat: then the split is not taken
      const stat = splitStat(url);
      let sound = stat !== undefined;
      for (const f of FILES) {
        if ((await fileSum(join(dir, f))) !== m.files[f]) sound = false;
      }
      if (sound && splitStat(url) === stat) return { url, stat: stat! };
    } catch {
      // missing or unreadable: not this root
    }
  }
  return undefined;
}

/**
 * The sha256 of the file at `path`, read as a stream: a whole-file read (and WebCrypto's copy of
 * it) left 10-20 MB of buffers behind the check until the next full GC, which at rest after a
 * start can be a minute away: resident memory the engine paid for nothing.
 */
async function fileSum(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const piece of createReadStream(path)) hash.update(piece as Buffer);
  return hash.digest('hex');
}

/**
 * The size, modification time and inode of every file of the split whose asc.js is at `url`
 * (undefined if one is missing): a split found sound before and stat-equal since is taken
 * without hashing it again (compiler.ts), since rewriting or replacing a file changes these.
 */
export function splitStat(url: string): string | undefined {
  const dir = dirname(fileURLToPath(url));
  try {
    return [...FILES, MANIFEST]
      .map((f) => {
        const st = statSync(join(dir, f));
        return `${f}:${st.size}:${st.mtimeMs}:${st.ino}`;
      })
      .join('/');
  } catch {
    return undefined;
  }
}

/** binaryen's JavaScript without its wasm literal (it reads binaryen.wasm beside it), and the wasm; undefined if its shape is not the one known. */
function splitBinaryen(src: string): { js: string; wasm: Uint8Array } | undefined {
  // `NAME(\`\0asm...\`)`: the literal is the module's only one starting with wasm's magic number
  const call = /([A-Za-z_$][\w$]*)\(`\\0asm/.exec(src);
  if (!call || src.indexOf('`\\0asm', call.index + call[0].length) >= 0) return undefined;
  const name = call[1]!;
  // the decoder: one byte per character, as in `function NAME(r){...charCodeAt...~n>>8&n...}`
  const def = new RegExp(`function ${name.replace(/\$/g, '\\$')}\\((\\w+)\\)\\{for\\(var [^}]*?\\.charCodeAt\\(\\w+\\),\\w+\\[\\w+\\]=~(\\w+)>>8&\\2;return \\w+\\}`).exec(src);
  if (!def) return undefined;
  const open = call.index + name.length + 1;
  let end = open + 1;
  while (end < src.length && src[end] !== '`') end += src[end] === '\\' ? 2 : 1;
  if (src[end + 1] !== ')') return undefined;
  // the literal's value as V8 reads it (escapes and all), then binaryen's decoding of it
  const text = new Script(src.slice(open, end + 1)).runInThisContext() as string;
  const wasm = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const n = text.charCodeAt(i);
    wasm[i] = (~n >> 8) & n;
  }
  if (!WebAssembly.validate(wasm)) return undefined;
  const read = 'import{readFileSync as __raeReadWasm}from"node:fs";\n';
  return { js: read + src.slice(0, call.index) + '__raeReadWasm(new URL("./binaryen.wasm",import.meta.url))' + src.slice(end + 2), wasm };
}

/** A copy of one of the compiler's modules importing the split's files, naming its original by URL; undefined if an import is not where expected. */
function rewrite(src: string, url: string, imports: Record<string, string>): string | undefined {
  let out = src;
  for (const [spec, to] of Object.entries(imports)) {
    const from = `from"${spec}"`;
    if (!out.includes(from)) return undefined;
    out = out.replaceAll(from, `from${JSON.stringify(to)}`);
  }
  out = out.replaceAll('import.meta.url', JSON.stringify(url));
  // any other use of import.meta would see the copy's location
  return out.includes('import.meta') ? undefined : out;
}

/**
 * Writes this install's split under `root` (root/<splitKey>), replacing any other entry there,
 * and returns its directory; undefined if binaryen or the compiler are not shaped as expected (the
 * compiler then keeps loading from its package). Costs about 1-2 s CPU, once per install.
 */
export function splitCompiler(root: string): string | undefined {
  // never throws: the compile worker runs it between builds
  let tmp: string | undefined;
  try {
    const key = splitKey();
    const dir = join(root, key);
    tmp = join(root, `.${key}.${process.pid}.${Date.now()}`);
    const i = install();
    const read = (url: string) => readFileSync(fileURLToPath(url), 'utf8');
    const binaryen = splitBinaryen(read(i.binaryen));
    const asc = rewrite(read(i.asc), i.asc, { binaryen: './binaryen.js', assemblyscript: './assemblyscript.js' });
    const as = rewrite(read(i.assemblyscript), i.assemblyscript, { binaryen: './binaryen.js', long: i.long });
    if (!binaryen || !asc || !as) return undefined;
    const files: Record<(typeof FILES)[number], string | Uint8Array> = { 'asc.js': asc, 'assemblyscript.js': as, 'binaryen.js': binaryen.js, 'binaryen.wasm': binaryen.wasm };
    mkdirSync(tmp, { recursive: true });
    const sums: Record<string, string> = {};
    for (const f of FILES) {
      writeFileSync(join(tmp, f), files[f]);
      sums[f] = createHash('sha256').update(files[f]).digest('hex');
    }
    writeFileSync(join(tmp, MANIFEST), `${JSON.stringify({ key, files: sums })}\n`);
    // older installs' splits, a damaged one of this install, unfinished writes: all replaced
    for (const e of readdirSync(root)) if (join(root, e) !== tmp) rmSync(join(root, e), { recursive: true, force: true });
    renameSync(tmp, dir);
    return dir;
  } catch {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    return undefined;
  }
}
