-- Messages between the runs of one tree (issue 52, endpoint 4: orchestration). One row per recipient, so each has
-- its own delivered and read marks. The tree is recorded as it was at sending; a run removed by retention takes its
-- inbox with it.
CREATE TABLE agent_messages (
  message_id text PRIMARY KEY,
  team_uid text NOT NULL,
  root_run_id text NOT NULL,
  sender_run_id text NOT NULL,
  recipient_run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  subject text NOT NULL,
  body text NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  delivered_at timestamptz,
  read_at timestamptz
);

CREATE INDEX agent_messages_inbox ON agent_messages (recipient_run_id, sent_at, message_id);
