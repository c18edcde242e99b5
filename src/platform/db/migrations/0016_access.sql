-- Instance keys (download links, cursors, task tokens) are encrypted at rest like team secrets: AES-256-GCM under
-- the secret key, which lives outside the database. A key stored before this migration is still in `value`;
-- SQL cannot encrypt it (the key is not in the database), so the server seals it on its next start
-- (instanceSecret in src/platform/settings.ts) and clears `value`. Plain settings (the key fingerprint) keep
-- `value`.
ALTER TABLE instance_settings ALTER COLUMN value DROP NOT NULL;
ALTER TABLE instance_settings ADD COLUMN iv bytea, ADD COLUMN auth_tag bytea, ADD COLUMN ciphertext bytea;
ALTER TABLE instance_settings ADD CONSTRAINT instance_settings_one_value
  CHECK ((value IS NULL) = (ciphertext IS NOT NULL) AND (ciphertext IS NULL) = (iv IS NULL) AND (iv IS NULL) = (auth_tag IS NULL));

-- Who may use a team secret in a run beyond the team's admins: a member (by user uid), an agent identity (runs it
-- executes) or an environment (runs in it). A grant goes with its secret.
CREATE TABLE secret_grants (
  team_uid text NOT NULL,
  secret_name text NOT NULL,
  grantee_type text NOT NULL CHECK (grantee_type IN ('member', 'agent', 'environment')),
  grantee_uid text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (team_uid, secret_name, grantee_type, grantee_uid),
  FOREIGN KEY (team_uid, secret_name) REFERENCES secrets (team_uid, name) ON DELETE CASCADE ON UPDATE CASCADE
);

-- Failed API-key authentications per client address and minute, shared by every replica (the webhook ingress
-- counts its senders the same way in webhook_rate_windows). Shards spread concurrent increments of one client.
CREATE TABLE auth_failure_windows (
  client text NOT NULL,
  window_start timestamptz NOT NULL,
  shard smallint NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (client, window_start, shard)
);
CREATE INDEX auth_failure_windows_start ON auth_failure_windows (window_start);
