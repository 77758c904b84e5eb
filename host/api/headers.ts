// Response headers every answer carries, as GitLab's: the security headers of lib/api/api.rb
// (`X-Frame-Options: SAMEORIGIN`, `X-Content-Type-Options: nosniff`) and, under /api/*, CORS as
// config/application.rb sets it up with rack-cors: any origin, no credentials, any header and
// method, the pagination headers exposed; a preflight (OPTIONS with Origin and
// Access-Control-Request-Method) is answered 200 with an empty body before any authentication.
// The Sentry ingestion routes keep their own CORS (routes/collector.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** rack-cors' methods: :any. */
const ALL_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
/** GitLab's `expose:` list (the pagination headers). */
const EXPOSED = 'Link, X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page';
/** rack-cors' default max_age. */
const PREFLIGHT_MAX_AGE = '7200';

/** The security headers, on every answer (also errors and the 404 route). */
export const SECURITY_HEADERS = { 'x-frame-options': 'SAMEORIGIN', 'x-content-type-options': 'nosniff' } as const;

function isRestPath(url: string): boolean {
  return url.startsWith('/api/');
}

/** True for a CORS preflight (rack-cors: OPTIONS with Origin and Access-Control-Request-Method). */
export function isPreflight(request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined;
}

/** Answers a preflight on /api/*: 200, empty body, the requested headers allowed. */
export function answerPreflight(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const asked = request.headers['access-control-request-headers'];
  reply.code(200).headers({
    'access-control-allow-origin': '*',
    'access-control-allow-methods': ALL_METHODS,
    'access-control-expose-headers': EXPOSED,
    'access-control-max-age': PREFLIGHT_MAX_AGE,
  });
  if (typeof asked === 'string' && asked !== '') reply.header('access-control-allow-headers', asked);
  return reply.send('');
}

/** Registers the hooks: the security headers everywhere, CORS on cross-origin /api/* answers. */
export function registerResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.headers(SECURITY_HEADERS);
    if (request.headers.origin !== undefined && isRestPath(request.url)) {
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-expose-headers', EXPOSED);
    }
    return payload;
  });
}
