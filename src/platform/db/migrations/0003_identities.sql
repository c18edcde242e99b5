-- Agent identities get their configuration, and API keys may belong to an agent instead of a user.
ALTER TABLE agent_identities
  ADD COLUMN description text,
  ADD COLUMN prompt text,
  ADD COLUMN environment_id text,
  ADD COLUMN base_model text,
  ADD COLUMN worker_host text,
  ADD COLUMN skills jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN secrets jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN mcp_servers jsonb,
  ADD COLUMN harness jsonb,
  ADD COLUMN created_by_uid text;
-- Availability is decided by age within the team: the oldest agents up to the plan limit.
CREATE INDEX agent_identities_team_age ON agent_identities (team_uid, created_at, uid);

-- Deleting an agent deletes its keys in the same statement (ON DELETE CASCADE), so a deleted agent's key
-- fails on the very next request.
ALTER TABLE api_keys
  ALTER COLUMN user_uid DROP NOT NULL,
  ADD COLUMN agent_uid text REFERENCES agent_identities (uid) ON DELETE CASCADE,
  ADD CONSTRAINT api_keys_one_principal CHECK ((user_uid IS NULL) <> (agent_uid IS NULL));
CREATE INDEX api_keys_user ON api_keys (user_uid) WHERE user_uid IS NOT NULL;
CREATE INDEX api_keys_agent ON api_keys (agent_uid) WHERE agent_uid IS NOT NULL;
