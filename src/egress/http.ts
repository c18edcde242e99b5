import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { TaskTokens } from '../execution/index.js';
import { type McpProxyDeps, proxyMcpRequest } from './mcp-proxy.js';
import { type ModelProxyDeps, proxyModelRequest } from './model-proxy.js';
import { proxiedExecution } from './proxied-execution.js';

export interface EgressRouteDeps {
  db: Kysely<DB>;
  tokens: TaskTokens;
  models: ModelProxyDeps;
  mcp: McpProxyDeps;
  /** Largest request body forwarded (a long conversation is one model request). */
  bodyLimitBytes: number;
}

/**
 * The harness-support proxies: a CLI harness calls its model, and its registered HTTP MCP servers, through these
 * with its task token, and the credentials are added here, outside the sandbox. Bodies pass through unparsed.
 */
export function registerEgressRoutes(parent: FastifyInstance, deps: EgressRouteDeps): void {
  parent.register(async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes }, (_request, body, done) =>
      done(null, body),
    );
    const options = { schema: { hide: true }, config: { public: true } };
    app.all<{ Params: { provider: string; '*': string } }>(
      '/harness-support/model-proxy/:provider/*',
      options,
      async (request, reply) => {
        const execution = await proxiedExecution(deps.db, deps.tokens, request);
        return proxyModelRequest(deps.models, execution, request.params.provider, request.params['*'], request, reply);
      },
    );
    app.all<{ Params: { server: string } }>('/harness-support/mcp-proxy/:server', options, async (request, reply) => {
      const execution = await proxiedExecution(deps.db, deps.tokens, request);
      return proxyMcpRequest(deps.mcp, execution, request.params.server, request, reply);
    });
  });
}
