import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { RunnerBody, RunnerItem, RunnerList, RunnerParams } from './schemas.js';
import type { RunnersService } from './service.js';

export function registerRunnerRoutes(parent: FastifyInstance, runners: RunnersService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Runners'];
  const item = { 200: RunnerItem, ...ProblemResponses };

  app.post(
    '/runners',
    {
      schema: {
        tags,
        summary: 'Define a runner for the team',
        description:
          "A sandbox kind and shape runs execute with: a run's config.runner_id, else its agent's default_runner_uid, else its environment's config.default_runner_uid, else the operator's default. The kind must be the one this server runs; limits at most the operator's maxima.",
        body: RunnerBody,
        response: { 201: RunnerItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await runners.create(callerOf(request), request.body)),
  );
  app.get(
    '/runners',
    {
      schema: {
        tags,
        summary: "List the team's runners, with the operator's default",
        response: { 200: RunnerList, ...ProblemResponses },
      },
    },
    async (request) => runners.list(callerOf(request)),
  );
  app.get(
    '/runners/:uid',
    { schema: { tags, summary: 'Get a runner', params: RunnerParams, response: item } },
    async (request) => runners.get(callerOf(request), request.params.uid),
  );
  app.put(
    '/runners/:uid',
    {
      schema: {
        tags,
        summary: 'Replace a runner',
        description: 'Runs already created keep the shape they recorded; later ones take the new one.',
        params: RunnerParams,
        body: RunnerBody,
        response: item,
      },
    },
    async (request) => runners.update(callerOf(request), request.params.uid, request.body),
  );
  app.delete(
    '/runners/:uid',
    {
      schema: {
        tags,
        summary: 'Delete a runner',
        description:
          'Agents and environments that name it as their default keep the name: a run that would take it is refused until they name another.',
        params: RunnerParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await runners.delete(callerOf(request), request.params.uid);
      return reply.code(204).send(null);
    },
  );
}
