-- Setup snapshots (issue 28): the workspace after a successful setup, kept on an engine's data directory under a
-- key (image, each repository's commit, the setup commands). A row is 'creating' while its files are copied: the
-- unique key makes two executions that would create the same snapshot at once make one. Rows are per environment
-- and per team of the run that made them: a snapshot never serves another team.
CREATE TABLE environment_snapshots (
  id text PRIMARY KEY,
  environment_uid text NOT NULL REFERENCES environments (uid) ON DELETE CASCADE,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  key text NOT NULL,
  -- The key without the repositories' commits: the newest snapshot with the same base is where an "updated" start
  -- begins when the repositories moved on.
  base_key text NOT NULL,
  commits jsonb NOT NULL DEFAULT '{}',
  state text NOT NULL DEFAULT 'creating' CHECK (state IN ('creating', 'ready')),
  size_bytes bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_used_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (environment_uid, team_uid, key)
);
CREATE INDEX environment_snapshots_base ON environment_snapshots (environment_uid, team_uid, base_key, created_at DESC);
