import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../../identities/index.js';
import { ProblemResponses } from '../../platform/http/openapi.js';
import { ListAgentsQuery, ListAgentsResponse } from './schemas.js';
import type { SkillsService } from './service.js';

export function registerSkillRoutes(parent: FastifyInstance, skills: SkillsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/agent',
    {
      schema: {
        tags: ['Agents (skills)'],
        summary: 'List agents (skills)',
        description:
          "SKILL.md files found in the repositories of the team's environments, or in one repository with `repo`. " +
          'Repositories are fetched again at most every HANGAR_GIT_REFRESH_SECONDS unless `refresh=true`.',
        querystring: ListAgentsQuery,
        response: { 200: ListAgentsResponse, ...ProblemResponses },
      },
    },
    async (request) => {
      const { agents, warnings } = await skills.list(callerOf(request), request.query);
      for (const warning of warnings)
        request.log.warn({ warning }, 'agent list: a repository was skipped or served from an earlier revision');
      return { agents };
    },
  );
}
