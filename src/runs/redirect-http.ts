import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../database.js';
import type { Authenticator } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { type LookupScope, RunRedirects } from './redirect.js';

/** The failed-authentication throttle (identities/auth-throttle.ts): an empty lookup costs what a wrong key does. */
export interface LookupThrottle {
  refuseIfBlocked(address: string): void;
  failed(address: string): Promise<void>;
}

const LookupId = (name: string) => Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 200 }) });

/** The shared-link lookups, served without an API key (see redirect.ts for what they answer and why). */
export function registerRedirectRoutes(
  parent: FastifyInstance,
  deps: { db: Kysely<DB>; authenticate: Authenticator; throttle: LookupThrottle },
): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const redirects = new RunRedirects(deps.db);

  /** With a key, only the caller's runs (another team's answer as unknown ones); without, any run. */
  const scopeOf = async (request: FastifyRequest): Promise<LookupScope> => {
    const authorization = request.headers.authorization;
    if (authorization === undefined) return 'any';
    const principal = await deps.authenticate.principal(authorization, request.ip);
    const team = request.headers['x-team-uid'] ?? request.headers['x-warp-team-uid'];
    const caller = deps.authenticate.team(principal, Array.isArray(team) ? team[0] : team);
    return { teamUid: caller.teamUid, principalUid: caller.principal.uid };
  };
  const answer = async <T extends object>(request: FastifyRequest, lookup: (scope: LookupScope) => Promise<T>) => {
    deps.throttle.refuseIfBlocked(request.ip);
    const found = await lookup(await scopeOf(request));
    if (Object.keys(found).length === 0) await deps.throttle.failed(request.ip);
    return found;
  };
  const description =
    "Needs no API key; with one, only the caller's runs are looked up. The answer is `{}` for an unknown ID, another team's (with a key) and one with nothing to redirect to alike, and each such answer counts as a failed authentication of the address (429 with Retry-After past the limit).";

  app.get(
    '/agent/conversations/:conversationId/redirect',
    {
      config: { public: true },
      schema: {
        tags: ['Conversations'],
        summary: 'The live session of a conversation, while its newest run executes',
        description,
        security: [{ apiKey: [] }, {}],
        params: LookupId('conversationId'),
        response: {
          200: Type.Object({
            session_id: Type.Optional(Type.String({ description: "The run's ID: its session link is /runs/<id>" })),
          }),
          ...ProblemResponses,
        },
      },
    },
    async (request) =>
      answer(request, (scope) => redirects.conversationToSession(scope, request.params.conversationId as string)),
  );
  app.get(
    '/agent/sessions/:sessionUuid/redirect',
    {
      config: { public: true },
      schema: {
        tags: ['Conversations'],
        summary: "The conversation of a session (a run's execution) once it no longer executes",
        description,
        security: [{ apiKey: [] }, {}],
        params: LookupId('sessionUuid'),
        response: { 200: Type.Object({ conversation_id: Type.Optional(Type.String()) }), ...ProblemResponses },
      },
    },
    async (request) =>
      answer(request, (scope) => redirects.sessionToConversation(scope, request.params.sessionUuid as string)),
  );
}
