-- Team secrets and shared MCP servers.

-- Only AES-256-GCM ciphertext is stored; the key lives outside the database (HANGAR_SECRET_KEY or the data
-- directory), so a database dump alone reveals no value. Team uid and name are the authenticated context.
CREATE TABLE secrets (
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  name text NOT NULL CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_.-]{0,127}$'),
  iv bytea NOT NULL,
  auth_tag bytea NOT NULL,
  ciphertext bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (team_uid, name)
);

-- A team's MCP server definitions. `definition` holds {command, args, env} or {url, headers}; values that are
-- team secrets are stored as {"secret": "<name>"} references, never as values.
CREATE TABLE mcp_servers (
  uid text PRIMARY KEY CHECK (uid ~ '^[A-Za-z0-9]{22}$'),
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  name text NOT NULL,
  definition jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (team_uid, name)
);

-- Other teams a server is shared with: they may see it and use it in runs, not change it.
CREATE TABLE mcp_server_shares (
  server_uid text NOT NULL REFERENCES mcp_servers (uid) ON DELETE CASCADE,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (server_uid, team_uid)
);
CREATE INDEX mcp_server_shares_team ON mcp_server_shares (team_uid);
