import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import type { FactoryDispatch } from './dispatch.js';
import {
  DispatchBody,
  DispatchResponse,
  FactorySearchQuery,
  FactoryUidParams,
  PublicFactory,
  PublicFactoryList,
} from './public-schemas.js';

/** GET /factory, GET /factory/{uid}, POST /factory/{uid}/runs: the public factory API, for any member. */
export function registerPublicFactoryRoutes(parent: FastifyInstance, dispatch: FactoryDispatch): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Factories'];
  app.get(
    '/factory',
    {
      schema: {
        tags,
        summary: "Find the team's factories",
        querystring: FactorySearchQuery,
        response: { 200: PublicFactoryList, ...ProblemResponses },
      },
    },
    async (request) => dispatch.list(callerOf(request), request.query.search),
  );
  app.get(
    '/factory/:uid',
    {
      schema: {
        tags,
        summary: 'A factory',
        description:
          'Factory UIDs are 22 letters and digits, so that no static route under /factory/ (webhooks, automations, ...) can hide one; any other segment is a 400.',
        params: FactoryUidParams,
        response: { 200: PublicFactory, ...ProblemResponses },
      },
    },
    async (request) => dispatch.get(callerOf(request), request.params.uid),
  );
  app.post(
    '/factory/:uid/runs',
    {
      schema: {
        tags,
        summary: 'Send work to a factory: a run for its foreman agent',
        description:
          "The prompt goes to the factory's agent named `foreman` unchanged (without one, the run is the team's, as POST /agent/runs makes it). The run's metadata gets `ticket_source` and `ticket_id` from `ticket_ref` (an `adhoc:` reference when it is omitted) and `ticket_url`.",
        params: FactoryUidParams,
        body: DispatchBody,
        response: { 200: DispatchResponse, ...ProblemResponses },
      },
    },
    async (request) => dispatch.dispatch(callerOf(request), request.params.uid, request.body),
  );
}
