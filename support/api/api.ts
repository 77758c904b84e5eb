// Starts the real API (startApi, fastify on 127.0.0.1 port 0) on a storage, and seeds the
// accounts the suites share: one user per role, an admin, an outsider, tokens in every state.
import { defaultConfig, type Config } from '../../host/config/config.js';
import { startApi, type RunningApi } from '../../host/api/index.js';
import { addToken, createProject, createUser, generateToken, setMember, type Db, type RoleName } from '../../host/api/db/index.js';
import { client, type Client } from './http.js';
import type { Location, Storage } from './storage.js';

/** A running test API. */
export interface TestApi extends RunningApi {
  call: Client;
  location: Location;
  config: Config;
  logs: string[];
}

/** Starts the API on `location` (a fresh database of `storage` when omitted). */
export async function startTestApi(storage: Storage, opts: { location?: Location; configure?: (c: Config) => void; ca?: Buffer } = {}): Promise<TestApi> {
  const location = opts.location ?? (await storage.fresh());
  const config = defaultConfig({});
  config.stateDir = location.stateDir;
  config.api.port = 0;
  opts.configure?.(config);
  const logs: string[] = [];
  const api = await startApi({ config, log: (m) => logs.push(m), databaseUrl: location.databaseUrl });
  return { ...api, call: client(api.url, opts.ca), location, config, logs };
}

/** Who calls: a role, an instance admin, a user with no membership, or tokens in special states. */
export type Who = RoleName | 'admin' | 'outsider' | 'expired' | 'revoked' | 'readonly' | 'none' | 'wrong';

/** The seeded world: a private project (members of every role), a public one, tokens by caller. */
export interface World {
  project: { id: number; path: string };
  publicProject: { id: number; path: string };
  otherProject: { id: number; path: string };
  tokens: Record<Exclude<Who, 'none' | 'wrong'>, string>;
  /** Headers to authenticate as `who` (PRIVATE-TOKEN). */
  auth(who: Who): Record<string, string>;
}

/** Seeds the world into `db`. Project paths have mixed case to test case-insensitive lookup. */
export async function seedWorld(db: Db): Promise<World> {
  const project = await createProject(db, 'Acme/Web-Shop');
  const publicProject = await createProject(db, 'acme/docs', 'public');
  const otherProject = await createProject(db, 'other/thing');
  const tokens = {} as World['tokens'];
  const roles: RoleName[] = ['owner', 'maintainer', 'developer', 'reporter', 'guest'];
  for (const role of roles) {
    const u = await createUser(db, `${role}-user`);
    await setMember(db, project.id, u.id, role);
    await setMember(db, publicProject.id, u.id, role);
    tokens[role] = generateToken();
    await addToken(db, u.id, tokens[role], { name: role, scope: 'api' });
  }
  const admin = await createUser(db, 'root-admin', true);
  tokens.admin = generateToken();
  await addToken(db, admin.id, tokens.admin, { name: 'admin', scope: 'api' });
  const outsider = await createUser(db, 'outsider');
  tokens.outsider = generateToken();
  await addToken(db, outsider.id, tokens.outsider, { name: 'outsider', scope: 'api' });
  // maintainer's other tokens: expired yesterday, revoked, read_api
  const m = (await db.query<{ id: number }>("SELECT id FROM users WHERE username = 'maintainer-user'"))[0]!.id;
  tokens.expired = generateToken();
  await addToken(db, m, tokens.expired, { name: 'old', scope: 'api', expiresAt: new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10) });
  tokens.revoked = generateToken();
  await addToken(db, m, tokens.revoked, { name: 'revoked', scope: 'api' });
  await db.query("UPDATE personal_access_tokens SET revoked = true WHERE name = 'revoked'");
  tokens.readonly = generateToken();
  await addToken(db, m, tokens.readonly, { name: 'ro', scope: 'read_api' });
  return {
    project,
    publicProject,
    otherProject,
    tokens,
    auth(who): Record<string, string> {
      if (who === 'none') return {};
      if (who === 'wrong') return { 'private-token': 'glpat-thisIsNotAValidToken0' };
      return { 'private-token': tokens[who] };
    },
  };
}
