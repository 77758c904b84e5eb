// The bootstrap file: YAML naming users (with tokens), projects and memberships, applied at
// start (config `api.bootstrapFile`) and by `rae admin apply FILE`. Applying is idempotent:
// users and projects are matched by name/path (any case), tokens by value, roles are set.
// Consumes YAML text; produces a validated plan (or located problems), then applies it in one
// transaction. Format: docs/api.md.
import { parse as parseYaml } from 'yaml';
import { addToken, findUser, PROJECT_PATH_RE, ROLES, USERNAME_RE, setMember, upsertProject, upsertUser, type Db, type RoleName } from './db/index.js';

/** A validated bootstrap file. */
export interface BootstrapPlan {
  users: Array<{ username: string; admin: boolean; tokens: Array<{ name: string; token: string; scope: 'api' | 'read_api'; expiresAt?: string }> }>;
  projects: Array<{ path: string; visibility: 'private' | 'public'; members: Array<{ username: string; role: RoleName }> }>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Keys allowed at each level, so a typo is reported instead of ignored. */
function checkKeys(o: Obj, allowed: string[], at: string, problems: string[]): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) problems.push(`${at}${at.endsWith(':') ? ' ' : '.'}${k}: unknown key (expected one of ${allowed.join(', ')})`);
  }
}

function list(v: unknown, at: string, problems: string[]): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    problems.push(`${at}: expected a list`);
    return [];
  }
  return v;
}

function text(o: Obj, key: string, at: string, problems: string[], required = true): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) {
    if (required) problems.push(`${at}.${key}: missing`);
    return undefined;
  }
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (typeof v !== 'string' || v === '') {
    problems.push(`${at}.${key}: expected a non-empty string`);
    return undefined;
  }
  return v;
}

/** Parses and validates a bootstrap file; problems name the file and the key path. */
export function parseBootstrap(source: string, yamlText: string): { ok: true; plan: BootstrapPlan } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  let doc: unknown;
  try {
    doc = parseYaml(yamlText);
  } catch (err) {
    return { ok: false, problems: [`${source}: ${(err as Error).message.split('\n')[0]}`] };
  }
  const plan: BootstrapPlan = { users: [], projects: [] };
  if (doc === null || doc === undefined) return { ok: true, plan };
  if (!isObj(doc)) return { ok: false, problems: [`${source}: expected a mapping with users and projects`] };
  checkKeys(doc, ['users', 'projects'], `${source}:`, problems);
  list(doc.users, `${source}: users`, problems).forEach((u, i) => {
    const at = `${source}: users[${i}]`;
    if (!isObj(u)) return problems.push(`${at}: expected a mapping`);
    checkKeys(u, ['username', 'admin', 'tokens'], at, problems);
    const username = text(u, 'username', at, problems);
    if (username !== undefined && !USERNAME_RE.test(username)) problems.push(`${at}.username: expected letters, digits, _ . - only`);
    if (u.admin !== undefined && typeof u.admin !== 'boolean') problems.push(`${at}.admin: expected true or false`);
    const tokens: BootstrapPlan['users'][number]['tokens'] = [];
    list(u.tokens, `${at}.tokens`, problems).forEach((t, j) => {
      const tat = `${at}.tokens[${j}]`;
      if (!isObj(t)) return problems.push(`${tat}: expected a mapping`);
      checkKeys(t, ['name', 'token', 'scope', 'expires_at'], tat, problems);
      const token = text(t, 'token', tat, problems);
      if (token !== undefined && (token.length < 20 || token.length > 1024 || /\s/.test(token))) {
        problems.push(`${tat}.token: expected 20 to 1024 characters without spaces`);
      }
      const scope = text(t, 'scope', tat, problems, false) ?? 'api';
      if (scope !== 'api' && scope !== 'read_api') problems.push(`${tat}.scope: expected api or read_api`);
      const expiresAt = text(t, 'expires_at', tat, problems, false);
      if (expiresAt !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(expiresAt)) problems.push(`${tat}.expires_at: expected YYYY-MM-DD`);
      if (token) tokens.push({ name: text(t, 'name', tat, problems, false) ?? 'bootstrap', token, scope: scope as 'api', expiresAt });
    });
    if (username) plan.users.push({ username, admin: u.admin === true, tokens });
  });
  list(doc.projects, `${source}: projects`, problems).forEach((p, i) => {
    const at = `${source}: projects[${i}]`;
    if (!isObj(p)) return problems.push(`${at}: expected a mapping`);
    checkKeys(p, ['path', 'visibility', 'members'], at, problems);
    const path = text(p, 'path', at, problems);
    if (path !== undefined && !PROJECT_PATH_RE.test(path)) problems.push(`${at}.path: expected a full path like group/project`);
    const visibility = text(p, 'visibility', at, problems, false) ?? 'private';
    if (visibility !== 'private' && visibility !== 'public') problems.push(`${at}.visibility: expected private or public`);
    const members: Array<{ username: string; role: RoleName }> = [];
    const m = p.members ?? {};
    if (!isObj(m)) problems.push(`${at}.members: expected a mapping of user name to role`);
    else {
      for (const [username, role] of Object.entries(m)) {
        if (typeof role !== 'string' || !(role in ROLES)) problems.push(`${at}.members.${username}: expected one of ${Object.keys(ROLES).join(', ')}`);
        else members.push({ username, role: role as RoleName });
      }
    }
    if (path) plan.projects.push({ path, visibility: visibility as 'private', members });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, plan };
}

/** Applies a plan in one transaction; returns a one-line summary or the problems (e.g. an unknown member). */
export async function applyBootstrap(db: Db, plan: BootstrapPlan): Promise<{ ok: true; summary: string } | { ok: false; problems: string[] }> {
  const problems: string[] = [];
  let tokens = 0;
  let members = 0;
  await db
    .transaction(async (tx) => {
      for (const u of plan.users) {
        const user = await upsertUser(tx, u.username, u.admin);
        for (const t of u.tokens) {
          await addToken(tx, user.id, t.token, { name: t.name, scope: t.scope, expiresAt: t.expiresAt });
          tokens++;
        }
      }
      for (const p of plan.projects) {
        const project = await upsertProject(tx, p.path, p.visibility);
        for (const m of p.members) {
          const user = await findUser(tx, m.username);
          if (!user) problems.push(`project ${p.path}: member ${m.username} is not a user (add it under users)`);
          else {
            await setMember(tx, project.id, user.id, m.role);
            members++;
          }
        }
      }
      if (problems.length > 0) throw new BootstrapRollback();
    })
    .catch((err: unknown) => {
      if (!(err instanceof BootstrapRollback)) throw err;
    });
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, summary: `${plan.users.length} user(s), ${tokens} token(s), ${plan.projects.length} project(s), ${members} membership(s)` };
}

class BootstrapRollback extends Error {}
