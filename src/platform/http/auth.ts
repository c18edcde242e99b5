import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from '../../identities/caller.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every non-public route. */
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Routes that need no API key (documentation, health). */
    public?: boolean;
  }
}

export type Authenticator = (authorization: string | undefined, team: string | undefined) => Promise<Caller>;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Every route in the scope needs a valid API key unless its config says `public: true`. */
export function requireApiKey(app: FastifyInstance, authenticate: Authenticator): void {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public) return;
    request.caller = await authenticate(
      header(request, 'authorization'),
      header(request, 'x-team-uid') ?? header(request, 'x-warp-team-uid'),
    );
  });
}

/** The caller of an authenticated route (the hook guarantees it is set). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route used callerOf() but is not behind requireApiKey');
  return request.caller;
}
