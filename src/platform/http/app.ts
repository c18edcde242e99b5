import websocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { type RequestAuthenticator, requireApiKey } from './api-key.js';
import { answerClientError } from './client-errors.js';
import { registerDashboard } from './dashboard.js';
import { ERROR_DOCS, errorIndexPage, errorPage } from './error-docs.js';
import { ERROR_CODES, type ErrorCode, invalidRequest, notFound, renderProblem, toApiError } from './errors.js';
import { registerOpenApi } from './openapi.js';
import { observeRequests } from './request-metrics.js';
import { requestId, traceRequests } from './request-tracing.js';
import { addSecurityHeaders } from './security-headers.js';
import { validatorCompiler } from './validation.js';

/** The settings the HTTP application reads (a part of config.ts's Config). */
export interface AppConfig {
  publicUrl: string;
  bodyLimitBytes: number;
  trustProxy: boolean | string[];
}

export interface AppDeps {
  config: AppConfig;
  version: string;
  /** The identities slice's API key check (its principal and caller types are its own). */
  authenticate: RequestAuthenticator<{ isAdmin: boolean }, unknown>;
  /** Database reachable and every migration applied. */
  isReady: () => Promise<boolean>;
  /** false in engine-only processes: they answer health checks only. */
  serveApi: boolean;
  /** Registers the slices' routes under /api/v1 (behind the API key check). */
  registerApiRoutes: (api: FastifyInstance) => void | Promise<void>;
  /** Registers routes outside /api/v1 that do their own authentication (the webhook ingress). */
  registerRootRoutes?: (app: FastifyInstance) => void | Promise<void>;
  /** The process's logger (platform/logger.ts), shared with the background loops. */
  logger: FastifyBaseLogger;
}

/** Builds the HTTP application without listening, so tests and `serve` share it. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { publicUrl } = deps.config;
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: deps.config.bodyLimitBytes,
    // request.ip, by which failed authentications and webhook senders are counted, is the proxy's unless trusted.
    trustProxy: deps.config.trustProxy,
    // The caller's X-Request-Id or a new UUID; with tracing on, the request's trace id (request-tracing.ts).
    requestIdHeader: false,
    genReqId: requestId,
    // Errors Fastify raises before routing (a malformed %-escape in the path, an overlong path parameter); no
    // hooks run for them, so the request id header is set here.
    frameworkErrors: (error, request, reply) => {
      // An upgrade request's socket left the HTTP server when Node emitted 'upgrade', and the websocket plugin
      // closes it from a hook, which these requests never reach: close it once the answer is written, or it stays
      // open for good and holds up the server's shutdown.
      if (request.headers.upgrade !== undefined) reply.raw.once('finish', () => request.raw.socket.destroy());
      return renderProblem(request, reply.header('x-request-id', request.id), publicUrl, toApiError(error));
    },
    // Requests Node's HTTP parser refuses (an oversized head, malformed HTTP) get a problem+json answer too.
    clientErrorHandler: answerClientError(publicUrl),
  });
  app.setValidatorCompiler(validatorCompiler);
  observeRequests(app);
  traceRequests(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  addSecurityHeaders(app);
  app.setErrorHandler((error, request, reply) => {
    const problem = toApiError(error);
    // A database outage is the operator's to see once per request, not a defect to investigate: a warning.
    if (problem.status === 503) request.log.warn({ err: error }, 'request failed: the database is unavailable');
    else if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    return renderProblem(request, reply, publicUrl, problem);
  });
  app.setNotFoundHandler((request, reply) =>
    renderProblem(request, reply, publicUrl, notFound(`no route ${request.method} ${request.url.split('?')[0]}`)),
  );

  // At the root, before any other hook: every upgrade request is marked as one first, so a refused one (bad key,
  // unknown path) gets a plain HTTP answer and its socket closed, whichever hook or route refused it.
  await app.register(websocket, { options: { maxPayload: 16 * 1024 * 1024 } });
  refuseUpgradesOfPlainRoutes(app);
  await registerOpenApi(app, publicUrl, deps.version);

  // Probes poll these every few seconds: their request lines (info) are not logged, their failures (warn) still are.
  const probe = { schema: { hide: true }, logLevel: 'warn' } as const;
  app.get('/healthz', probe, async () => ({ status: 'ok' }));
  app.get('/readyz', probe, async (_request, reply) => {
    const ready = await deps.isReady().catch(() => false);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready' });
  });
  // Each problem's `type` links here: a page for a person (a browser asks for HTML), the same words as JSON else.
  const wantsHtml = (accept: string | undefined) => /\btext\/html\b/.test(accept ?? '');
  app.get('/errors', { schema: { hide: true } }, async (request, reply) =>
    wantsHtml(request.headers.accept)
      ? reply.type('text/html; charset=utf-8').send(errorIndexPage())
      : { error_codes: Object.keys(ERROR_CODES) },
  );
  app.get<{ Params: { code: string } }>('/errors/:code', { schema: { hide: true } }, async (request, reply) => {
    const code = request.params.code as ErrorCode;
    if (!Object.hasOwn(ERROR_CODES, code)) throw notFound(`unknown error code ${request.params.code}`);
    if (wantsHtml(request.headers.accept)) return reply.type('text/html; charset=utf-8').send(errorPage(code));
    const { status, meaning, remedy } = ERROR_DOCS[code];
    return { error_code: code, title: ERROR_CODES[code], status, meaning, remedy };
  });

  if (!deps.serveApi) return app;
  await deps.registerRootRoutes?.(app);
  await app.register(
    async (api) => {
      api.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
      requireApiKey(api, deps.authenticate);
      await deps.registerApiRoutes(api);
    },
    { prefix: '/api/v1' },
  );
  await registerDashboard(app, { publicUrl });
  return app;
}

/**
 * The websocket plugin answers an upgrade request to any GET route with 101 Switching Protocols and then closes the
 * new websocket at once: a client learns nothing. A route that serves no websocket refuses the upgrade in plain
 * HTTP instead, with a problem+json 400, before authentication (the plugin closes the socket once it is written).
 */
function refuseUpgradesOfPlainRoutes(app: FastifyInstance): void {
  const websocketRoutes = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (route.wsHandler || route.websocket) websocketRoutes.add(route.url);
  });
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url;
    // An unknown URL (no route) keeps its 404.
    if (request.ws && route !== undefined && !websocketRoutes.has(route))
      throw invalidRequest(
        `${request.method} ${route} takes no websocket upgrade; send the request without the Upgrade header`,
      );
  });
}
