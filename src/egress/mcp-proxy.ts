import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import type { ResolvedDefinition } from '../mcp/definition.js';
import { ApiError, conflict, notFound, upstreamUnreachable } from '../platform/http/errors.js';
import { addressRefusal } from '../platform/net/guarded-fetch.js';
import { forward } from './forward.js';
import type { ProxiedExecution } from './proxied-execution.js';

type McpEntry = { warp_id?: unknown };

/**
 * The run's MCP servers as a CLI in the sandbox is given them: a registered HTTP server (its headers may hold a
 * secret of the team that owns it, which may be another team) becomes this server's proxy for it, with the task
 * token as the only credential; inline servers are the run's own and stay as they are. A stdio server's env
 * cannot be kept out: the server runs inside the sandbox.
 */
export function proxiedMcpServers(
  servers: Record<string, ResolvedDefinition>,
  agentConfig: Record<string, unknown>,
  apiUrl: string,
  taskToken: string,
): Record<string, ResolvedDefinition> {
  const entries = (agentConfig.mcp_servers ?? {}) as Record<string, McpEntry>;
  return Object.fromEntries(
    Object.entries(servers).map(([name, server]) => {
      const registered = typeof entries[name]?.warp_id === 'string';
      if ('command' in server || !registered) return [name, server];
      return [
        name,
        {
          url: `${apiUrl}/harness-support/mcp-proxy/${encodeURIComponent(name)}`,
          headers: { Authorization: `Bearer ${taskToken}` },
        },
      ];
    }),
  );
}

export interface McpProxyDeps {
  /** A registered MCP server the team may use, with its owner's secrets filled in. */
  resolve(teamUid: string, uid: string): Promise<ResolvedDefinition>;
  /** Connections checked against the address policy, as oz's own are. */
  dispatcher: Dispatcher;
}

/**
 * Forwards a CLI's request to the registered HTTP MCP server the run names `name`, adding its headers. What the
 * MCP server answers with an error status goes back without its body.
 */
export async function proxyMcpRequest(
  deps: McpProxyDeps,
  execution: ProxiedExecution,
  name: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const entry = ((execution.agentConfig.mcp_servers ?? {}) as Record<string, McpEntry>)[name];
  if (typeof entry?.warp_id !== 'string') throw notFound(`the run has no registered MCP server named ${name}`);
  let server: ResolvedDefinition;
  try {
    server = await deps.resolve(execution.teamUid, entry.warp_id);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw conflict(`MCP server ${name}: ${(error as Error).message}`);
  }
  if ('command' in server) throw notFound(`MCP server ${name} is a stdio server`);
  try {
    return await forward(request, reply, {
      url: server.url,
      headers: server.headers,
      dispatcher: deps.dispatcher,
      errorBodies: false,
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The reason without what the server said: refused by the address policy, or not reachable.
    const refused = addressRefusal(error)?.message ?? 'it could not be reached';
    throw upstreamUnreachable(`MCP server ${name}: ${refused}`);
  }
}
