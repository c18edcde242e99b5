import type { ResolvedDefinition } from '../../../mcp/index.js';
import type { ResolvedModel } from '../../../models/index.js';

/**
 * What a CLI in the sandbox is given instead of credentials: addresses of this server's egress proxies (the egress
 * slice serves them), with the execution's task token as the only key.
 */

/** The path segment of each provider under /harness-support/model-proxy/. */
export const PROXY_PROVIDERS = {
  ANTHROPIC: 'anthropic',
  OPENAI: 'openai',
  GOOGLE: 'google',
  UNKNOWN: 'openai-compatible',
} as const;

/**
 * The model a CLI in the sandbox is given instead of the real one: the same model behind this server's proxy,
 * with the task token as its key. Its base URL is spelled the way the real one is (with the version where the
 * CLI strips it), so each CLI ends up at `<proxy>/<provider>/<the path it would have used>`.
 */
export function proxiedModel(model: ResolvedModel, apiUrl: string, taskToken: string): ResolvedModel {
  const root = `${apiUrl}/harness-support/model-proxy/${PROXY_PROVIDERS[model.provider]}`;
  const version = model.provider === 'ANTHROPIC' ? '/v1' : model.provider === 'GOOGLE' ? '/v1beta' : '';
  return { ...model, baseUrl: `${root}${version}`, apiKey: taskToken };
}

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
