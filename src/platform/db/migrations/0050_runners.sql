-- Runners (issue 52, field 3): a team's named sandbox kind and shape (CPU, memory, processes; a runtime class and a
-- pod template under Kubernetes) that runs execute with. A run names one as config.runner_id, or takes its agent's
-- default, then its environment's (config.default_runner_uid of the environment); none: the operator's settings.
-- The resolved runner is recorded on the run (its agent_config), so an edit changes later runs only.
CREATE TABLE runners (
  uid text PRIMARY KEY CHECK (uid ~ '^[A-Za-z0-9]{22}$'),
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  -- {sandbox?, limits?: {cpus?, memory?, pids?}, kubernetes?: {runtime_class_name?, pod_template?}}, checked by the API.
  shape jsonb NOT NULL DEFAULT '{}',
  -- Set when a factory definition (runners/<name>.yaml) manages the runner.
  factory_uid text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT runners_team_uid_name_key UNIQUE (team_uid, name)
);

-- An agent identity's default runner (Oz's default_runner_uid), a runner of its team. Not a foreign key: a deleted
-- runner leaves the name, and a run that would take it is refused with the reason (so nothing silently runs smaller).
ALTER TABLE agent_identities ADD COLUMN default_runner_uid text;
