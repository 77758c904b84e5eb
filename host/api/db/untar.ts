// Unpacks the API's database template (template.ts: a gzipped tar of PGlite's dumpDataDir, plain
// ustar directories and files) into a data directory with Node's own file system calls, so that
// PGlite then opens it as it opens an existing database on a restart. PGlite's own loadDataDir
// writes each file through its WebAssembly file system layer and leaves the process about 90 MB
// more resident than a restart; unpacked here, a first start stays near a restart's (measured
// under load, `npm start`'s defaults, 8 s after ready: 369 MB through loadDataDir, 276 MB
// unpacked here, 267 MB on a restart). Consumes the template's bytes; produces its files below a
// directory.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const BLOCK = 512;

/** A header field: the bytes up to the first NUL, as text. */
function field(header: Uint8Array, at: number, length: number): string {
  const bytes = header.subarray(at, at + length);
  const end = bytes.indexOf(0);
  return Buffer.from(end < 0 ? bytes : bytes.subarray(0, end)).toString('utf8');
}

/** An octal number field (size, mode). */
function octal(header: Uint8Array, at: number, length: number): number {
  const text = field(header, at, length).trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}

/** `name` below `dir`, refused when it would leave it (`..`). */
function inside(dir: string, name: string): string {
  const rel = normalize(name.replace(/^\/+/, ''));
  if (rel === '.') return dir;
  if (rel.startsWith('..')) throw new Error(`the database template names a path outside its directory: ${name}`);
  return join(dir, rel);
}

/**
 * Writes every directory and file of the gzipped tar `tgz` below `dir` (which exists), with their
 * modes, the file named `last` (a path below `dir`) after all the others; throws on an entry of
 * another kind (a link) or a truncated archive, leaving what it wrote.
 */
export async function untarInto(tgz: Uint8Array, dir: string, last?: string): Promise<void> {
  const tar = await promisify(gunzip)(tgz);
  const made = new Set<string>([dir]);
  let lastFile: { path: string; data: Uint8Array; mode: number } | undefined;
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) {
      // the end: zero blocks
      if (lastFile) await writeFile(lastFile.path, lastFile.data, { mode: lastFile.mode });
      return;
    }
    const ustar = field(header, 257, 6) === 'ustar';
    const prefix = ustar ? field(header, 345, 155) : '';
    const name = prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100);
    const size = octal(header, 124, 12);
    const mode = octal(header, 100, 8) & 0o7777;
    const type = String.fromCharCode(header[156]!);
    const start = at + BLOCK;
    if (start + size > tar.length) throw new Error(`the database template is truncated at ${name}`);
    const path = inside(dir, name);
    if (type === '5') {
      await mkdir(path, { recursive: true, mode: mode || 0o750 });
      made.add(path);
    } else if (type === '0' || type === '\0') {
      if (!made.has(dirname(path))) {
        await mkdir(dirname(path), { recursive: true, mode: 0o750 }); // a file listed before its directory
        made.add(dirname(path));
      }
      if (last !== undefined && path === join(dir, last)) lastFile = { path, data: tar.subarray(start, start + size), mode: mode || 0o600 };
      else await writeFile(path, tar.subarray(start, start + size), { mode: mode || 0o600 });
    } else throw new Error(`the database template holds an entry of type ${JSON.stringify(type)} (${name}): only directories and files are unpacked`);
    at = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new Error('the database template ends without its end blocks');
}
