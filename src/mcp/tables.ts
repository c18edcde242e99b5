import type { Json, Timestamp } from '../platform/db/columns.js';

export interface McpServersTable {
  uid: string;
  team_uid: string;
  name: string;
  /** {command, args, env} or {url, headers}; secret values appear only as {secret: name} references. */
  definition: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface McpServerSharesTable {
  server_uid: string;
  team_uid: string;
  created_at: Timestamp;
}

/** The mcp slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface McpTables {
  mcp_servers: McpServersTable;
  mcp_server_shares: McpServerSharesTable;
}
