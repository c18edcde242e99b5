-- Idempotency-Key on run creation (POST /agent/runs and the deprecated POST /agent/run): a client that lost the
-- answer to a create retries with the same key and gets the first answer instead of a second run. One row per
-- team and key, written in the transaction that inserts the run, so a run and its key commit together or not at
-- all. `request_hash` is the SHA-256 of who sent the request and its body: the same key with another request is
-- refused. `answer` is the body the first request was answered with. A key counts for 24 hours from
-- `created_at` (src/runs/idempotency.ts); an expired row is replaced by the next create with its key, and the
-- engine processes' retention loop deletes the others. No foreign key to the run: the answer stands as given.
CREATE TABLE run_idempotency_keys (
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  idempotency_key text NOT NULL,
  request_hash text NOT NULL,
  answer jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (team_uid, idempotency_key)
);
CREATE INDEX run_idempotency_keys_created ON run_idempotency_keys (created_at);
