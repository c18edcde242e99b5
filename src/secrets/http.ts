import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import {
  CreateSecretBody,
  SecretGrantBody,
  SecretGrantItem,
  SecretGrantList,
  SecretGrantParams,
  SecretItem,
  SecretList,
  SecretNameParams,
  UpdateSecretBody,
} from './schemas.js';
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
    {
      schema: {
        tags,
        summary: "List the team's secrets (names only), by name",
        response: { 200: SecretList, ...ProblemResponses },
      },
    },
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

  app.get(
    '/secrets/:name/grants',
    {
      schema: {
        tags,
        summary: 'Who besides team admins may use a secret in runs (team admins)',
        params: SecretNameParams,
        response: { 200: SecretGrantList, ...ProblemResponses },
      },
    },
    async (request) => secrets.listGrants(callerOf(request), request.params.name),
  );
  app.post(
    '/secrets/:name/grants',
    {
      schema: {
        tags,
        summary: 'Let a member, an agent identity or an environment use a secret in runs (team admins)',
        description:
          'Team admins may use every secret of the team in runs. Anyone else may name a secret (in harness_auth_secrets, or through an MCP server of the team that refers to it) only when it is granted to them, to the agent identity the run executes as, or to its environment; otherwise run creation is 403. 201 for a new grant, 200 when it existed.',
        params: SecretNameParams,
        body: SecretGrantBody,
        response: { 200: SecretGrantItem, 201: SecretGrantItem, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { created, grant } = await secrets.grant(callerOf(request), request.params.name, request.body);
      return reply.code(created ? 201 : 200).send(grant);
    },
  );
  app.delete(
    '/secrets/:name/grants/:grantee_type/:grantee_uid',
    {
      schema: {
        tags,
        summary: 'Withdraw a grant (team admins); runs already created keep what they were given',
        params: SecretGrantParams,
        response: { 204: Type.Null({ description: 'Withdrawn' }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { name, grantee_type, grantee_uid } = request.params;
      await secrets.revoke(callerOf(request), name, { grantee_type, grantee_uid });
      return reply.code(204).send(null);
    },
  );
}
