import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../platform/http/auth.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { CreateSecretBody, SecretItem, SecretList, SecretNameParams, UpdateSecretBody } from './schemas.js';
import type { SecretsService } from './service.js';

export function registerSecretRoutes(parent: FastifyInstance, secrets: SecretsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Secrets'];

  app.post(
    '/secrets',
    {
      schema: {
        tags,
        summary: 'Create a team secret (team admins)',
        description: 'The value is encrypted at rest and never returned by any endpoint. 409 when the name is taken.',
        body: CreateSecretBody,
        response: { 201: SecretItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await secrets.create(callerOf(request), request.body)),
  );
  app.get(
    '/secrets',
    { schema: { tags, summary: "List the team's secrets (names only), by name", response: { 200: SecretList, ...ProblemResponses } } },
    async (request) => secrets.list(callerOf(request)),
  );
  app.put(
    '/secrets/:name',
    {
      schema: {
        tags,
        summary: "Replace a secret's value (team admins)",
        params: SecretNameParams,
        body: UpdateSecretBody,
        response: { 200: SecretItem, ...ProblemResponses },
      },
    },
    async (request) => secrets.update(callerOf(request), request.params.name, request.body),
  );
  app.delete(
    '/secrets/:name',
    {
      schema: {
        tags,
        summary: 'Delete a secret (team admins)',
        params: SecretNameParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await secrets.delete(callerOf(request), request.params.name);
      return reply.code(204).send(null);
    },
  );
}
