-- GitHub links (issue 30): which GitHub App installations a team acts through (the installation's account, an
-- organization or user login, says which repositories' owner it covers), or the team secret holding a fine-grained
-- personal access token, the simpler path for small setups. Instance administrators link them.
CREATE TABLE github_links (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  installation_id bigint,
  account_login text,
  token_secret text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((installation_id IS NOT NULL AND account_login IS NOT NULL AND token_secret IS NULL)
      OR (installation_id IS NULL AND account_login IS NULL AND token_secret IS NOT NULL))
);
CREATE UNIQUE INDEX github_links_installation ON github_links (team_uid, installation_id)
  WHERE installation_id IS NOT NULL;
-- One personal access token per team.
CREATE UNIQUE INDEX github_links_token ON github_links (team_uid) WHERE token_secret IS NOT NULL;
