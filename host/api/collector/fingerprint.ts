// How events become error groups, and whom an event affected (docs/api.md, "Grouping and users
// affected"). As Sentry's and GitLab's integrated backends do, an error is identified by a
// fingerprint of the exception type and the stack frames, never by the message (it holds ids,
// paths and numbers). Consumes one normalized event payload; produces the fingerprint (SHA-1 hex
// of the components, one per line) and the user key.
import { createHash } from 'node:crypto';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** What grouping reads from an event, as event.ts extracted it. */
export interface GroupingInput {
  platform: string;
  /** The exception's type, or for a message event the message's first line. */
  name: string;
  /** The transaction, the last frame's `function(module)`, the culprit or the logger. */
  actor: string;
  /** The frames of the exception the group is named after ([] when it has none or is a message). */
  frames: readonly Obj[];
  /** True for an event with an exception, false for a message-only event. */
  exception: boolean;
}

// Sentry's placeholder for "the default grouping" inside an SDK's own `fingerprint`.
const DEFAULT_PLACEHOLDER = '{{ default }}';

/**
 * A frame's part of the fingerprint: where the code is (module, else file name, else absolute
 * path) and the function. Line and column numbers are left out: an unrelated edit above the
 * frame moves them, and the error is still the same one.
 */
function frameComponent(f: Obj): string | undefined {
  const where = text(f.module) || text(f.filename) || text(f.abs_path);
  const fn = text(f.function);
  return where || fn ? `${where}:${fn}` : undefined;
}

/** The default components: platform, type, then the in-app frames (all frames when none is in-app); without usable frames, the actor. */
function defaultComponents(g: GroupingInput): string[] {
  const inApp = g.frames.filter((f) => f.in_app === true);
  const frames = (inApp.length > 0 ? inApp : g.frames).map(frameComponent).filter((c): c is string => c !== undefined);
  const kind = g.exception ? 'exception' : 'message';
  return frames.length > 0 ? [g.platform, kind, g.name, ...frames] : [g.platform, kind, g.name, g.actor];
}

/**
 * The fingerprint of an event. An SDK may set `fingerprint` (an array of strings, Sentry's
 * protocol) to group its own way; `{{ default }}` in it stands for the default components.
 */
export function fingerprintOf(event: Obj, g: GroupingInput): string {
  const custom = event.fingerprint;
  let components = defaultComponents(g);
  if (Array.isArray(custom) && custom.length > 0 && custom.every((c) => typeof c === 'string' || typeof c === 'number')) {
    components = ['custom', ...custom.flatMap((c) => (c === DEFAULT_PLACEHOLDER ? components : [String(c)]))];
  }
  return createHash('sha1').update(components.join('\n'), 'utf8').digest('hex');
}

/** Who the event affected: the first of the `user`'s id, username, email and IP address, prefixed by its kind; null when it names nobody. */
export function userKeyOf(event: Obj): string | null {
  const user = event.user;
  if (!isObj(user)) return null;
  for (const [field, kind] of [
    ['id', 'id'],
    ['username', 'username'],
    ['email', 'email'],
    ['ip_address', 'ip'],
  ] as const) {
    const v = text(user[field]);
    if (v !== '') return `${kind}:${v.slice(0, 255)}`;
  }
  return null;
}
