// The API's routes that the web console's pages call (host/console/), for mounting on a server
// other than the API's own: the console's port of `rae run`, and `rae forwarder`'s. The alert
// store's query API (/api/v1/events/...) and the error-tracking list, detail, events and status
// routes (/api/v4/projects/:id/error_tracking/errors...), with the same authentication (personal
// access tokens), checks and answers as on the API's port. Consumes the open database; produces
// the routes on the given fastify instance.
import type { FastifyInstance } from 'fastify';
import { defaultApiConfig } from './config.js';
import type { Db } from './db/index.js';
import { apiLimitsOf } from './limits.js';
import { registerAlertRoutes } from './routes/alerts.js';
import type { RouteContext } from './routes/common.js';
import { registerErrorDetailRoutes } from './routes/error-detail.js';
import { registerErrorListRoutes } from './routes/error-list.js';

/** Registers the query and error-tracking routes on `app` over `db`. */
export function registerQueryRoutes(app: FastifyInstance, opts: { db: Db; log: (msg: string) => void }): void {
  const limits = apiLimitsOf(defaultApiConfig());
  if ('problem' in limits) throw new Error(`api defaults: ${limits.problem}`);
  // Pagination links are not followed by the console (it pages with page=N): they name localhost.
  const ctx: RouteContext = { db: opts.db, dsnBase: { scheme: 'http', host: 'localhost' }, limits, log: opts.log };
  registerAlertRoutes(app, ctx);
  registerErrorListRoutes(app, ctx);
  registerErrorDetailRoutes(app, ctx);
}
