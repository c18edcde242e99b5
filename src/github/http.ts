import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ProblemResponses } from '../platform/http/openapi.js';
import {
  AllowedLoginBody,
  AllowedLoginParams,
  GitHubLinks,
  InstallationParams,
  TeamParams,
  TokenSecretBody,
} from './schemas.js';
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
    '/admin/teams/:teamUid/github/installations/:installationId/allowed-logins/:login',
    {
      config,
      schema: {
        tags,
        summary: "Let a GitHub login start runs from the installation's repositories, as a member of the team",
        description:
          "Without it, only GitHub users with write access to the repository start runs (created as the installation's service identity).",
        params: AllowedLoginParams,
        body: AllowedLoginBody,
        response,
      },
    },
    async (request) =>
      github.allowLogin(
        request.params.teamUid,
        request.params.installationId,
        request.params.login,
        request.body.user_uid,
      ),
  );
  app.delete(
    '/admin/teams/:teamUid/github/installations/:installationId/allowed-logins/:login',
    {
      config,
      schema: {
        tags,
        summary: "Take a GitHub login off an installation's allow-list",
        params: AllowedLoginParams,
        response,
      },
    },
    async (request) =>
      github.disallowLogin(request.params.teamUid, request.params.installationId, request.params.login),
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
