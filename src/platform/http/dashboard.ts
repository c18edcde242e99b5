import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build` puts the web dashboard (`vite build` of web/): dist/web, from src/ and dist/ alike. */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

/**
 * Paths that belong to the server. The dashboard's client-side routes never start with them, so an unknown path
 * under them keeps its problem+json 404 instead of getting the dashboard's page.
 */
const SERVER_PATHS = ['/api', '/webhooks', '/healthz', '/readyz', '/docs', '/errors', '/assets'];

const isServerPath = (pathname: string) =>
  SERVER_PATHS.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));

/** A browser navigating asks for HTML; API clients (curl, fetch, the SDK) do not. */
const wantsHtml = (request: FastifyRequest) => /\btext\/html\b/.test(request.headers.accept ?? '');

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hangar</title></head>
<body><h1>Hangar</h1><p>The web dashboard is not built. Run <code>npm run build</code> (or <code>npm ci</code>), then restart
Hangar. The API is at <code>/api/v1</code> and its reference at <a href="/docs">/docs</a>.</p></body></html>
`;

function pageHeaders(reply: FastifyReply, connectOrigins: string): FastifyReply {
  return reply
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header(
      'content-security-policy',
      `default-src 'self'; connect-src 'self' ${connectOrigins}; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'`,
    );
}

/**
 * Serves the web dashboard at `/`: its built files, and its page for any other path a browser navigates to (the
 * dashboard routes on the client). Without a build, such paths answer a page saying how to build it.
 */
export async function registerDashboard(
  app: FastifyInstance,
  options: { publicUrl: string; directory?: string },
): Promise<void> {
  const directory = options.directory ?? DASHBOARD_DIR;
  const built = fs.existsSync(path.join(directory, 'index.html'));
  // Download links are made with HANGAR_PUBLIC_URL, which may not be the address the browser uses.
  const connectOrigins = new URL(options.publicUrl).origin;
  if (built) {
    await app.register(fastifyStatic, {
      root: directory,
      // One route per file found now (a rebuild needs a restart); every other path falls to the hook below.
      wildcard: false,
      index: false,
      schemaHide: true,
      setHeaders: (reply, file) => {
        // Vite names every asset by a hash of its content.
        const hashed = file.startsWith(path.join(directory, 'assets') + path.sep);
        reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
        // The page itself, fetched by its file name, gets the page's policy.
        if (file.endsWith('.html')) pageHeaders(reply, connectOrigins).header('cache-control', 'no-cache');
      },
    });
  }
  // Not a route: a route matching every path would also take the paths that are refused before routing (a
  // path parameter over the length limit is a 414), so the dashboard's page is given where a 404 would be.
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404 || (request.method !== 'GET' && request.method !== 'HEAD')) return;
    const pathname = request.url.split('?')[0]!;
    // `/` is the dashboard whatever the client accepts; elsewhere only a browser's navigation gets it.
    if (isServerPath(pathname) || (pathname !== '/' && !wantsHtml(request))) return;
    if (!built)
      return pageHeaders(reply, connectOrigins).code(404).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
    return pageHeaders(reply, connectOrigins).sendFile('index.html', directory);
  });
}
