// The console's own JSON routes, beside the API's query routes it mounts (api/query-routes.ts):
// GET /console/api/whoami (the signed-in user: the sign-in page checks a token with it),
// GET /console/api/projects (the projects whose errors the user may read, for the Errors page)
// and GET /console/api/rules (the loaded rules with their figures, from the engine that serves
// the console; none where no engine runs beside it, as in `rae forwarder`). Every route needs a
// personal access token, as the API's (401 otherwise). Consumes the database and the rules
// provider; produces JSON.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../api/index.js';
import { accessLevel, listProjects, ROLES, type Db, type User } from '../api/db/index.js';
import { sendError } from '../api/routes/common.js';
import type { ConsoleRule } from './shapes.js';

/** The user a request's token names, or undefined after answering the API's error. */
async function signedIn(db: Db, request: FastifyRequest, reply: FastifyReply): Promise<User | undefined> {
  const user = await authenticate(db, { method: request.method, headers: request.headers, query: (request.query ?? {}) as Record<string, unknown> });
  if ('code' in user) {
    sendError(reply, user);
    return undefined;
  }
  return user;
}

/** Registers the console's routes; `rules` is undefined where no engine runs beside the console. */
export function registerConsoleRoutes(app: FastifyInstance, opts: { db: Db; rules?: () => ConsoleRule[] }): void {
  const { db } = opts;
  app.get('/console/api/whoami', async (request, reply) => {
    const user = await signedIn(db, request, reply);
    return user ? reply.send({ username: user.username, admin: user.admin }) : reply;
  });

  app.get('/console/api/projects', async (request, reply) => {
    const user = await signedIn(db, request, reply);
    if (!user) return reply;
    const visible = [];
    for (const p of await listProjects(db)) {
      // the projects whose errors the API lets this user read: Reporter and above (admins: every project, as owner)
      const access = user.admin ? ROLES.owner : await accessLevel(db, p.id, user.id);
      if (access >= ROLES.reporter) visible.push({ id: p.id, path: p.path, access });
    }
    return reply.send({ projects: visible });
  });

  app.get('/console/api/rules', async (request, reply) => {
    const user = await signedIn(db, request, reply);
    if (!user) return reply;
    return reply.send(opts.rules ? { engine: true, rules: opts.rules() } : { engine: false, rules: [] });
  });
}
