// User and group names for user.name / user.loginname / group.name: consumes /etc/passwd and
// /etc/group (the host's files; names inside containers are not resolved), produces id -> name
// maps. The files are re-read when their mtime or size changes, checked at most once a second.
import { readFileSync, statSync } from 'node:fs';

const RECHECK_MS = 1000;

class IdFile {
  private names = new Map<number, string>();
  private stamp = '';
  private checked = 0;

  constructor(private readonly path: string) {}

  name(id: number): string | undefined {
    const now = Date.now();
    if (now - this.checked >= RECHECK_MS) {
      this.checked = now;
      this.reload();
    }
    return this.names.get(id);
  }

  private reload(): void {
    let stamp: string;
    try {
      const st = statSync(this.path);
      stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      stamp = 'missing';
    }
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    const names = new Map<number, string>();
    try {
      for (const line of readFileSync(this.path, 'utf8').split('\n')) {
        const f = line.split(':');
        if (f.length < 3 || line.startsWith('#')) continue;
        const id = Number(f[2]);
        if (Number.isInteger(id) && !names.has(id)) names.set(id, f[0]!);
      }
    } catch {
      // unreadable: no names
    }
    this.names = names;
  }
}

/** Name lookups over the passwd and group files. */
export class UserNames {
  private readonly users: IdFile;
  private readonly groups: IdFile;

  constructor(passwd = '/etc/passwd', group = '/etc/group') {
    this.users = new IdFile(passwd);
    this.groups = new IdFile(group);
  }

  /** The user name of `uid`, or undefined. */
  user(uid: number): string | undefined {
    return this.users.name(uid);
  }

  /** The group name of `gid`, or undefined. */
  group(gid: number): string | undefined {
    return this.groups.name(gid);
  }
}
