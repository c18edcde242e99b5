-- Custom webhooks and automations: factories own webhooks and automations; deliveries are logged and, once
-- accepted, turned into runs by the automation evaluator (an outbox: the ingress only commits the delivery).

CREATE TABLE factories (
  uid text PRIMARY KEY CHECK (uid ~ '^[A-Za-z0-9]{22}$'),
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  name text NOT NULL,
  -- The factory that webhooks and automations created without a factory_uid go to.
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (team_uid, name)
);
CREATE UNIQUE INDEX factories_default ON factories (team_uid) WHERE is_default;

-- What a definition directory (hangar factory apply) manages besides webhooks and automations: agent identities
-- (marked with their factory) and skills (kept here, named `<factory>:skills/<name>/SKILL.md`).
ALTER TABLE factories ADD COLUMN description text;
ALTER TABLE agent_identities ADD COLUMN factory_uid text REFERENCES factories (uid) ON DELETE SET NULL;
CREATE TABLE factory_skills (
  factory_uid text NOT NULL REFERENCES factories (uid) ON DELETE CASCADE,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL,
  prompt text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (factory_uid, name)
);
CREATE INDEX factory_skills_team ON factory_skills (team_uid);

-- The secret is either the webhook's own (AES-256-GCM ciphertext, as team secrets) or a team secret named by
-- secret_name, read at each delivery so that rotating the team secret takes effect at once.
CREATE TABLE webhooks (
  uid text PRIMARY KEY CHECK (uid ~ '^[A-Za-z0-9]{22}$'),
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  factory_uid text NOT NULL REFERENCES factories (uid) ON DELETE CASCADE,
  name text NOT NULL,
  auth_mode text NOT NULL CHECK (auth_mode IN ('token', 'url_token', 'signature')),
  signature_scheme text CHECK (signature_scheme IN ('github', 'stripe', 'standard_webhooks', 'sentry', 'pagerduty', 'vercel')),
  secret_iv bytea,
  secret_auth_tag bytea,
  secret_ciphertext bytea,
  secret_name text,
  delivery_id_header text,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (factory_uid, name),
  CHECK ((secret_name IS NULL) <> (secret_ciphertext IS NULL)),
  CHECK ((auth_mode = 'signature') = (signature_scheme IS NOT NULL))
);
CREATE INDEX webhooks_team ON webhooks (team_uid, name);

-- Every delivery, accepted or not. Only accepted ones keep their body (the raw JSON text, byte for byte).
CREATE TABLE webhook_deliveries (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_uid text NOT NULL REFERENCES webhooks (uid) ON DELETE CASCADE,
  delivery_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('Accepted', 'Duplicate', 'Rejected (auth)', 'Rejected (invalid JSON)', 'Rejected (too large)')),
  size_bytes integer NOT NULL,
  received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  body text,
  -- Accepted deliveries wait with NULL here until the evaluator has started their runs.
  evaluated_at timestamptz
);
-- One accepted delivery per identity: a second one, however concurrent, finds the first and is a Duplicate.
CREATE UNIQUE INDEX webhook_deliveries_identity ON webhook_deliveries (webhook_uid, delivery_id) WHERE status = 'Accepted';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_uid, seq DESC);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (seq) WHERE status = 'Accepted' AND evaluated_at IS NULL;

-- Ingress rate limits, kept here so that they hold across replicas: per webhook and sender, counters per kind
-- ('delivery', 'auth_failure') and minute. Each counter is split over a few shards that deliveries pick at
-- random and readers sum: one busy sender would otherwise queue every delivery behind one row lock.
CREATE TABLE webhook_rate_windows (
  webhook_uid text NOT NULL,
  sender text NOT NULL,
  kind text NOT NULL,
  window_start timestamptz NOT NULL,
  shard smallint NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (webhook_uid, sender, window_start, kind, shard)
);

CREATE TABLE automations (
  id text PRIMARY KEY,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  factory_uid text NOT NULL REFERENCES factories (uid) ON DELETE CASCADE,
  name text NOT NULL,
  prompt text NOT NULL,
  enabled boolean NOT NULL,
  agent_uid text,
  agent_config jsonb,
  triggers jsonb NOT NULL,
  -- Every webhook UID a trigger selects, so that the evaluator finds a delivery's automations with an index.
  webhook_uids text[] NOT NULL DEFAULT '{}',
  created_by_uid text NOT NULL,
  updated_by_uid text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (factory_uid, name)
);
CREATE INDEX automations_team ON automations (team_uid, name);
CREATE INDEX automations_webhooks ON automations USING gin (webhook_uids);

-- What the evaluator did with an accepted delivery, per automation that matched: the run, or why none started.
-- Written in the transaction that marks the delivery evaluated, so a delivery starts each run exactly once.
CREATE TABLE automation_firings (
  delivery_seq bigint NOT NULL REFERENCES webhook_deliveries (seq) ON DELETE CASCADE,
  automation_id text NOT NULL,
  run_id text,
  error text,
  PRIMARY KEY (delivery_seq, automation_id)
);

-- Automations' cron triggers are schedules the scheduler fires; they belong to the automation, not to the
-- schedules API.
ALTER TABLE schedules ADD COLUMN automation_id text REFERENCES automations (id) ON DELETE CASCADE;

-- Files given with a run (API attachments, a delivery's payload) are written into its workspace; the count
-- comes with the claim, so runs without any cost no extra query.
ALTER TABLE runs ADD COLUMN attachment_count smallint NOT NULL DEFAULT 0;

DROP FUNCTION hangar_claim_runs(text, integer, integer, integer, integer, integer);
CREATE FUNCTION hangar_claim_runs(engine text, lease_seconds integer, per_team integer, global_limit integer, batch integer, scan integer)
RETURNS TABLE (id text, team_uid text, execution_id integer, prompt text, agent_config jsonb, environment_id text,
  conversation_id text, harness text, attachment_count smallint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(7240001);
  RETURN QUERY
  WITH active AS (
    SELECT r.team_uid, count(*)::int AS n FROM runs r
    WHERE r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS') AND r.worker_host IS NULL GROUP BY r.team_uid
  ), head AS (
    SELECT r.id, r.team_uid, r.created_at FROM runs r
    WHERE r.state = 'QUEUED' AND r.worker_host IS NULL ORDER BY r.created_at, r.id LIMIT scan
  ), queued AS (
    SELECT h.id, h.team_uid, h.created_at, row_number() OVER (PARTITION BY h.team_uid ORDER BY h.created_at, h.id) AS position
    FROM head h
  ), chosen AS (
    SELECT q.id FROM queued q LEFT JOIN active a ON a.team_uid = q.team_uid
    WHERE coalesce(a.n, 0) + q.position <= per_team
    ORDER BY q.created_at, q.id
    LIMIT greatest(0, least(batch, global_limit - (SELECT coalesce(sum(a.n), 0)::int FROM active a)))
  ), claimed AS (
    UPDATE runs r SET state = 'PENDING', lease_owner = engine,
      lease_expires_at = clock_timestamp() + make_interval(secs => lease_seconds), updated_at = clock_timestamp()
    WHERE r.id IN (SELECT l.id FROM runs l WHERE l.id IN (SELECT c.id FROM chosen c) AND l.state = 'QUEUED' FOR UPDATE SKIP LOCKED)
    RETURNING r.id, r.team_uid, r.execution_id, r.prompt, r.agent_config, r.environment_id, r.conversation_id, r.harness,
      r.attachment_count, r.created_at
  ), events AS (
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, c.id, c.execution_id::text, 'run_dispatched', jsonb_build_object('engine', engine) FROM claimed c
  )
  SELECT c.id, c.team_uid, c.execution_id, c.prompt, c.agent_config, c.environment_id, c.conversation_id, c.harness,
    c.attachment_count
  FROM claimed c ORDER BY c.created_at, c.id;
END $$;
