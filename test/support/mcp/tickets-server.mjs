// A stdio MCP server for tests, on the official SDK: one tool, `lookup_ticket`, that also tells where it ran
// (so a test can see it ran in the run's workspace).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'tickets', version: '1.0.0' });
server.registerTool(
  'lookup_ticket',
  { description: 'Looks up a ticket by its ID', inputSchema: { id: z.string() } },
  async ({ id }) => ({
    content: [
      {
        type: 'text',
        text: `Ticket ${id}: the login page is slow (cwd ${process.cwd()}, label ${process.env.TICKETS_LABEL})`,
      },
    ],
  }),
);
await server.connect(new StdioServerTransport());
