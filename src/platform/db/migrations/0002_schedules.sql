-- Scheduled agents: a prompt and config that start a run on every tick of a cron expression.
CREATE TABLE schedules (
  id text PRIMARY KEY,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  name text NOT NULL,
  cron_schedule text NOT NULL,
  prompt text NOT NULL,
  enabled boolean NOT NULL,
  agent_config jsonb,
  agent_uid text,
  metadata jsonb NOT NULL DEFAULT '{}',
  scope_type text NOT NULL CHECK (scope_type IN ('User', 'Team')),
  scope_uid text NOT NULL,
  created_by_uid text NOT NULL,
  updated_by_uid text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The next due tick; NULL while paused. The scheduler claims rows whose tick has come.
  next_run_at timestamptz,
  last_ran_at timestamptz,
  last_spawn_error text
);
CREATE INDEX schedules_team_name ON schedules (team_uid, name, id);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled;

-- The tick a scheduled run was started for: at most one run per schedule and tick, whatever the replicas do.
ALTER TABLE runs ADD COLUMN schedule_tick timestamptz;
CREATE UNIQUE INDEX runs_schedule_tick ON runs (schedule_id, schedule_tick) WHERE schedule_tick IS NOT NULL;
