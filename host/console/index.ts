// Facade of the web console (docs/console.md): the pages (built from host/console/web/ by Vite at
// set-up), the API's query and error-tracking routes they call, and the console's own routes,
// registered on a fastify instance (registerConsole: `rae run` and `rae forwarder` each mount it)
// or on a server of its own (startConsole: its own port, loopback by default). Sign-in is a
// personal access token of the API's users (`rae admin`), or the one a first start creates and
// its caller prints once (firstStartToken). Consumes the open database, a rules provider and a
// log; produces the routes, or a listening server.
import Fastify, { type FastifyInstance } from 'fastify';
import { databaseUnreachableAnswer, registerQueryRoutes, storageGoneAnswer } from '../api/index.js';
import type { Db } from '../api/db/index.js';
import { registerAssets } from './assets.js';
import { registerConsoleRoutes } from './routes.js';
import type { ConsoleRule } from './shapes.js';

export { firstStartToken } from './first-token.js';
export type { ConsoleRule } from './shapes.js';

/** What the console needs: the database of the alert store and the API, and the rules of the engine beside it, if any. */
interface ConsoleOptions {
  db: Db;
  /** The loaded rules with their figures; undefined where no engine runs (the Rules page says so). */
  rules?: () => ConsoleRule[];
  log: (msg: string) => void;
  /** Where the built pages are; default build/console/ of the repository (assets.ts). */
  assetsDir?: string;
}

/** Registers the console (pages, its routes, the API routes it calls) in its own encapsulated scope of `app`: its hooks and headers stay inside. */
export async function registerConsole(app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  await app.register(async (scope) => {
    // a failure is logged and answered without its details (a database error names tables);
    // PostgreSQL out of reach is the API's 503 with Retry-After
    const unreachable = databaseUnreachableAnswer(opts.db, opts.log, 'console');
    scope.setErrorHandler((err: Error & { statusCode?: number }, request, reply) => {
      const down = unreachable(err, reply);
      if (down) return down;
      const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 500) opts.log(`console: ${request.method} ${request.url.split('?', 1)[0]}: ${err.message}`);
      return reply.code(status).send({ message: status === 500 ? '500 Internal Server Error' : err.message });
    });
    registerAssets(scope, opts.assetsDir);
    // the JSON routes in a scope of their own: while the database is gone they answer the API's
    // 503 (the pages still load and show it), not a 500 of each failed query
    await scope.register(async (json) => {
      const storageGone = storageGoneAnswer(opts.db, opts.log, 'console');
      json.addHook('onRequest', async (_request, reply) => storageGone(reply));
      registerConsoleRoutes(json, opts);
      registerQueryRoutes(json, opts);
    });
  });
}

/** A listening console. */
interface RunningConsole {
  /** e.g. http://127.0.0.1:2802/ (the real port when configured as 0). */
  url: string;
  close(): Promise<void>;
}

/** Starts the console on a server of its own at address:port; rejects with a message naming the address when it cannot listen. */
export async function startConsole(opts: ConsoleOptions & { address: string; port: number }): Promise<RunningConsole> {
  const app = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
  await registerConsole(app, opts);
  try {
    await app.listen({ host: opts.address, port: opts.port });
  } catch (err) {
    await app.close();
    throw new Error(`cannot listen on ${opts.address}:${opts.port}: ${(err as Error).message}`);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const host = opts.address.includes(':') ? `[${opts.address}]` : opts.address;
  return { url: `http://${host}:${port}/`, close: () => app.close() };
}
