import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ProblemResponses } from '../../platform/http/openapi.js';
import { callerOf } from '../request-auth.js';
import { AgentItem, AgentList, AgentListQuery, AgentUidParams, CreateAgentBody, UpdateAgentBody } from './schemas.js';
import type { AgentsService } from './service.js';

export function registerAgentRoutes(parent: FastifyInstance, agents: AgentsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Agent identities'];
  app.post(
    '/agent/identities',
    {
      schema: {
        tags,
        summary: 'Create an agent identity (team admin)',
        body: CreateAgentBody,
        response: { 201: AgentItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await agents.create(callerOf(request), request.body)),
  );
  app.get(
    '/agent/identities',
    {
      schema: {
        tags,
        summary: 'List the team agent identities',
        querystring: AgentListQuery,
        response: { 200: AgentList, ...ProblemResponses },
      },
    },
    async (request) => {
      const factories = request.query.factory_uid;
      return agents.list(
        callerOf(request),
        factories === undefined ? undefined : Array.isArray(factories) ? factories : [factories],
      );
    },
  );
  app.get(
    '/agent/identities/:uid',
    {
      schema: {
        tags,
        summary: 'Get an agent identity',
        params: AgentUidParams,
        response: { 200: AgentItem, ...ProblemResponses },
      },
    },
    async (request) => agents.get(callerOf(request), request.params.uid),
  );
  app.put(
    '/agent/identities/:uid',
    {
      schema: {
        tags,
        summary: 'Update an agent identity (team admin)',
        description: 'Omitted or null fields are unchanged; an empty string, list or object clears the field.',
        params: AgentUidParams,
        body: UpdateAgentBody,
        response: { 200: AgentItem, ...ProblemResponses },
      },
    },
    async (request) => agents.update(callerOf(request), request.params.uid, request.body),
  );
  app.delete(
    '/agent/identities/:uid',
    {
      schema: {
        tags,
        summary: 'Delete an agent identity and all of its API keys (team admin)',
        params: AgentUidParams,
        response: { 204: Type.Null(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await agents.delete(callerOf(request), request.params.uid);
      return reply.code(204).send(null);
    },
  );
}
