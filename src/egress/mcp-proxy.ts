import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import type { ResolvedDefinition } from '../mcp/index.js';
import { ApiError, conflict, notFound, upstreamUnreachable } from '../platform/http/errors.js';
import { addressRefusal } from '../platform/net/guarded-fetch.js';
import { forward } from './forward.js';
import type { ProxiedExecution } from './proxied-execution.js';

type McpEntry = { warp_id?: unknown };

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
