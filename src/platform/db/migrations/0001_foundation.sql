-- Foundation: teams, users, API keys, runs and their timeline.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Instance-wide values generated once (for example the key that signs pagination cursors).
CREATE TABLE instance_settings (
  key text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE teams (
  uid text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE users (
  uid text PRIMARY KEY,
  display_name text NOT NULL,
  email text UNIQUE,
  is_admin boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE team_members (
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  user_uid text NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (team_uid, user_uid)
);
CREATE INDEX team_members_user ON team_members (user_uid);

-- Only the SHA-256 of a key is stored; the key itself is shown once at creation.
CREATE TABLE api_keys (
  uid text PRIMARY KEY,
  key_hash text NOT NULL UNIQUE,
  display_prefix text NOT NULL,
  name text NOT NULL,
  user_uid text NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at timestamptz
);

CREATE TABLE environments (
  uid text PRIMARY KEY CHECK (uid ~ '^[A-Za-z0-9]{22}$'),
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  config jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX environments_team ON environments (team_uid);

CREATE TABLE agent_identities (
  uid text PRIMARY KEY,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX agent_identities_team ON agent_identities (team_uid);

CREATE TABLE runs (
  id text PRIMARY KEY,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  title text NOT NULL,
  prompt text NOT NULL,
  state text NOT NULL CHECK (state IN ('QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS', 'SUCCEEDED', 'FAILED',
                                       'BLOCKED', 'ERROR', 'CANCELLED')),
  source text NOT NULL,
  execution_location text NOT NULL CHECK (execution_location IN ('LOCAL', 'REMOTE')),
  mode text NOT NULL DEFAULT 'normal',
  scope_type text NOT NULL CHECK (scope_type IN ('User', 'Team')),
  scope_uid text NOT NULL,
  agent_config jsonb NOT NULL DEFAULT '{}',
  config_name text,
  model_id text,
  skill_spec text,
  environment_id text,
  worker_host text,
  schedule jsonb,
  schedule_id text,
  parent_run_id text REFERENCES runs (id) ON DELETE SET NULL,
  conversation_id text,
  creator_type text NOT NULL CHECK (creator_type IN ('user', 'service_account')),
  creator_uid text NOT NULL,
  executor_type text NOT NULL CHECK (executor_type IN ('user', 'service_account')),
  executor_uid text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  interactive boolean NOT NULL DEFAULT false,
  status_message jsonb,
  request_usage jsonb,
  session_id text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at timestamptz,
  ended_at timestamptz,
  -- What the fuzzy search (q) looks at: title, the head of the prompt, and the skill spec.
  search_text text GENERATED ALWAYS AS (
    lower(title || ' ' || left(prompt, 2000) || ' ' || coalesce(skill_spec, ''))
  ) STORED
);

-- Keyset pagination: one index per sort, each ending in the id tie-breaker.
CREATE INDEX runs_team_updated ON runs (team_uid, updated_at DESC, id DESC);
CREATE INDEX runs_team_created ON runs (team_uid, created_at DESC, id DESC);
CREATE INDEX runs_team_title ON runs (team_uid, title, id);
CREATE INDEX runs_team_skill ON runs (team_uid, (skill_spec IS NULL), skill_spec, id);
CREATE INDEX runs_team_state ON runs (team_uid, state, updated_at DESC);
CREATE INDEX runs_schedule ON runs (schedule_id) WHERE schedule_id IS NOT NULL;
CREATE INDEX runs_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX runs_environment ON runs (team_uid, environment_id);
CREATE INDEX runs_conversation ON runs (conversation_id) WHERE conversation_id IS NOT NULL;
CREATE INDEX runs_metadata ON runs USING gin (metadata jsonb_path_ops);
CREATE INDEX runs_search ON runs USING gin (search_text gin_trgm_ops);

CREATE TABLE run_attachments (
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  position integer NOT NULL,
  file_name text NOT NULL,
  mime_type text NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (run_id, position)
);

CREATE TABLE run_events (
  event_uuid text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  execution_id text,
  event_type text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  payload jsonb
);
CREATE INDEX run_events_run ON run_events (run_id, seq);

CREATE TABLE artifacts (
  uid text PRIMARY KEY,
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  artifact_type text NOT NULL CHECK (artifact_type IN ('PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE',
                                                       'EXTERNAL_REFERENCE')),
  data jsonb NOT NULL DEFAULT '{}',
  is_public boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX artifacts_run ON artifacts (run_id, artifact_type);
