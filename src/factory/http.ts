import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import type { FactoryDefinitions } from './apply.js';
import { ApplyResponse, CreateFactoryBody, DefinitionFiles, FactoryItem, FactoryList } from './schemas.js';
import type { FactoriesService } from './service.js';

export function registerFactoryRoutes(parent: FastifyInstance, factories: FactoriesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Factories'];
  app.get(
    '/factory/factories',
    {
      schema: {
        tags,
        summary: "List the team's factories (the default one is made on first use)",
        response: { 200: FactoryList, ...ProblemResponses },
      },
    },
    async (request) => factories.list(callerOf(request)),
  );
  app.post(
    '/factory/factories',
    {
      schema: {
        tags,
        summary: 'Create a factory (team admin)',
        body: CreateFactoryBody,
        response: { 201: FactoryItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await factories.create(callerOf(request), request.body.name)),
  );
}

export function registerDefinitionRoutes(parent: FastifyInstance, definitions: FactoryDefinitions): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Factories'];
  const schema = (summary: string, description: string) => ({
    tags,
    summary,
    description,
    body: DefinitionFiles,
    response: { 200: ApplyResponse, ...ProblemResponses },
  });
  app.post(
    '/factory/definitions/plan',
    {
      schema: schema(
        'What applying a definition directory would change (team admin)',
        'Nothing is changed. A 400 lists every problem with its file and line in `errors`.',
      ),
    },
    async (request) => definitions.plan(callerOf(request), request.body.files),
  );
  app.post(
    '/factory/definitions/apply',
    {
      schema: schema(
        'Apply a definition directory (team admin): all of it or nothing',
        "Creates, updates and deletes the factory's webhooks, automations, agents and skills to match the files. UIDs stay across applies; a renamed file is a delete plus a create. A 400 lists every problem with its file and line in `errors`.",
      ),
    },
    async (request) => definitions.apply(callerOf(request), request.body.files),
  );
}
