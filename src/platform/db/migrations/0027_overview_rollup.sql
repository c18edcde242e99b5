-- The overview's hourly rollup (issue 26): at 1M runs in the window, aggregating the runs themselves took 0.8 s for
-- 24 hours and 17 s for 7 days. Ended runs no longer change (but for a follow-up that queues one again, and the
-- retention job that deletes it), so their aggregates are kept per team and hour of creation; the few runs still
-- going are aggregated from the runs themselves through a partial index.
--
-- The triggers below write one row per change of an ended run into run_overview_changes: +1 when a run ends (or an
-- ended one is inserted), -1 when it leaves its end (a follow-up queues it again, or it is deleted), both for any
-- change of a figure the overview reads. They only insert: run ends are written in batches, and concurrent batches
-- adding to shared totals in their own orders could deadlock. The overview folds a team's changes into
-- run_overview_hours (src/runs/lifecycle/overview-rollup.ts) before it reads.
CREATE TABLE run_overview_changes (
  team_uid text NOT NULL,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  ended_at timestamptz,
  state text NOT NULL,
  model_id text,
  error_code text,
  schedule_id text,
  inference_cost double precision,
  sign smallint NOT NULL
);
CREATE INDEX run_overview_changes_team ON run_overview_changes (team_uid);

-- One row per team, hour of creation and group, one kind of group each (as the overview's GROUPING SETS):
-- 'runs' (state, model, error code: runs and cost), 'left' (the hour the runs stopped waiting), 'schedule',
-- 'wait' and 'run' (log-spaced bins of queue wait and run time). Columns a kind does not group by are NULL.
CREATE TABLE run_overview_hours (
  team_uid text NOT NULL,
  hour timestamptz NOT NULL,
  kind text NOT NULL,
  left_hour timestamptz,
  state text,
  model_id text,
  error_code text,
  schedule_id text,
  bin integer,
  runs integer NOT NULL,
  -- numeric: totals that are added to and taken from again stay exact
  cost numeric
);
CREATE UNIQUE INDEX run_overview_hours_key ON run_overview_hours
  (team_uid, hour, kind, left_hour, state, model_id, error_code, schedule_id, bin) NULLS NOT DISTINCT;

-- The runs still going, for the part of the overview the rollup does not hold.
CREATE INDEX runs_team_overview_open ON runs (team_uid, created_at)
  INCLUDE (state, started_at, ended_at, model_id, schedule_id, inference_cost, error_code)
  WHERE state IN ('QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS');

-- The current body is in src/runs/lifecycle/functions.sql.
CREATE OR REPLACE FUNCTION hangar_run_overview_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED') THEN
    INSERT INTO run_overview_changes VALUES (OLD.team_uid, OLD.created_at, OLD.started_at, OLD.ended_at, OLD.state,
      OLD.model_id, OLD.error_code, OLD.schedule_id, OLD.inference_cost, -1);
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED') THEN
    INSERT INTO run_overview_changes VALUES (NEW.team_uid, NEW.created_at, NEW.started_at, NEW.ended_at, NEW.state,
      NEW.model_id, NEW.error_code, NEW.schedule_id, NEW.inference_cost, 1);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER runs_overview_inserted AFTER INSERT ON runs FOR EACH ROW
  WHEN (NEW.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED'))
  EXECUTE FUNCTION hangar_run_overview_change();
CREATE TRIGGER runs_overview_updated AFTER UPDATE ON runs FOR EACH ROW
  WHEN ((OLD.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED')
         OR NEW.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED'))
    AND (OLD.state, OLD.team_uid, OLD.created_at, OLD.started_at, OLD.ended_at, OLD.model_id, OLD.error_code,
         OLD.schedule_id, OLD.inference_cost)
      IS DISTINCT FROM (NEW.state, NEW.team_uid, NEW.created_at, NEW.started_at, NEW.ended_at, NEW.model_id,
         NEW.error_code, NEW.schedule_id, NEW.inference_cost))
  EXECUTE FUNCTION hangar_run_overview_change();
CREATE TRIGGER runs_overview_deleted AFTER DELETE ON runs FOR EACH ROW
  WHEN (OLD.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED'))
  EXECUTE FUNCTION hangar_run_overview_change();

-- The runs that ended before this migration.
INSERT INTO run_overview_changes
SELECT team_uid, created_at, started_at, ended_at, state, model_id, error_code, schedule_id, inference_cost, 1
FROM runs WHERE state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED');
