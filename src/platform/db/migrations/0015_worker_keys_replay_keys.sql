-- Self-hosted workers get their own credential. A worker key belongs to a team, opens only the worker websocket,
-- and only for the worker IDs its `worker_id` names (one ID, or a pattern where * stands for any characters).
-- Stored by hash; the key itself is shown once. Deleting the team deletes its keys.
CREATE TABLE worker_keys (
  uid text PRIMARY KEY,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  key_hash text NOT NULL UNIQUE,
  display_prefix text NOT NULL,
  name text NOT NULL,
  worker_id text NOT NULL,
  created_by_uid text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at timestamptz
);
CREATE INDEX worker_keys_team ON worker_keys (team_uid, created_at, uid);

-- Signed webhook deliveries are deduplicated on what their signature covers, not on the sender's delivery-ID
-- header, which most providers do not sign (a captured delivery replayed with a fresh ID would start its runs
-- again). One row per accepted signed event and webhook: `replay_key` is the SHA-256 of the signed event (the
-- body; the signed message ID for Standard Webhooks). Schemes without a signed timestamp keep their keys for
-- good (expires_at NULL: a captured delivery stays valid as long as the secret does); schemes with one keep
-- them for the delivery retention, well past their 5-minute window and the providers' own retries.
CREATE TABLE webhook_replay_keys (
  webhook_uid text NOT NULL REFERENCES webhooks (uid) ON DELETE CASCADE,
  replay_key text NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz,
  PRIMARY KEY (webhook_uid, replay_key)
);
CREATE INDEX webhook_replay_keys_expiry ON webhook_replay_keys (expires_at) WHERE expires_at IS NOT NULL;

-- A signed delivery's row records its replay key; the sender's delivery ID stays for display and look-ups. The
-- one-accepted-per-ID rule now holds only for unsigned deliveries (token modes): signed ones are decided by
-- webhook_replay_keys, so the same unsigned ID on a new signed body is a new event.
ALTER TABLE webhook_deliveries ADD COLUMN replay_key text;
DROP INDEX webhook_deliveries_identity;
CREATE UNIQUE INDEX webhook_deliveries_identity ON webhook_deliveries (webhook_uid, delivery_id) WHERE status = 'Accepted' AND replay_key IS NULL;
