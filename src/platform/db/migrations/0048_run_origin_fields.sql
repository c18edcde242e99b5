-- What started a run and where it sits, as columns the runs list reads without a query per run (issue 52, fields
-- 4 and 5): the top of its tree of parent runs, the automation that fired it, the factory whose automation or agent
-- it came from, and the address of what triggered it (a GitHub thread; a path under the public URL for a schedule
-- or a webhook). Set when the run is created (src/runs/create-request.ts) and never changed after.
ALTER TABLE runs
  ADD COLUMN root_run_id text,
  ADD COLUMN automation_id text,
  ADD COLUMN factory_uid text,
  ADD COLUMN trigger_url text;

-- The runs before this migration: their root by walking up their parents (a parent removed by retention ends the
-- walk at the highest run still there), their automation from its firings, their factory from that automation or
-- from the agent that executed them, and a schedule's page for scheduled runs.
UPDATE runs SET root_run_id = id WHERE parent_run_id IS NULL;
WITH RECURSIVE up(run_id, id, parent, depth) AS (
  SELECT id, id, parent_run_id, 0 FROM runs WHERE parent_run_id IS NOT NULL
  UNION ALL
  SELECT up.run_id, r.id, r.parent_run_id, up.depth + 1 FROM up JOIN runs r ON r.id = up.parent WHERE up.depth < 1000
), roots AS (
  SELECT DISTINCT ON (run_id) run_id, id AS root FROM up ORDER BY run_id, depth DESC
)
UPDATE runs SET root_run_id = roots.root FROM roots WHERE roots.run_id = runs.id;

UPDATE runs SET automation_id = f.automation_id, factory_uid = a.factory_uid
FROM automation_firings f JOIN automations a ON a.id = f.automation_id
WHERE f.run_id = runs.id;

UPDATE runs SET factory_uid = g.factory_uid
FROM agent_identities g
WHERE runs.factory_uid IS NULL AND g.uid = runs.executor_uid AND g.factory_uid IS NOT NULL;

UPDATE runs SET trigger_url = '/schedules#' || schedule_id WHERE schedule_id IS NOT NULL;

CREATE INDEX runs_automation ON runs (automation_id, updated_at) WHERE automation_id IS NOT NULL;
CREATE INDEX runs_factory ON runs (factory_uid, updated_at) WHERE factory_uid IS NOT NULL;
