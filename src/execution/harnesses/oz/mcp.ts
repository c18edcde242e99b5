import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { dynamicTool, jsonSchema, type ToolSet } from 'ai';
import type { ResolvedDefinition } from '../../../mcp/index.js';
import type { AddressPolicy } from '../../../platform/net/address-policy.js';
import { addressRefusal, guardedFetch } from '../../../platform/net/guarded-fetch.js';
import type { SandboxMode } from '../../sandbox/backend.js';
import { SandboxedStdioTransport } from './mcp-transport.js';

export interface McpConnectOptions {
  workspace: string;
  /** The sandboxed environment stdio servers start with (their own `env` is added to it). */
  env: Record<string, string>;
  sandbox: SandboxMode;
  hiddenPaths: string[];
  network: boolean;
  /** Which addresses HTTP servers may be at: the server process connects to them, not the sandbox. */
  addressPolicy: AddressPolicy;
  /** A stdio server's stderr, for the run's diagnostics. */
  log: (line: string) => void;
}

export interface McpTools {
  tools: ToolSet;
  close(): Promise<void>;
}

/** Tool names the model providers accept: letters, digits, _ and -, at most 64. */
function toolName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/**
 * Requests to an HTTP MCP server from this process: checked against the address policy at connect time, and an
 * answer that is not a success loses its body and status text, which the SDK would otherwise put in the error
 * the run sees (a server's error page may carry anything, secrets included).
 */
function mcpFetch(policy: AddressPolicy): typeof fetch {
  const guarded = guardedFetch(policy);
  return async (input, init) => {
    const response = await guarded(input, init);
    if (response.ok) return response;
    await response.body?.cancel().catch(() => undefined);
    return new Response(null, { status: response.status, headers: response.headers });
  };
}

/** What the run is told when an HTTP MCP server fails: the status or the refusal, never what the server said. */
function httpFailure(error: unknown): string {
  const refused = addressRefusal(error);
  if (refused) return refused.message;
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0)
    return `it answered HTTP ${error.code}`;
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && /^E[A-Z_]+$/.test(code)
    ? `the connection failed (${code})`
    : 'it did not answer as an MCP server';
}

/** Starts each server's connection: stdio servers in the sandbox, HTTP ones over Streamable HTTP. */
async function connect(name: string, server: ResolvedDefinition, options: McpConnectOptions): Promise<Client> {
  const client = new Client({ name: 'hangar-oz', version: '1.0.0' });
  if (!('command' in server) && !options.network) {
    // The connection would come from this process, outside the sandbox whose network is off.
    throw new Error(
      'it is an HTTP server, and oz runs without network on this server (builtin_harnesses.oz.network), so it does not connect to it',
    );
  }
  const transport =
    'command' in server
      ? new SandboxedStdioTransport(
          {
            mode: options.sandbox,
            argv: [server.command, ...server.args],
            cwd: options.workspace,
            env: { ...options.env, ...server.env },
            hiddenPaths: options.hiddenPaths,
            allowNetwork: options.network,
            timeoutMs: Number.POSITIVE_INFINITY,
            maxOutputBytes: Number.POSITIVE_INFINITY,
          },
          (line) => options.log(`mcp ${name}: ${line}`),
        )
      : new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: server.headers },
          fetch: mcpFetch(options.addressPolicy),
        });
  try {
    await client.connect(transport);
  } catch (error) {
    throw 'command' in server ? error : new Error(httpFailure(error));
  }
  return client;
}

/**
 * Connects to the run's MCP servers and offers their tools to the agent as `<server>__<tool>`. A server that does
 * not start or answer fails the whole connection (with its name), since the task was written expecting it.
 */
export async function connectMcpServers(
  servers: Record<string, ResolvedDefinition>,
  options: McpConnectOptions,
): Promise<McpTools> {
  const clients: Client[] = [];
  const close = async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  };
  const tools: ToolSet = {};
  try {
    for (const [name, server] of Object.entries(servers)) {
      let client: Client;
      try {
        client = await connect(name, server, options);
      } catch (error) {
        throw new Error(`The MCP server ${name} could not be reached: ${(error as Error).message}`);
      }
      clients.push(client);
      const http = !('command' in server);
      const { tools: offered } = await client.listTools().catch((error: unknown) => {
        throw new Error(
          `The MCP server ${name} could not list its tools: ${http ? httpFailure(error) : (error as Error).message}`,
        );
      });
      for (const offeredTool of offered) {
        tools[toolName(name, offeredTool.name)] = dynamicTool({
          description: offeredTool.description ?? `${offeredTool.name} from the MCP server ${name}`,
          inputSchema: jsonSchema(offeredTool.inputSchema as Parameters<typeof jsonSchema>[0]),
          execute: async (input) => {
            const result = await client
              .callTool({ name: offeredTool.name, arguments: (input ?? {}) as Record<string, unknown> })
              .catch((error: unknown) => {
                throw http ? new Error(`The MCP server ${name} failed: ${httpFailure(error)}`) : error;
              });
            if (result.isError) throw new Error(JSON.stringify(result.content));
            return result.structuredContent ?? result.content;
          },
        });
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { tools, close };
}
