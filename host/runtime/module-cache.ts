// On-disk cache of built rule modules: the wasm bytes of each successful build, named by a key of
// everything that decides them (compileKey: the generated code, the assembly/ runtime, the
// compiler's version and options), in a directory of the state directory. A restart with
// unchanged rules takes the module from here through the same WebAssembly.compile, sandbox checks
// and warm-up as a fresh build (build.ts fromWasm), without starting the compile worker. The cache
// only saves work: a file that cannot be read or fails the checks is removed and the rules are
// compiled as usual; a write that fails costs the next start a compile, nothing else.
// A build (scripts/build.mjs) also ships one such directory, SHIPPED_MODULE_DIR, holding the module
// of a default start's rules (host/cli/run/ship-module.ts), read only: a first start finds it by
// the same key, so a module built for other rules, another compiler or another runtime (ABI) is
// never found, and one that fails the checks is not used.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The module cache a build ships (OUT/module-cache; from the sources, the repository's module-cache/, normally absent). */
export const SHIPPED_MODULE_DIR = fileURLToPath(new URL('../../module-cache/', import.meta.url));

const KEY = /^[0-9a-f]{64}$/;

/** A directory of `<key>.wasm` files, the `keep` most recently written kept. */
export class ModuleCache {
  constructor(
    readonly dir: string,
    private readonly keep = 8,
  ) {}

  /** The cached bytes of `key`, or undefined. */
  get(key: string): Uint8Array | undefined {
    if (!KEY.test(key)) return undefined;
    try {
      return readFileSync(this.file(key));
    } catch {
      return undefined;
    }
  }

  /** Stores `wasm` under `key` (write to a temporary name, then rename); false if it could not. */
  put(key: string, wasm: Uint8Array): boolean {
    if (!KEY.test(key)) return false;
    const tmp = `${this.file(key)}.${process.pid}.tmp`;
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(tmp, wasm);
      renameSync(tmp, this.file(key));
      this.prune();
      return true;
    } catch {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // the directory itself is unusable: nothing was written
      }
      return false;
    }
  }

  /** Removes `key`'s file (it failed the checks). */
  remove(key: string): void {
    if (KEY.test(key)) rmSync(this.file(key), { force: true });
  }

  /** The keys present, newest first. */
  keys(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const files = names.flatMap((n) => {
      const key = n.slice(0, -'.wasm'.length);
      if (!n.endsWith('.wasm') || !KEY.test(key)) return [];
      try {
        return [{ key, mtime: statSync(join(this.dir, n)).mtimeMs }];
      } catch {
        return [];
      }
    });
    return files.sort((a, b) => b.mtime - a.mtime).map((f) => f.key);
  }

  private prune(): void {
    for (const key of this.keys().slice(this.keep)) this.remove(key);
  }

  private file(key: string): string {
    return join(this.dir, `${key}.wasm`);
  }
}
