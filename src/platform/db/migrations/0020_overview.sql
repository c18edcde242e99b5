-- The overview (GET /api/v1/overview) aggregates a team's runs of the last 24 hours or 7 days. One covering index
-- answers every run aggregate with an index-only scan: a run's cost and error code are read out of JSON, so they
-- are stored as generated columns the index can carry. Without it, 1M runs in the window meant 1M heap fetches.
ALTER TABLE runs
  ADD COLUMN inference_cost double precision GENERATED ALWAYS AS (
    CASE WHEN jsonb_typeof(request_usage -> 'inference_cost') = 'number'
      THEN (request_usage ->> 'inference_cost')::double precision END
  ) STORED,
  ADD COLUMN error_code text GENERATED ALWAYS AS (status_message ->> 'error_code') STORED;
CREATE INDEX runs_team_overview ON runs (team_uid, created_at)
  INCLUDE (state, started_at, ended_at, model_id, schedule_id, inference_cost, error_code);

-- When an automation started a run from a delivery: the busiest automations count their firings in the window.
-- Firings made before this migration take their delivery's arrival time.
ALTER TABLE automation_firings ADD COLUMN fired_at timestamptz;
UPDATE automation_firings f SET fired_at = d.received_at FROM webhook_deliveries d WHERE d.seq = f.delivery_seq;
UPDATE automation_firings SET fired_at = clock_timestamp() WHERE fired_at IS NULL;
ALTER TABLE automation_firings ALTER COLUMN fired_at SET DEFAULT clock_timestamp(), ALTER COLUMN fired_at SET NOT NULL;
CREATE INDEX automation_firings_fired ON automation_firings (automation_id, fired_at);
