import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * An HTTP MCP server for tests (Streamable HTTP, stateless, on the official SDK) with one tool, `search_docs`. It
 * records the headers of every request, so a test can check what a client sent.
 */
export class DocsMcpServer {
  readonly headers: http.IncomingHttpHeaders[] = [];
  private readonly server = http.createServer((request, response) => void this.handle(request, response));
  url = '';

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    this.headers.push(request.headers);
    // Stateless: a server and transport per request, as the SDK's examples do.
    const mcp = new McpServer({ name: 'docs', version: '1.0.0' });
    mcp.registerTool(
      'search_docs',
      { description: 'Searches the documentation', inputSchema: { query: z.string() } },
      async ({ query }) => ({
        content: [{ type: 'text', text: `Docs about ${query}: use the cache.` }],
      }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response);
  }
}
