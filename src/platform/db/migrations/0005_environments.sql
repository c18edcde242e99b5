-- Environments: who made them, whether their last setup failed, and which other teams may use them.
ALTER TABLE environments
  ADD COLUMN creator_type text CHECK (creator_type IN ('user', 'service_account')),
  ADD COLUMN creator_uid text,
  -- Set by the engine when setup commands fail; a new config clears it.
  ADD COLUMN setup_failed boolean NOT NULL DEFAULT false,
  -- SHA-256 of the current share-link token (the token is shown once); a new link replaces it.
  ADD COLUMN share_token_hash text UNIQUE;

-- Teams other than the owner that may use an environment: added by the owner (guest) or joined with the link.
CREATE TABLE environment_access (
  environment_uid text NOT NULL REFERENCES environments (uid) ON DELETE CASCADE,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  via text NOT NULL CHECK (via IN ('guest', 'link')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (environment_uid, team_uid)
);
CREATE INDEX environment_access_team ON environment_access (team_uid);
