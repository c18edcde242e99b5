import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import {
  AutomationFirings,
  AutomationIdParams,
  AutomationItem,
  AutomationList,
  CreateAutomationBody,
  ListAutomationsQuery,
  TestFilterBody,
  TestFilterResult,
  UpdateAutomationBody,
} from './schemas.js';
import type { AutomationsService } from './service.js';

export function registerAutomationRoutes(parent: FastifyInstance, automations: AutomationsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Automations'];
  const item = { 200: AutomationItem, ...ProblemResponses };

  app.get(
    '/factory/automations',
    {
      schema: {
        tags,
        summary: "List the team's automations",
        querystring: ListAutomationsQuery,
        response: { 200: AutomationList, ...ProblemResponses },
      },
    },
    async (request) => automations.list(callerOf(request), request.query.factory_uid),
  );
  app.post(
    '/factory/automations',
    {
      schema: {
        tags,
        summary: 'Create an automation (team admin)',
        body: CreateAutomationBody,
        response: { 201: AutomationItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await automations.create(callerOf(request), request.body)),
  );
  app.post(
    '/factory/automations/test-filter',
    {
      schema: {
        tags,
        summary: 'Would a filter (or a saved automation) start a run for a stored delivery?',
        description:
          'Reports the webhook check (does a trigger select the webhook) and the payload check (does the filter match the stored payload).',
        body: TestFilterBody,
        response: { 200: TestFilterResult, ...ProblemResponses },
      },
    },
    async (request) => automations.testFilter(callerOf(request), request.body),
  );
  app.get(
    '/factory/automations/:id',
    { schema: { tags, summary: 'Get an automation', params: AutomationIdParams, response: item } },
    async (request) => automations.get(callerOf(request), request.params.id),
  );
  app.get(
    '/factory/automations/:id/firings',
    {
      schema: {
        tags,
        summary: "An automation's history: the deliveries that fired it and the runs they started",
        params: AutomationIdParams,
        response: { 200: AutomationFirings, ...ProblemResponses },
      },
    },
    async (request) => automations.firings(callerOf(request), request.params.id),
  );
  app.put(
    '/factory/automations/:id',
    {
      schema: {
        tags,
        summary: 'Change an automation (team admin); omitted fields stay',
        params: AutomationIdParams,
        body: UpdateAutomationBody,
        response: item,
      },
    },
    async (request) => automations.update(callerOf(request), request.params.id, request.body),
  );
  app.delete(
    '/factory/automations/:id',
    {
      schema: {
        tags,
        summary: 'Delete an automation (team admin); runs it started are not touched',
        params: AutomationIdParams,
      },
    },
    async (request, reply) => {
      await automations.delete(callerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
