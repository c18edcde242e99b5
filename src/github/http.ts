import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ProblemResponses } from '../platform/http/openapi.js';
import { GitHubLinks, InstallationParams, TeamParams, TokenSecretBody } from './schemas.js';
import type { GitHubService } from './service.js';

/** A team's GitHub links, set by instance administrators (they decide which team acts for which organization). */
export function registerGitHubRoutes(parent: FastifyInstance, github: GitHubService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['GitHub'];
  const config = { adminOnly: true };
  const response = { 200: GitHubLinks, ...ProblemResponses };
  app.get(
    '/admin/teams/:teamUid/github',
    { config, schema: { tags, summary: "A team's GitHub links", params: TeamParams, response } },
    async (request) => github.links(request.params.teamUid),
  );
  app.put(
    '/admin/teams/:teamUid/github/installations/:installationId',
    {
      config,
      schema: { tags, summary: 'Link a GitHub App installation to a team', params: InstallationParams, response },
    },
    async (request) => github.linkInstallation(request.params.teamUid, request.params.installationId),
  );
  app.delete(
    '/admin/teams/:teamUid/github/installations/:installationId',
    { config, schema: { tags, summary: 'Unlink an installation', params: InstallationParams, response } },
    async (request) => github.unlinkInstallation(request.params.teamUid, request.params.installationId),
  );
  app.put(
    '/admin/teams/:teamUid/github/token-secret',
    {
      config,
      schema: {
        tags,
        summary: "Use a team secret's personal access token for repositories no installation covers",
        params: TeamParams,
        body: TokenSecretBody,
        response,
      },
    },
    async (request) => github.setTokenSecret(request.params.teamUid, request.body.secret_name),
  );
  app.delete(
    '/admin/teams/:teamUid/github/token-secret',
    { config, schema: { tags, summary: 'Stop using a personal access token', params: TeamParams, response } },
    async (request) => github.clearTokenSecret(request.params.teamUid),
  );
}
