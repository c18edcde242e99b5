import type { ResolvedDefinition } from '../../mcp/index.js';
import { HarnessStartError } from '../harnesses/harness.js';

type McpEntry = {
  command?: unknown;
  args?: unknown;
  env?: unknown;
  url?: unknown;
  headers?: unknown;
  warp_id?: unknown;
};

function strings(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/**
 * The MCP servers of a run's `config.mcp_servers` as its harness starts them: inline stdio and HTTP servers as
 * given, registered ones (`warp_id`) looked up with the owning team's secrets filled in. One that cannot be
 * resolved any more (deleted, unshared, a secret gone) stops the run before it starts.
 */
export async function resolveRunMcpServers(
  agentConfig: Record<string, unknown>,
  registered: (uid: string) => Promise<ResolvedDefinition>,
): Promise<Record<string, ResolvedDefinition>> {
  const entries = (agentConfig.mcp_servers ?? {}) as Record<string, McpEntry>;
  const servers: Record<string, ResolvedDefinition> = {};
  for (const [name, entry] of Object.entries(entries)) {
    if (typeof entry.command === 'string') {
      const args = Array.isArray(entry.args) ? entry.args.filter((arg): arg is string => typeof arg === 'string') : [];
      servers[name] = { command: entry.command, args, env: strings(entry.env) };
    } else if (typeof entry.url === 'string') {
      servers[name] = { url: entry.url, headers: strings(entry.headers) };
    } else if (typeof entry.warp_id === 'string') {
      try {
        servers[name] = await registered(entry.warp_id);
      } catch (error) {
        throw new HarnessStartError(`MCP server ${name}: ${(error as Error).message}`, 'integration_not_configured');
      }
    }
  }
  return servers;
}
