// Authentication and authorization in GitLab's order (reference §1.2-1.4): the token (401, or the
// scope's 403), then the project (404, also when the caller may not see it), then the role (403).
// Consumes request headers, query and the `:id` parameter; produces the caller and the project,
// or the ApiError to answer.
import { accessLevel, findProjectById, findProjectByPath, findToken, ROLES, userById, type Project, type Queryable, type User } from './db/index.js';
import { apiError, type ApiError } from './errors.js';

/** A request that passed authentication and authorization. */
export interface Caller {
  user: User;
  project: Project;
  /** The caller's access level in the project (admins count as owners). */
  access: number;
}

/** What the guard needs from a request. */
export interface GuardInput {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  projectId: string;
}

const MAX_ID = 2_147_483_647;

function header(h: GuardInput['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

function param(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The token a request carries, in GitLab's order (AuthFinders#find_personal_access_token): the
 * private_token parameter, the PRIVATE-TOKEN header, then Authorization: Bearer, access_token.
 */
function tokenFrom(input: Pick<GuardInput, 'headers' | 'query'>): string | undefined {
  const priv = param(input.query, 'private_token') || header(input.headers, 'private-token');
  if (priv) return priv;
  const auth = header(input.headers, 'authorization');
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m?.[1] ?? param(input.query, 'access_token');
}

/** The user a request authenticates as, or the 401 (or read_api scope 403) to answer. */
export async function authenticate(q: Queryable, input: Pick<GuardInput, 'headers' | 'query' | 'method'>): Promise<User | ApiError> {
  const token = tokenFrom(input);
  if (!token || token.length > 1024) return apiError('UNAUTHORIZED');
  const row = await findToken(q, token);
  if (!row) return apiError('UNAUTHORIZED');
  if (row.revoked) return apiError('TOKEN_REVOKED');
  if (row.expired) return apiError('TOKEN_EXPIRED');
  // read_api allows only reads (API::API: allow_access_with_scope :read_api, if: GET/HEAD)
  if (row.scope === 'read_api' && input.method !== 'GET' && input.method !== 'HEAD') return apiError('INSUFFICIENT_SCOPE');
  return (await userById(q, row.user_id)) ?? apiError('UNAUTHORIZED');
}

/** GitLab's find_project: all digits is an id, a value with "/" is a full path (any case), else nothing. */
export async function resolveProject(q: Queryable, id: string): Promise<Project | undefined> {
  if (/^\d+$/.test(id)) {
    const n = Number(id);
    return n <= MAX_ID ? findProjectById(q, n) : undefined;
  }
  if (id.includes('/')) return findProjectByPath(q, id);
  return undefined;
}

/** Runs the three checks; `minAccess` is the least access level the endpoint allows. */
export async function guard(q: Queryable, input: GuardInput, minAccess: number): Promise<Caller | ApiError> {
  const user = await authenticate(q, input);
  if ('code' in user) return user;
  const project = await resolveProject(q, input.projectId);
  if (!project) return apiError('PROJECT_NOT_FOUND');
  const access = user.admin ? ROLES.owner : await accessLevel(q, project.id, user.id);
  // A private project is invisible to non-members: 404, not 403 (find_project! / read_project).
  if (access === 0 && project.visibility === 'private') return apiError('PROJECT_NOT_FOUND');
  if (access < minAccess) return apiError('FORBIDDEN');
  return { user, project, access };
}
