import { invalidRequest, notAuthorized } from '../platform/http/errors.js';
import type { AddressPolicy } from '../platform/net/address-policy.js';

/**
 * Checks `mcp_servers`: each entry is exactly one of a command, a URL, or a reference (`warp_id`) to an MCP
 * server the team owns or that is shared with it. Every shape problem (400) is reported before access (403).
 * Returns the team secrets the referenced servers hand to the run.
 */
export async function checkMcpServers(
  servers: Record<string, object>,
  secretsOf: (uid: string) => Promise<string[] | null>,
  addressPolicy: AddressPolicy,
): Promise<string[]> {
  const references: Array<[name: string, uid: string]> = [];
  for (const [name, entry] of Object.entries(servers)) {
    const server = entry as Record<string, unknown>;
    const forms = ['command', 'url', 'warp_id'].filter((key) => key in server);
    if (forms.length !== 1) {
      throw invalidRequest(`config.mcp_servers.${name} must have exactly one of command, url or warp_id`);
    }
    const form = forms[0]!;
    if (typeof server[form] !== 'string' || server[form] === '') {
      throw invalidRequest(`config.mcp_servers.${name}.${form} must be a non-empty string`);
    }
    if (form === 'url') {
      try {
        new URL(server.url as string);
      } catch {
        throw invalidRequest(`config.mcp_servers.${name}.url is not a valid URL`);
      }
      const refusal = await addressPolicy.refusalOfUrl(server.url as string);
      if (refusal) throw invalidRequest(`config.mcp_servers.${name}.url is refused: ${refusal}`);
    }
    if (form === 'warp_id') references.push([name, server.warp_id as string]);
  }
  const secrets: string[] = [];
  for (const [name, uid] of references) {
    const names = await secretsOf(uid);
    if (names === null) {
      throw notAuthorized(
        `config.mcp_servers.${name} references MCP server ${uid}, which does not exist or this team cannot use`,
      );
    }
    secrets.push(...names);
  }
  return secrets;
}
