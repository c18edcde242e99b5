import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ProblemResponses } from '../../platform/http/openapi.js';
import {
  ApiKeyList,
  CreatedApiKey,
  CreateKeyBody,
  CreateTeamBody,
  CreateUserBody,
  KeyListQuery,
  KeyParams,
  Member,
  MemberList,
  MemberParams,
  SetMemberBody,
  Team,
  TeamList,
  TeamParams,
  User,
  UserList,
} from './schemas.js';
import type { AdminService } from './service.js';

/** Instance administration; every route needs an administrator's key (403 otherwise). */
export function registerAdminRoutes(parent: FastifyInstance, admin: AdminService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Administration'];
  const config = { adminOnly: true };
  const noContent = { 204: Type.Null(), ...ProblemResponses };

  app.post(
    '/admin/teams',
    {
      config,
      schema: { tags, summary: 'Create a team', body: CreateTeamBody, response: { 201: Team, ...ProblemResponses } },
    },
    async (request, reply) => reply.code(201).send(await admin.createTeam(request.body.name)),
  );
  app.get(
    '/admin/teams',
    { config, schema: { tags, summary: 'List teams', response: { 200: TeamList, ...ProblemResponses } } },
    async () => admin.listTeams(),
  );

  app.post(
    '/admin/users',
    {
      config,
      schema: { tags, summary: 'Create a user', body: CreateUserBody, response: { 201: User, ...ProblemResponses } },
    },
    async (request, reply) => reply.code(201).send(await admin.createUser(request.body)),
  );
  app.get(
    '/admin/users',
    { config, schema: { tags, summary: 'List users', response: { 200: UserList, ...ProblemResponses } } },
    async () => admin.listUsers(),
  );

  app.get(
    '/admin/teams/:teamUid/members',
    {
      config,
      schema: {
        tags,
        summary: 'List the members of a team',
        params: TeamParams,
        response: { 200: MemberList, ...ProblemResponses },
      },
    },
    async (request) => admin.listMembers(request.params.teamUid),
  );
  app.put(
    '/admin/teams/:teamUid/members/:userUid',
    {
      config,
      schema: {
        tags,
        summary: 'Add a user to a team or change their role',
        params: MemberParams,
        body: SetMemberBody,
        response: { 200: Member, ...ProblemResponses },
      },
    },
    async (request) => admin.setMember(request.params.teamUid, request.params.userUid, request.body.role),
  );
  app.delete(
    '/admin/teams/:teamUid/members/:userUid',
    { config, schema: { tags, summary: 'Remove a user from a team', params: MemberParams, response: noContent } },
    async (request, reply) => {
      await admin.removeMember(request.params.teamUid, request.params.userUid);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/admin/api-keys',
    {
      config,
      schema: {
        tags,
        summary: 'Create an API key for a user or an agent identity (the key is shown once)',
        body: CreateKeyBody,
        response: { 201: CreatedApiKey, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await admin.createKey(request.body)),
  );
  app.get(
    '/admin/api-keys',
    {
      config,
      schema: {
        tags,
        summary: 'List API keys (never the keys themselves)',
        querystring: KeyListQuery,
        response: { 200: ApiKeyList, ...ProblemResponses },
      },
    },
    async (request) => admin.listKeys(request.query),
  );
  app.delete(
    '/admin/api-keys/:keyUid',
    {
      config,
      schema: {
        tags,
        summary: 'Revoke an API key (effective on the next request)',
        params: KeyParams,
        response: noContent,
      },
    },
    async (request, reply) => {
      await admin.revokeKey(request.params.keyUid);
      return reply.code(204).send(null);
    },
  );
}
