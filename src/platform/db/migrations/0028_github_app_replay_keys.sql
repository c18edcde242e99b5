-- The GitHub App's webhook (/webhooks/github-app) shares the replay store of the team webhooks: its keys are
-- scoped by the name 'github-app' instead of a webhook's uid, so the foreign key gives way to a trigger that still
-- drops a deleted webhook's keys.
ALTER TABLE webhook_replay_keys DROP CONSTRAINT webhook_replay_keys_webhook_uid_fkey;

CREATE FUNCTION webhook_replay_keys_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_replay_keys WHERE webhook_uid = OLD.uid;
  RETURN OLD;
END;
$$;

CREATE TRIGGER webhooks_forget_replay_keys AFTER DELETE ON webhooks
  FOR EACH ROW EXECUTE FUNCTION webhook_replay_keys_forget();

-- Hangar's reply in the GitHub thread that started a run: one comment, posted when the run starts and edited with
-- the outcome once the run has ended (`outcome_posted`).
CREATE TABLE github_thread_replies (
  run_id text PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  installation_id bigint NOT NULL,
  owner text NOT NULL,
  repo text NOT NULL,
  comment_id bigint NOT NULL,
  outcome_posted boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX github_thread_replies_waiting ON github_thread_replies (run_id) WHERE NOT outcome_posted;
