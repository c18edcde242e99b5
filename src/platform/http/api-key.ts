import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notAuthorized } from './errors.js';

/**
 * The API key check every /api/v1 route goes through. Who a principal and a caller are is the identities slice's
 * business (identities/request-auth.ts types them); here they are only stored on the request.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes that need no API key (documentation, health). */
    public?: boolean;
    /** Instance administration: needs an administrator's key, acts for no particular team. */
    adminOnly?: boolean;
  }
}

export interface RequestAuthenticator<Principal extends { isAdmin: boolean }, Caller> {
  /** `client`: the caller's address (request.ip, which follows HANGAR_TRUST_PROXY); failures are throttled by it. */
  principal(authorization: string | undefined, client: string): Promise<Principal>;
  team(principal: Principal, requestedTeam: string | undefined): Caller;
}

/** The request decorations the check fills in: the principal on every non-public route, the caller on team routes. */
export const PRINCIPAL = 'principal';
export const CALLER = 'caller';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Every route in the scope needs a valid API key unless its config says `public: true`. */
export function requireApiKey<Principal extends { isAdmin: boolean }, Caller>(
  app: FastifyInstance,
  authenticator: RequestAuthenticator<Principal, Caller>,
): void {
  app.decorateRequest(PRINCIPAL, null);
  app.decorateRequest(CALLER, null);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config.public) return;
    const principal = await authenticator.principal(header(request, 'authorization'), request.ip);
    request.setDecorator(PRINCIPAL, principal);
    if (config.adminOnly) {
      if (!principal.isAdmin) throw notAuthorized('this needs an administrator API key');
      return;
    }
    request.setDecorator(
      CALLER,
      authenticator.team(principal, header(request, 'x-team-uid') ?? header(request, 'x-warp-team-uid')),
    );
  });
}
