-- Share links of runs (issue 52, config.session_sharing): a link for people without a key to one run's page,
-- read-only (VIEWER) or able to send follow-ups (EDITOR). Only the SHA-256 of the link's secret is kept; a link works
-- until it is revoked (revoked_at) or its run is deleted (the cascade). One link of a run is active at a time.
CREATE TABLE run_share_links (
  id uuid PRIMARY KEY,
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  team_uid text NOT NULL,
  public_access text NOT NULL CHECK (public_access IN ('VIEWER', 'EDITOR')),
  secret_hash text NOT NULL UNIQUE,
  created_by_type text NOT NULL,
  created_by_uid text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at timestamptz,
  revoked_by_uid text
);
CREATE UNIQUE INDEX run_share_links_active ON run_share_links (run_id) WHERE revoked_at IS NULL;
