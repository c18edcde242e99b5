import type { FastifyRequest } from 'fastify';
import { CALLER, PRINCIPAL, type RequestAuthenticator } from '../platform/http/api-key.js';
import type { Caller } from './caller.js';
import type { Principal } from './store.js';

/** Turns an API key into the principal, and a principal and team header into the caller of a team route. */
export type Authenticator = RequestAuthenticator<Principal, Caller>;

/** The caller of an authenticated team route (the API key check guarantees it is set). */
export function callerOf(request: FastifyRequest): Caller {
  const caller = request.getDecorator<Caller | null>(CALLER);
  if (!caller) throw new Error('route used callerOf() but is not a team route behind requireApiKey');
  return caller;
}

/** The principal of an authenticated route. */
export function principalOf(request: FastifyRequest): Principal {
  const principal = request.getDecorator<Principal | null>(PRINCIPAL);
  if (!principal) throw new Error('route used principalOf() but is not behind requireApiKey');
  return principal;
}
