-- One definition each of a run's queue wait and run time (issue 48; docs/lifecycle.md, "Queue wait and run time"),
-- kept as columns so the API, the CLI, the dashboard and the overview's rollup read the same figures:
--   queue wait: from the run's creation to its first claim (claimed_at);
--   run time: the time its agent worked, each execution from its agent's start to its end, summed (agent_seconds
--     for the executions that ended, plus the one executing now since agent_started_at). The time between an end
--     and a follow-up's execution, the queue and the setup are not in it.
-- Before, the overview took the queue wait up to the agent's start (setup included: 455 ms where the run's page
-- said 35 ms), and run time from the first agent start to the last end (a follow-up made an agent that worked
-- under a second read 14 min); a run that never started, or was still executing, counted in the lowest bin
-- (greatest(NULL, 0) is 0).
ALTER TABLE runs
  ADD COLUMN claimed_at timestamptz,
  ADD COLUMN agent_started_at timestamptz,
  ADD COLUMN agent_seconds double precision;
ALTER TABLE run_overview_changes
  ADD COLUMN claimed_at timestamptz,
  ADD COLUMN agent_seconds double precision;

-- The current bodies are in src/runs/lifecycle/functions.sql.
CREATE OR REPLACE FUNCTION hangar_run_times() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.claimed_at IS NULL AND NEW.state IN ('CLAIMED', 'INPROGRESS') THEN
    NEW.claimed_at := clock_timestamp();
  END IF;
  IF NEW.agent_started_at IS NOT NULL AND NEW.state NOT IN ('PENDING', 'CLAIMED', 'INPROGRESS') THEN
    NEW.agent_seconds := coalesce(NEW.agent_seconds, 0)
      + greatest(0, date_part('epoch', coalesce(NEW.ended_at, clock_timestamp()) - NEW.agent_started_at));
    NEW.agent_started_at := NULL;
  END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION hangar_run_overview_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED') THEN
    INSERT INTO run_overview_changes (team_uid, created_at, started_at, ended_at, state, model_id, error_code,
      schedule_id, inference_cost, sign, claimed_at, agent_seconds)
    VALUES (OLD.team_uid, OLD.created_at, OLD.started_at, OLD.ended_at, OLD.state, OLD.model_id, OLD.error_code,
      OLD.schedule_id, OLD.inference_cost, -1, OLD.claimed_at, OLD.agent_seconds);
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED') THEN
    INSERT INTO run_overview_changes (team_uid, created_at, started_at, ended_at, state, model_id, error_code,
      schedule_id, inference_cost, sign, claimed_at, agent_seconds)
    VALUES (NEW.team_uid, NEW.created_at, NEW.started_at, NEW.ended_at, NEW.state, NEW.model_id, NEW.error_code,
      NEW.schedule_id, NEW.inference_cost, 1, NEW.claimed_at, NEW.agent_seconds);
  END IF;
  RETURN NULL;
END $$;

-- The past, from the timeline: the first claim, and each execution's agent time (its agent_started to its end
-- event). Written with the rollup's trigger off: the rollup is rebuilt below.
DROP TRIGGER runs_overview_updated ON runs;
UPDATE runs r SET claimed_at = c.at
FROM (SELECT run_id, min(occurred_at) AS at FROM run_events WHERE event_type = 'oz_run_claimed' GROUP BY run_id) c
WHERE c.run_id = r.id;
WITH executions AS (
  SELECT run_id, execution_id,
         min(occurred_at) FILTER (WHERE event_type = 'agent_started') AS started,
         max(occurred_at) FILTER (WHERE event_type IN ('oz_run_done', 'oz_run_failed', 'oz_run_errored',
                                                       'oz_run_blocked', 'oz_run_cancelled')) AS ended
  FROM run_events
  WHERE event_type IN ('agent_started', 'oz_run_done', 'oz_run_failed', 'oz_run_errored', 'oz_run_blocked',
                       'oz_run_cancelled')
  GROUP BY run_id, execution_id
), worked AS (
  SELECT run_id, sum(greatest(0, date_part('epoch', ended - started))) FILTER (WHERE ended IS NOT NULL) AS seconds,
         max(started) FILTER (WHERE ended IS NULL) AS executing_since
  FROM executions WHERE started IS NOT NULL
  GROUP BY run_id
)
UPDATE runs r SET agent_seconds = w.seconds,
  agent_started_at = CASE WHEN r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS') THEN w.executing_since END
FROM worked w WHERE w.run_id = r.id;
-- Runs whose timeline is gone: the old figure, first agent start to the end.
UPDATE runs SET agent_seconds = greatest(0, date_part('epoch', ended_at - started_at))
WHERE agent_seconds IS NULL AND started_at IS NOT NULL AND ended_at IS NOT NULL;
UPDATE runs SET claimed_at = started_at WHERE claimed_at IS NULL AND started_at IS NOT NULL;

CREATE TRIGGER runs_times BEFORE UPDATE ON runs FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION hangar_run_times();
CREATE TRIGGER runs_overview_updated AFTER UPDATE ON runs FOR EACH ROW
  WHEN ((OLD.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED')
         OR NEW.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED'))
    AND (OLD.state, OLD.team_uid, OLD.created_at, OLD.started_at, OLD.ended_at, OLD.model_id, OLD.error_code,
         OLD.schedule_id, OLD.inference_cost, OLD.claimed_at, OLD.agent_seconds)
      IS DISTINCT FROM (NEW.state, NEW.team_uid, NEW.created_at, NEW.started_at, NEW.ended_at, NEW.model_id,
         NEW.error_code, NEW.schedule_id, NEW.inference_cost, NEW.claimed_at, NEW.agent_seconds))
  EXECUTE FUNCTION hangar_run_overview_change();

-- The rollup again, from every ended run: its bins were of the old definitions, and a run with no start or end
-- had been put in the lowest.
DELETE FROM run_overview_hours;
DELETE FROM run_overview_changes;
INSERT INTO run_overview_changes (team_uid, created_at, started_at, ended_at, state, model_id, error_code, schedule_id,
  inference_cost, sign, claimed_at, agent_seconds)
SELECT team_uid, created_at, started_at, ended_at, state, model_id, error_code, schedule_id, inference_cost, 1,
  claimed_at, agent_seconds
FROM runs WHERE state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED');

-- The runs still going, as the overview reads them: the partial index covers the new columns too.
DROP INDEX runs_team_overview_open;
CREATE INDEX runs_team_overview_open ON runs (team_uid, created_at)
  INCLUDE (state, claimed_at, agent_seconds, started_at, ended_at, model_id, schedule_id, inference_cost, error_code)
  WHERE state IN ('QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS');
