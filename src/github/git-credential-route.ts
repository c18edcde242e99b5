import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { RunGitHubAccess } from './run-access.js';

/** The git credential protocol's fields, as the helper in the sandbox sends them (credential.useHttpPath on). */
const GitCredentialBody = Type.Object(
  {
    protocol: Type.String({ minLength: 1, maxLength: 32 }),
    host: Type.String({ minLength: 1, maxLength: 512 }),
    path: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: true },
);

function bearer(request: FastifyRequest): string | undefined {
  const value = request.headers.authorization;
  return value?.startsWith('Bearer ') ? value.slice('Bearer '.length).trim() : undefined;
}

/**
 * Harness-support: the credential a running execution's git asks for (its helper, from inside the sandbox, with
 * the execution's task token), for a repository of the run that the team's personal access token covers. See
 * RunGitHubAccess.harnessCredential for who is answered.
 */
export function registerGitCredentialRoute(
  parent: FastifyInstance,
  deps: { access: RunGitHubAccess; verifyTaskToken(token: string): { runId: string; executionId: number } | null },
): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/harness-support/git-credential',
    { schema: { hide: true, body: GitCredentialBody }, config: { public: true } },
    async (request, reply) => {
      const token = bearer(request);
      const credential = await deps.access.harnessCredential(
        token === undefined ? null : deps.verifyTaskToken(token),
        request.body,
      );
      // A credential: never kept by a cache between the sandbox and this server.
      reply.header('cache-control', 'no-store');
      return credential;
    },
  );
}
