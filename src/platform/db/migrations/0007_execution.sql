-- Execution engine: claims and leases on runs, follow-up inputs, the raw transcript, and wake-ups.

-- execution_id: the run's current execution (a follow-up after the run ended starts the next one).
-- lease_owner / lease_expires_at: the engine executing it; a lease that is not renewed expires and the run is
-- requeued (agent not started yet) or ends ERROR. debug_session: a workspace kept after a failed environment
-- setup ({owner, workspace, until}).
ALTER TABLE runs
  ADD COLUMN execution_id integer NOT NULL DEFAULT 1,
  ADD COLUMN harness text,
  ADD COLUMN lease_owner text,
  ADD COLUMN lease_expires_at timestamptz,
  ADD COLUMN sandbox_running boolean NOT NULL DEFAULT false,
  ADD COLUMN debug_session jsonb;

CREATE INDEX runs_dispatch ON runs (created_at, id) WHERE state = 'QUEUED' AND worker_host IS NULL;
CREATE INDEX runs_active ON runs (team_uid) WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS');
CREATE INDEX runs_leases ON runs (lease_expires_at) WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS');

-- Follow-up messages. execution_id is the execution meant to take it; delivered_at is set when a harness got it.
CREATE TABLE run_inputs (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  execution_id integer NOT NULL,
  purpose text NOT NULL DEFAULT 'agent' CHECK (purpose IN ('agent', 'debug')),
  message text NOT NULL,
  mode text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  delivered_at timestamptz
);
CREATE INDEX run_inputs_pending ON run_inputs (run_id, seq) WHERE delivered_at IS NULL;

-- The raw harness stream, line by line: what went in (the task, follow-ups) and what came out.
CREATE TABLE run_transcript (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  execution_id integer NOT NULL,
  stream text NOT NULL CHECK (stream IN ('input', 'output')),
  line text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX run_transcript_run ON run_transcript (run_id, seq);

-- Wake-ups: engines listen on hangar_dispatch for queued runs; live views listen on hangar_run_activity.
-- New runs are announced by the application after their insert commits (Bus.announceDispatch), not by a
-- trigger: a transaction that sent a NOTIFY holds a cluster-wide lock through its commit, which would serialize
-- every concurrent create on one WAL flush each. Rarer transitions keep their triggers.
CREATE FUNCTION hangar_notify_dispatch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hangar_dispatch', '');
  RETURN NULL;
END $$;
CREATE TRIGGER runs_queued_update AFTER UPDATE OF state ON runs
  FOR EACH ROW WHEN (NEW.state = 'QUEUED' AND OLD.state <> 'QUEUED') EXECUTE FUNCTION hangar_notify_dispatch();
-- A run leaving the active states frees capacity for the next queued one.
CREATE TRIGGER runs_capacity_freed AFTER UPDATE OF state ON runs
  FOR EACH ROW WHEN (OLD.state IN ('PENDING', 'CLAIMED', 'INPROGRESS') AND NEW.state NOT IN ('PENDING', 'CLAIMED', 'INPROGRESS'))
  EXECUTE FUNCTION hangar_notify_dispatch();

CREATE FUNCTION hangar_notify_run_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hangar_run_activity', NEW.run_id);
  RETURN NULL;
END $$;
-- A run being created has no one watching it yet (a live view reads what exists before it waits).
CREATE TRIGGER run_events_activity AFTER INSERT ON run_events
  FOR EACH ROW WHEN (NEW.event_type <> 'oz_run_created') EXECUTE FUNCTION hangar_notify_run_activity();
CREATE TRIGGER run_transcript_activity AFTER INSERT ON run_transcript
  FOR EACH ROW EXECUTE FUNCTION hangar_notify_run_activity();

-- Cancels and follow-ups reach the engine holding the run: payload is '<action>:<run id>'.
CREATE FUNCTION hangar_notify_run_cancelled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hangar_run_control', 'cancel:' || NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER runs_cancelled AFTER UPDATE OF state ON runs
  FOR EACH ROW WHEN (NEW.state = 'CANCELLED' AND OLD.state <> 'CANCELLED') EXECUTE FUNCTION hangar_notify_run_cancelled();

CREATE FUNCTION hangar_notify_run_input() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hangar_run_control', NEW.purpose || ':' || NEW.run_id);
  RETURN NULL;
END $$;
CREATE TRIGGER run_inputs_added AFTER INSERT ON run_inputs
  FOR EACH ROW EXECUTE FUNCTION hangar_notify_run_input();

-- Claims up to `batch` queued runs for an engine, oldest first, without passing the global or per-team limit of
-- active runs (PENDING, CLAIMED, INPROGRESS); looks `scan` runs deep for teams below their limit. One round trip
-- on the pickup path. The advisory lock serializes claimers across replicas; the function is VOLATILE, so the
-- query after the lock takes a new snapshot and counts every claim committed before it: the limits hold exactly.
CREATE FUNCTION hangar_claim_runs(engine text, lease_seconds integer, per_team integer, global_limit integer, batch integer, scan integer)
RETURNS TABLE (id text, team_uid text, execution_id integer, prompt text, agent_config jsonb, environment_id text,
  conversation_id text, harness text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(7240001);
  RETURN QUERY
  WITH active AS (
    SELECT r.team_uid, count(*)::int AS n FROM runs r WHERE r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS') GROUP BY r.team_uid
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
    RETURNING r.id, r.team_uid, r.execution_id, r.prompt, r.agent_config, r.environment_id, r.conversation_id, r.harness, r.created_at
  ), events AS (
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, c.id, c.execution_id::text, 'run_dispatched', jsonb_build_object('engine', engine) FROM claimed c
  )
  SELECT c.id, c.team_uid, c.execution_id, c.prompt, c.agent_config, c.environment_id, c.conversation_id, c.harness
  FROM claimed c ORDER BY c.created_at, c.id;
END $$;
