// `rae admin`: users, tokens, projects and memberships of the error tracking API (docs/api.md).
// Works on the same database as `rae run`: PGlite in <state-dir>/api-db, or PostgreSQL when
// DATABASE_URL is set. Requested output (ids, the new token) goes to stdout; messages to stderr.
import { readFileSync } from 'node:fs';
import { defaultStateDir } from '../config/config.js';
import { applyBootstrap, parseBootstrap } from '../api/bootstrap.js';
import {
  addToken,
  createProject,
  createUser,
  findUser,
  generateToken,
  listMembers,
  listProjects,
  listTokens,
  listUsers,
  openApiDatabase,
  PROJECT_PATH_RE,
  removeMember,
  revokeToken,
  ROLES,
  setMember,
  USERNAME_RE,
  type Db,
  type RoleName,
} from '../api/db/index.js';
import { resolveProject } from '../api/auth.js';
import { log, parseCommandArgs, UsageError, type Command } from './command.js';

const HELP = `Usage: rae admin <object> <action> [arguments] [options]

Manages who may use the error tracking API (see docs/api.md). Works on PGlite in
<state-dir>/api-db (stop 'rae run' first: one process at a time), or on the PostgreSQL
server named by DATABASE_URL (any time).

Actions:
  user create NAME [--admin]             create a user (--admin: every project as owner); prints its id
  user list                              id, name, admin
  token create USER [--name TEXT] [--scope api|read_api] [--expires-at YYYY-MM-DD]
                                         create a personal access token and print it: it is
                                         shown this once and stored only as a SHA-256 digest
  token list                             id, user, name, scope, expiry, revoked (never the token)
  token revoke ID                        revoke a token
  project create PATH [--visibility private|public]
                                         create a project (PATH like group/project); prints its id
  project list                           id, path, visibility
  member add PROJECT USER ROLE           add a member or change its role; PROJECT is an id or a
                                         path; ROLE is guest, reporter, developer, maintainer, owner
  member remove PROJECT USER             remove a member
  member list PROJECT                    members and roles
  apply FILE                             apply a bootstrap file (YAML; the format is in docs/api.md)

Options:
  --state-dir DIR   state directory (default: $RAE_STATE_DIR, else /var/lib/runtime-audit-engine
                    for root, else ~/.local/state/runtime-audit-engine)
  -h, --help        show this help

Environment:
  DATABASE_URL      use this PostgreSQL server instead of PGlite

Example:
  rae admin user create alice && rae admin token create alice
  rae admin project create demo/web && rae admin member add demo/web alice maintainer`;

const OPTIONS = {
  'state-dir': { type: 'string' },
  admin: { type: 'boolean' },
  name: { type: 'string' },
  scope: { type: 'string' },
  'expires-at': { type: 'string' },
  visibility: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

/** A failure to report (exit 1), as opposed to bad usage (exit 2). */
class AdminError extends Error {}

const ROLE_NAMES = Object.keys(ROLES).join(', ');
const roleName = (level: number): string => Object.entries(ROLES).find(([, v]) => v === level)?.[0] ?? String(level);
const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

function args(pos: string[], n: number, usage: string): string[] {
  if (pos.length !== n) throw new UsageError(`expected: rae admin ${usage}`);
  return pos;
}

async function user(db: Db, name: string): Promise<{ id: number; username: string }> {
  const u = await findUser(db, name);
  if (!u) throw new AdminError(`no user '${name}'`);
  return u;
}

async function project(db: Db, ref: string): Promise<{ id: number; path: string }> {
  const p = await resolveProject(db, ref);
  if (!p) throw new AdminError(`no project '${ref}' (give its id or its full path)`);
  return p;
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

async function dispatch(db: Db, action: string, pos: string[], v: Values): Promise<void> {
  switch (action) {
    case 'user create': {
      const [name] = args(pos, 1, 'user create NAME');
      if (!USERNAME_RE.test(name!)) throw new AdminError(`user name '${name}': use letters, digits, _ . - only`);
      const u = await createUser(db, name!, v.admin === true).catch((err: unknown) => {
        throw isUniqueViolation(err) ? new AdminError(`user '${name}' already exists`) : err;
      });
      out(String(u.id));
      return log(`created user ${u.username} (id ${u.id}${u.admin ? ', admin' : ''})`);
    }
    case 'user list':
      args(pos, 0, 'user list');
      for (const u of await listUsers(db)) out(`${u.id}\t${u.username}\t${u.admin ? 'admin' : ''}`);
      return;
    case 'token create': {
      const [name] = args(pos, 1, 'token create USER');
      const scope = v.scope ?? 'api';
      if (scope !== 'api' && scope !== 'read_api') throw new UsageError(`--scope: expected api or read_api, got '${scope}'`);
      const expiresAt = v['expires-at'];
      if (expiresAt !== undefined && (!/^\d{4}-\d{2}-\d{2}$/.test(expiresAt) || Number.isNaN(Date.parse(expiresAt)))) {
        throw new UsageError(`--expires-at: expected YYYY-MM-DD, got '${expiresAt}'`);
      }
      const u = await user(db, name!);
      const token = generateToken();
      const id = await addToken(db, u.id, token, { name: v.name ?? 'admin', scope, expiresAt });
      out(token);
      return log(`created token ${id} for ${u.username} (scope ${scope}${expiresAt ? `, expires ${expiresAt}` : ''}); it is not shown again`);
    }
    case 'token list':
      args(pos, 0, 'token list');
      for (const t of await listTokens(db)) out(`${t.id}\t${t.username}\t${t.name}\t${t.scope}\t${t.expires_at ?? ''}\t${t.revoked ? 'revoked' : ''}`);
      return;
    case 'token revoke': {
      const [id] = args(pos, 1, 'token revoke ID');
      if (!/^\d{1,9}$/.test(id!) || !(await revokeToken(db, Number(id)))) throw new AdminError(`no token with id '${id}'`);
      return log(`revoked token ${id}`);
    }
    case 'project create': {
      const [path] = args(pos, 1, 'project create PATH');
      const visibility = v.visibility ?? 'private';
      if (visibility !== 'private' && visibility !== 'public') throw new UsageError(`--visibility: expected private or public, got '${visibility}'`);
      if (!PROJECT_PATH_RE.test(path!)) throw new AdminError(`project path '${path}': expected group/project (letters, digits, _ . -)`);
      const p = await createProject(db, path!, visibility).catch((err: unknown) => {
        throw isUniqueViolation(err) ? new AdminError(`project '${path}' already exists`) : err;
      });
      out(String(p.id));
      return log(`created project ${p.path} (id ${p.id}, ${p.visibility})`);
    }
    case 'project list':
      args(pos, 0, 'project list');
      for (const p of await listProjects(db)) out(`${p.id}\t${p.path}\t${p.visibility}`);
      return;
    case 'member add': {
      const [ref, name, role] = args(pos, 3, 'member add PROJECT USER ROLE');
      if (!(role! in ROLES)) throw new UsageError(`role '${role}': expected one of ${ROLE_NAMES}`);
      const p = await project(db, ref!);
      const u = await user(db, name!);
      await setMember(db, p.id, u.id, role as RoleName);
      return log(`${u.username} is ${role} of ${p.path}`);
    }
    case 'member remove': {
      const [ref, name] = args(pos, 2, 'member remove PROJECT USER');
      const p = await project(db, ref!);
      const u = await user(db, name!);
      if (!(await removeMember(db, p.id, u.id))) throw new AdminError(`${u.username} is not a member of ${p.path}`);
      return log(`removed ${u.username} from ${p.path}`);
    }
    case 'member list': {
      const [ref] = args(pos, 1, 'member list PROJECT');
      const p = await project(db, ref!);
      for (const m of await listMembers(db, p.id)) out(`${m.username}\t${roleName(m.access_level)}`);
      return;
    }
  }
  throw new UsageError(`unknown action '${action}'`);
}

async function apply(db: Db, file: string): Promise<void> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AdminError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const parsed = parseBootstrap(file, text);
  if (!parsed.ok) throw new AdminError(parsed.problems.join('\n'));
  const result = await applyBootstrap(db, parsed.plan);
  if (!result.ok) throw new AdminError(result.problems.join('\n'));
  log(`applied ${file}: ${result.summary}`);
}

const ACTIONS = new Set(['user create', 'user list', 'token create', 'token list', 'token revoke', 'project create', 'project list', 'member add', 'member remove', 'member list']);

/** The `rae admin` command. */
export const adminCommand: Command = {
  name: 'admin',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS, true);
    const [object, verb, ...rest] = positionals;
    const isApply = object === 'apply';
    const action = `${object ?? ''} ${verb ?? ''}`.trim();
    if (!isApply && !ACTIONS.has(action)) throw new UsageError(object ? `unknown action '${action}'` : 'missing action');
    if (isApply && (verb === undefined || rest.length > 0)) throw new UsageError('expected: rae admin apply FILE');
    const stateDir = values['state-dir'] ?? defaultStateDir();
    let db: Db;
    try {
      ({ db } = await openApiDatabase({ stateDir, databaseUrl: process.env.DATABASE_URL ?? '' }));
    } catch (err) {
      log(`rae admin: cannot open the API database: ${(err as Error).message}`);
      return 1;
    }
    try {
      if (isApply) await apply(db, verb!);
      else await dispatch(db, action, rest, values);
      return 0;
    } catch (err) {
      if (err instanceof AdminError) {
        log(`rae admin: ${err.message}`);
        return 1;
      }
      throw err;
    } finally {
      await db.close();
    }
  },
};
