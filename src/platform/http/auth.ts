import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from '../../identities/caller.js';
import type { Principal } from '../../identities/store.js';
import { notAuthorized } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling; set by the auth hook on every non-public route. */
    principal: Principal | null;
    /** Who is calling and for which team; set on every team route (all but public and admin routes). */
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Routes that need no API key (documentation, health). */
    public?: boolean;
    /** Instance administration: needs an administrator's key, acts for no particular team. */
    adminOnly?: boolean;
  }
}

export interface Authenticator {
  /** `client`: the caller's address (request.ip, which follows HANGAR_TRUST_PROXY); failures are throttled by it. */
  principal(authorization: string | undefined, client: string): Promise<Principal>;
  team(principal: Principal, requestedTeam: string | undefined): Caller;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Every route in the scope needs a valid API key unless its config says `public: true`. */
export function requireApiKey(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config.public) return;
    const principal = await authenticator.principal(header(request, 'authorization'), request.ip);
    request.principal = principal;
    if (config.adminOnly) {
      if (!principal.isAdmin) throw notAuthorized('this needs an administrator API key');
      return;
    }
    request.caller = authenticator.team(principal, header(request, 'x-team-uid') ?? header(request, 'x-warp-team-uid'));
  });
}

/** The caller of an authenticated team route (the hook guarantees it is set). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route used callerOf() but is not a team route behind requireApiKey');
  return request.caller;
}

/** The principal of an authenticated route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route used principalOf() but is not behind requireApiKey');
  return request.principal;
}
