// Why a write under the state directory failed, in words the operator can act on. Node's
// `mkdir -p` (mkdirSync recursive) reports ENOENT for the missing path when its parent is on a
// read-only file system, which names the wrong cause; asking the parent itself gives EROFS.
// Consumes a failed fs call's error and the directory written into; produces a message.
import { accessSync, constants } from 'node:fs';

/** Why writing under `parent` failed: a read-only or full file system named as such, else the error itself. */
export function writeProblem(parent: string, err: NodeJS.ErrnoException): string {
  let code = err.code;
  try {
    accessSync(parent, constants.W_OK);
  } catch (e) {
    code = (e as NodeJS.ErrnoException).code ?? code;
  }
  if (code === 'EROFS') return `${parent} is on a read-only file system (EROFS)`;
  if (code === 'ENOSPC') return `no space left on the file system of ${parent} (ENOSPC)`;
  return err.message;
}
