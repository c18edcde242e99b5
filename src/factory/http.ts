import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../platform/http/auth.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { CreateFactoryBody, FactoryItem, FactoryList } from './schemas.js';
import type { FactoriesService } from './service.js';

export function registerFactoryRoutes(parent: FastifyInstance, factories: FactoriesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Factories'];
  app.get(
    '/factory/factories',
    { schema: { tags, summary: "List the team's factories (the default one is made on first use)", response: { 200: FactoryList, ...ProblemResponses } } },
    async (request) => factories.list(callerOf(request)),
  );
  app.post(
    '/factory/factories',
    { schema: { tags, summary: 'Create a factory (team admin)', body: CreateFactoryBody, response: { 201: FactoryItem, ...ProblemResponses } } },
    async (request, reply) => reply.code(201).send(await factories.create(callerOf(request), request.body.name)),
  );
}
