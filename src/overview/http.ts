import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { OverviewQuery, OverviewResponse } from './schemas.js';
import type { OverviewService } from './service.js';

export function registerOverviewRoutes(parent: FastifyInstance, overview: OverviewService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/overview',
    {
      schema: {
        tags: ['Overview'],
        summary: "The team's runs at a glance: per hour by state, the queue, wait and run times, failures, spend",
        description:
          'Aggregates over the runs of the caller’s team created in the window (hours in UTC). A Hangar extension.',
        querystring: OverviewQuery,
        response: { 200: OverviewResponse, ...ProblemResponses },
      },
    },
    async (request) => overview.get(callerOf(request), request.query),
  );
}
