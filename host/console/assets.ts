// The console's pages as static files: Vite's output of host/console/web/ (scripts/build-console.mjs,
// run by `npm run build` and scripts/setup.sh, never committed) in <root>/build/console/, which
// scripts/build.mjs copies to dist/build/console/ (the same path from dist/host/console/). `/` is
// the page; /assets/* its script, style and images (content-hashed names: cached for good).
// Without a build, `/` answers 503 saying how to make one. Every answer carries a Content
// Security Policy that allows only this origin: no CDN, no inline script, no other host.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where the built pages are (from host/console/ or dist/host/console/). */
const ASSETS_DIR = fileURLToPath(new URL('../../build/console/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

/** Headers of every console answer: this origin only, never framed, no referrer (a token may sit in a URL someone pastes). */
const CONSOLE_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const;

async function sendFile(reply: FastifyReply, file: string, cache: string): Promise<FastifyReply> {
  const type = TYPES[extname(file)];
  if (!type || !existsSync(file)) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
  return reply
    .code(200)
    .type(type)
    .header('cache-control', cache)
    .send(await readFile(file));
}

/** Registers `/` and `/assets/*` on `app`, served from `dir` (default ASSETS_DIR). */
export function registerAssets(app: FastifyInstance, dir: string = ASSETS_DIR): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(CONSOLE_HEADERS);
    return payload;
  });
  app.get('/', async (_request, reply) => {
    const index = join(dir, 'index.html');
    if (!existsSync(index)) return reply.code(503).type('text/plain; charset=utf-8').send(`The console's pages are not built (no ${index}): run npm run build, or scripts/setup.sh.\n`);
    return sendFile(reply, index, 'no-cache');
  });
  app.get('/assets/*', async (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    // Vite's names only: no folder, no dot-dot, no hidden file
    if (!/^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(name)) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    return sendFile(reply, join(dir, 'assets', name), 'public, max-age=31536000, immutable');
  });
}
