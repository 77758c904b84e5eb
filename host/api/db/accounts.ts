// Queries on accounts: users, personal access tokens (stored as SHA-256 digests), projects and
// memberships. Used by authentication, `rae admin` and the bootstrap file.
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from './open.js';

/** GitLab's access levels by role name. */
export const ROLES = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export type RoleName = keyof typeof ROLES;

/** Valid user names (letters, digits, `_ . -`). */
export const USERNAME_RE = /^[A-Za-z0-9_.-]{1,255}$/;
/** Valid project full paths: at least a namespace and a name (same rule as the projects table). */
export const PROJECT_PATH_RE = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/;

/** A user row. */
export interface User {
  id: number;
  username: string;
  admin: boolean;
}

/** A project row. */
export interface Project {
  id: number;
  path: string;
  visibility: 'private' | 'public';
}

/** A token row found by its digest, with its state computed by the database clock. */
export interface TokenRow {
  id: number;
  user_id: number;
  scope: 'api' | 'read_api';
  revoked: boolean;
  expired: boolean;
}

/** The digest stored for a token; the token itself is never stored. */
function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new personal access token: `glpat-` and 20 URL-safe characters, as GitLab's. */
export function generateToken(): string {
  return `glpat-${randomBytes(15).toString('base64url')}`;
}

/** Creates a user; returns it. */
export async function createUser(q: Queryable, username: string, admin = false): Promise<User> {
  const rows = await q.query<User>('INSERT INTO users (username, admin) VALUES ($1, $2) RETURNING id, username, admin', [username, admin]);
  return rows[0]!;
}

/** Creates or updates a user by name (case-insensitive); returns it. */
export async function upsertUser(q: Queryable, username: string, admin: boolean): Promise<User> {
  const found = await findUser(q, username);
  if (!found) return createUser(q, username, admin);
  const rows = await q.query<User>('UPDATE users SET admin = $2 WHERE id = $1 RETURNING id, username, admin', [found.id, admin]);
  return rows[0]!;
}

/** A user by name (case-insensitive), or undefined. */
export async function findUser(q: Queryable, username: string): Promise<User | undefined> {
  const rows = await q.query<User>('SELECT id, username, admin FROM users WHERE lower(username) = lower($1)', [username]);
  return rows[0];
}

/** All users by id. */
export async function listUsers(q: Queryable): Promise<User[]> {
  return q.query<User>('SELECT id, username, admin FROM users ORDER BY id');
}

/** Stores the digest of `token` for a user; returns the token id. */
export async function addToken(q: Queryable, userId: number, token: string, opts: { name: string; scope: 'api' | 'read_api'; expiresAt?: string }): Promise<number> {
  const rows = await q.query<{ id: number }>('INSERT INTO personal_access_tokens (user_id, name, token_digest, scope, expires_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (token_digest) DO UPDATE SET name = EXCLUDED.name RETURNING id', [
    userId,
    opts.name,
    tokenDigest(token),
    opts.scope,
    opts.expiresAt ?? null,
  ]);
  return rows[0]!.id;
}

/** The token with this value, or undefined. */
export async function findToken(q: Queryable, token: string): Promise<TokenRow | undefined> {
  const rows = await q.query<TokenRow>('SELECT id, user_id, scope, revoked, (expires_at IS NOT NULL AND expires_at <= current_date) AS expired FROM personal_access_tokens WHERE token_digest = $1', [tokenDigest(token)]);
  return rows[0];
}

/** Revokes a token by id; false when there is none. */
export async function revokeToken(q: Queryable, tokenId: number): Promise<boolean> {
  const rows = await q.query('UPDATE personal_access_tokens SET revoked = true WHERE id = $1 RETURNING id', [tokenId]);
  return rows.length > 0;
}

/** Tokens (never their values) with their owners. */
export async function listTokens(q: Queryable): Promise<Array<{ id: number; username: string; name: string; scope: string; expires_at: string | null; revoked: boolean }>> {
  return q.query("SELECT t.id, u.username, t.name, t.scope, to_char(t.expires_at, 'YYYY-MM-DD') AS expires_at, t.revoked FROM personal_access_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.id");
}

/** A user by id, or undefined. */
export async function userById(q: Queryable, id: number): Promise<User | undefined> {
  const rows = await q.query<User>('SELECT id, username, admin FROM users WHERE id = $1', [id]);
  return rows[0];
}

/** Creates a project; returns it. */
export async function createProject(q: Queryable, path: string, visibility: Project['visibility'] = 'private'): Promise<Project> {
  const rows = await q.query<Project>('INSERT INTO projects (path, visibility) VALUES ($1, $2) RETURNING id, path, visibility', [path, visibility]);
  return rows[0]!;
}

/** Creates or updates a project by path (case-insensitive); returns it. */
export async function upsertProject(q: Queryable, path: string, visibility: Project['visibility']): Promise<Project> {
  const found = await findProjectByPath(q, path);
  if (!found) return createProject(q, path, visibility);
  const rows = await q.query<Project>('UPDATE projects SET visibility = $2 WHERE id = $1 RETURNING id, path, visibility', [found.id, visibility]);
  return rows[0]!;
}

/** A project by full path, case-insensitive (GitLab's routes lookup), or undefined. */
export async function findProjectByPath(q: Queryable, path: string): Promise<Project | undefined> {
  const rows = await q.query<Project>('SELECT id, path, visibility FROM projects WHERE lower(path) = lower($1)', [path]);
  return rows[0];
}

/** A project by id, or undefined. */
export async function findProjectById(q: Queryable, id: number): Promise<Project | undefined> {
  const rows = await q.query<Project>('SELECT id, path, visibility FROM projects WHERE id = $1', [id]);
  return rows[0];
}

/** All projects by id. */
export async function listProjects(q: Queryable): Promise<Project[]> {
  return q.query<Project>('SELECT id, path, visibility FROM projects ORDER BY id');
}

/** Sets a member's role (adds the member or changes the role). */
export async function setMember(q: Queryable, projectId: number, userId: number, role: RoleName): Promise<void> {
  await q.query('INSERT INTO project_members (project_id, user_id, access_level) VALUES ($1, $2, $3) ON CONFLICT (project_id, user_id) DO UPDATE SET access_level = EXCLUDED.access_level', [projectId, userId, ROLES[role]]);
}

/** Removes a member; false when the user was not one. */
export async function removeMember(q: Queryable, projectId: number, userId: number): Promise<boolean> {
  const rows = await q.query('DELETE FROM project_members WHERE project_id = $1 AND user_id = $2 RETURNING user_id', [projectId, userId]);
  return rows.length > 0;
}

/** A user's access level in a project (0 when not a member). */
export async function accessLevel(q: Queryable, projectId: number, userId: number): Promise<number> {
  const rows = await q.query<{ access_level: number }>('SELECT access_level FROM project_members WHERE project_id = $1 AND user_id = $2', [projectId, userId]);
  return rows[0]?.access_level ?? 0;
}

/** Members of a project with role names. */
export async function listMembers(q: Queryable, projectId: number): Promise<Array<{ username: string; access_level: number }>> {
  return q.query('SELECT u.username, m.access_level FROM project_members m JOIN users u ON u.id = m.user_id WHERE m.project_id = $1 ORDER BY u.id', [projectId]);
}
