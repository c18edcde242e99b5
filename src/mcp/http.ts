import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { McpServerBody, McpServerItem, McpServerList, McpServerParams, ShareBody, ShareParams } from './schemas.js';
import type { McpServersService } from './service.js';

export function registerMcpServerRoutes(parent: FastifyInstance, servers: McpServersService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['MCP servers'];
  const item = { 200: McpServerItem, ...ProblemResponses };
  const deleted = { 204: Type.Null({ description: 'Deleted' }), ...ProblemResponses };

  app.post(
    '/mcp-servers',
    {
      schema: {
        tags,
        summary: 'Define an MCP server for the team',
        description:
          'Exactly one of command (stdio: args, env) or url (HTTP: headers). A value may be {"secret": "<team secret name>"}.',
        body: McpServerBody,
        response: { 201: McpServerItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await servers.create(callerOf(request), request.body)),
  );
  app.get(
    '/mcp-servers',
    {
      schema: {
        tags,
        summary: "The team's MCP servers and those shared with it, by name",
        response: { 200: McpServerList, ...ProblemResponses },
      },
    },
    async (request) => servers.list(callerOf(request)),
  );
  app.get(
    '/mcp-servers/:uid',
    { schema: { tags, summary: 'Get an MCP server', params: McpServerParams, response: item } },
    async (request) => servers.get(callerOf(request), request.params.uid),
  );
  app.put(
    '/mcp-servers/:uid',
    {
      schema: {
        tags,
        summary: 'Replace an MCP server (owning team)',
        params: McpServerParams,
        body: McpServerBody,
        response: item,
      },
    },
    async (request) => servers.update(callerOf(request), request.params.uid, request.body),
  );
  app.delete(
    '/mcp-servers/:uid',
    { schema: { tags, summary: 'Delete an MCP server (owning team)', params: McpServerParams, response: deleted } },
    async (request, reply) => {
      await servers.delete(callerOf(request), request.params.uid);
      return reply.code(204).send(null);
    },
  );
  app.post(
    '/mcp-servers/:uid/shares',
    {
      schema: {
        tags,
        summary: 'Share an MCP server with another team (owning team admins)',
        description:
          'The other team can then see it and use it in runs, with the secrets it refers to. Sharing twice changes nothing.',
        params: McpServerParams,
        body: ShareBody,
        response: item,
      },
    },
    async (request) => servers.share(callerOf(request), request.params.uid, request.body.team_uid),
  );
  app.delete(
    '/mcp-servers/:uid/shares/:team_uid',
    {
      schema: {
        tags,
        summary: 'Stop sharing an MCP server with a team (owning team admins)',
        params: ShareParams,
        response: deleted,
      },
    },
    async (request, reply) => {
      await servers.unshare(callerOf(request), request.params.uid, request.params.team_uid);
      return reply.code(204).send(null);
    },
  );
}
