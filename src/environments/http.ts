import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import {
  AddGuestBody,
  EnvironmentConfigBody,
  EnvironmentItem,
  EnvironmentParams,
  GuestParams,
  GuestSecretsItem,
  JoinBody,
  ListEnvironmentsQuery,
  ListEnvironmentsResponse,
  RebuildResponse,
  ShareLinkResponse,
} from './schemas.js';
import type { EnvironmentsService } from './service.js';

const NoContent = Type.Null({ description: 'No content' });

/** The interface's list route plus Hangar's own management routes (the interface shows no way to make one). */
export function registerEnvironmentRoutes(parent: FastifyInstance, environments: EnvironmentsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Environments'];

  app.get(
    '/agent/environments',
    {
      schema: {
        tags,
        summary: 'List environments',
        description: "Environments the caller's team owns, is a guest of, or joined with a share link.",
        querystring: ListEnvironmentsQuery,
        response: { 200: ListEnvironmentsResponse, ...ProblemResponses },
      },
    },
    async (request) => environments.list(callerOf(request), request.query.sort_by),
  );

  app.post(
    '/environments',
    {
      schema: {
        tags,
        summary: 'Create an environment',
        body: EnvironmentConfigBody,
        response: { 201: EnvironmentItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await environments.create(callerOf(request), request.body)),
  );

  app.post(
    '/environments/join',
    {
      schema: {
        tags,
        summary: 'Join an environment with a share link token',
        description: "Gives the caller's team access to the environment the token shares.",
        body: JoinBody,
        response: { 200: EnvironmentItem, ...ProblemResponses },
      },
    },
    async (request) => environments.join(callerOf(request), request.body.token),
  );

  app.post(
    '/admin/environments/:uid/rebuild',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['Administration'],
        summary: "Drop an environment's setup snapshots (its next run sets up from nothing)",
        params: EnvironmentParams,
        response: { 200: RebuildResponse, ...ProblemResponses },
      },
    },
    async (request) => environments.rebuild(request.params.uid),
  );

  app.get(
    '/environments/:uid',
    {
      schema: {
        tags,
        summary: 'Get an environment',
        params: EnvironmentParams,
        response: { 200: EnvironmentItem, ...ProblemResponses },
      },
    },
    async (request) => environments.get(callerOf(request), request.params.uid),
  );

  app.put(
    '/environments/:uid',
    {
      schema: {
        tags,
        summary: 'Replace the config of an environment (owning team only)',
        params: EnvironmentParams,
        body: EnvironmentConfigBody,
        response: { 200: EnvironmentItem, ...ProblemResponses },
      },
    },
    async (request) => environments.update(callerOf(request), request.params.uid, request.body),
  );

  app.delete(
    '/environments/:uid',
    {
      schema: {
        tags,
        summary: 'Delete an environment (owning team only)',
        params: EnvironmentParams,
        response: { 204: NoContent, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await environments.delete(callerOf(request), request.params.uid);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/environments/:uid/guests',
    {
      schema: {
        tags,
        summary: "Share an environment with another team (owning team's admins)",
        params: EnvironmentParams,
        body: AddGuestBody,
        response: { 200: EnvironmentItem, ...ProblemResponses },
      },
    },
    async (request) => environments.addGuest(callerOf(request), request.params.uid, request.body.team_uid),
  );

  app.delete(
    '/environments/:uid/guests/:team_uid',
    {
      schema: {
        tags,
        summary: "Remove a team's access, as a guest or through the link (owning team's admins)",
        params: GuestParams,
        response: { 204: NoContent, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await environments.removeGuest(callerOf(request), request.params.uid, request.params.team_uid);
      return reply.code(204).send(null);
    },
  );

  // The guest's side of sharing: the owner's setup runs inside the guest's runs, so the guest team's secrets go into
  // them only once one of its admins allowed it (docs/environments.md, "What sharing an environment trusts").
  app.get(
    '/environments/:uid/trust',
    {
      schema: {
        tags,
        summary: "Whether this team's runs in an environment another team shares may use this team's secrets",
        params: EnvironmentParams,
        response: { 200: GuestSecretsItem, ...ProblemResponses },
      },
    },
    async (request) => environments.guestSecrets(callerOf(request), request.params.uid),
  );

  app.post(
    '/environments/:uid/trust',
    {
      schema: {
        tags,
        summary: "Let this team's runs in an environment another team shares use this team's secrets (admins)",
        description:
          "The environment's setup is its owning team's code and runs inside this team's runs: with this consent, those runs get the team secrets they name (model keys, MCP servers' secrets) and the team's GitHub tokens.",
        params: EnvironmentParams,
        response: { 200: GuestSecretsItem, ...ProblemResponses },
      },
    },
    async (request) => environments.allowGuestSecrets(callerOf(request), request.params.uid),
  );

  app.delete(
    '/environments/:uid/trust',
    {
      schema: {
        tags,
        summary: "Take back the consent: this team's runs in the environment get none of its secrets (admins)",
        params: EnvironmentParams,
        response: { 204: NoContent, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await environments.disallowGuestSecrets(callerOf(request), request.params.uid);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/environments/:uid/share-link',
    {
      schema: {
        tags,
        summary: "Make a share link token (owning team's admins)",
        description:
          'The token is shown once. Making a new one invalidates the previous token; teams that already joined keep access.',
        params: EnvironmentParams,
        response: { 200: ShareLinkResponse, ...ProblemResponses },
      },
    },
    async (request) => environments.createShareLink(callerOf(request), request.params.uid),
  );
}
