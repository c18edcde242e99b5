-- The current body of every SQL function Hangar uses, once. The migration runner applies this file after the
-- numbered migrations on every start, under the startup lock (replicas starting together would otherwise fail with
-- "tuple concurrently updated"). The numbered migrations keep the functions' history: they are already applied on
-- existing databases and are never edited. To change a function, change it here; a change of its arguments or of
-- its result type needs a numbered migration that drops the old one (CREATE OR REPLACE cannot change them).
-- Triggers stay in the migrations (they name these functions and do not change).

-- Wake-ups (triggers of migration 0007): engines listen on hangar_dispatch for queued runs; live views listen on
-- hangar_run_activity; cancels and follow-ups reach the engine holding the run on hangar_run_control
-- ('<action>:<run id>').
CREATE OR REPLACE FUNCTION hangar_notify_dispatch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hangar_dispatch', '');
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION hangar_notify_run_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hangar_run_activity', NEW.run_id);
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION hangar_notify_run_cancelled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hangar_run_control', 'cancel:' || NEW.id);
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION hangar_notify_run_input() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hangar_run_control', NEW.purpose || ':' || NEW.run_id);
  RETURN NULL;
END $$;

-- The engine's claim takes a run through PENDING to CLAIMED in one statement (QUEUED -> CLAIMED in the
-- transition table, src/runs/lifecycle/states.ts); both timeline events are written. Runs assigned to a self-hosted
-- worker wait in PENDING until the worker takes them (src/runs/lifecycle/claims.ts).
-- Looks `depth` queued runs deep (oldest first) for runs of teams below their limit. A claim wants a few runs,
-- mostly, so it first looks only as deep as it wants runs; it looks `scan` deep only when the runs it passed over
-- belong to teams at their limit while there is room left (looking 1000 runs deep cost every claim about 1 ms of
-- PostgreSQL time per run it returned).
-- Bitmap scans are off inside the claim functions (and the capacity check): the active runs are counted through
-- the partial index runs_active, where every run leaves dead entries behind; a plain index scan marks them so that
-- later scans skip them, a bitmap scan never does (measured: 60,000 dead entries and about 3 ms per claim after
-- 20,000 runs, half of the claim's cost). Nothing there needs a bitmap scan.
CREATE OR REPLACE FUNCTION hangar_claim_runs_at(engine text, lease_seconds integer, per_team integer, global_limit integer, batch integer, depth integer)
RETURNS TABLE (id text, team_uid text, execution_id integer, prompt text, agent_config jsonb, environment_id text,
  conversation_id text, harness text, attachment_count smallint, state text)
LANGUAGE plpgsql VOLATILE SET enable_bitmapscan = off AS $$
#variable_conflict use_column
BEGIN
  -- PL/pgSQL keeps the plan of this query for the session; a LANGUAGE sql function would plan it on every call.
  RETURN QUERY
  WITH active AS (
    SELECT r.team_uid, count(*)::int AS n FROM runs r
    WHERE r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS') AND r.worker_host IS NULL GROUP BY r.team_uid
  ), head AS (
    SELECT r.id, r.team_uid, r.created_at FROM runs r
    WHERE r.state = 'QUEUED' AND r.worker_host IS NULL ORDER BY r.created_at, r.id LIMIT depth
  ), queued AS (
    SELECT h.id, h.team_uid, h.created_at, row_number() OVER (PARTITION BY h.team_uid ORDER BY h.created_at, h.id) AS position
    FROM head h
  ), chosen AS (
    SELECT q.id FROM queued q LEFT JOIN active a ON a.team_uid = q.team_uid
    WHERE coalesce(a.n, 0) + q.position <= per_team
    ORDER BY q.created_at, q.id
    LIMIT greatest(0, least(batch, global_limit - (SELECT coalesce(sum(a.n), 0)::int FROM active a)))
  ), claimed AS (
    UPDATE runs r SET state = 'CLAIMED', lease_owner = engine,
      lease_expires_at = clock_timestamp() + make_interval(secs => lease_seconds), updated_at = clock_timestamp()
    WHERE r.id IN (SELECT l.id FROM runs l WHERE l.id IN (SELECT c.id FROM chosen c) AND l.state = 'QUEUED' FOR UPDATE SKIP LOCKED)
    RETURNING r.id, r.team_uid, r.execution_id, r.prompt, r.agent_config, r.environment_id, r.conversation_id, r.harness,
      r.attachment_count, r.created_at
  ), events AS (
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, c.id, c.execution_id::text, e.event_type, jsonb_build_object('engine', engine)
    FROM claimed c CROSS JOIN (VALUES (1, 'run_dispatched'), (2, 'oz_run_claimed')) AS e(n, event_type)
    ORDER BY c.id, e.n
  )
  SELECT c.id, c.team_uid, c.execution_id, c.prompt, c.agent_config, c.environment_id, c.conversation_id, c.harness,
    c.attachment_count, 'CLAIMED'::text
  FROM claimed c ORDER BY c.created_at, c.id;
END $$;

-- The advisory lock serializes claimers across replicas; the function is VOLATILE, so each query after the lock
-- takes a new snapshot and counts every claim committed before it (and the first pass's): the limits hold exactly.
CREATE OR REPLACE FUNCTION hangar_claim_runs(engine text, lease_seconds integer, per_team integer, global_limit integer, batch integer, scan integer)
RETURNS TABLE (id text, team_uid text, execution_id integer, prompt text, agent_config jsonb, environment_id text,
  conversation_id text, harness text, attachment_count smallint, state text)
LANGUAGE plpgsql VOLATILE SET enable_bitmapscan = off AS $$
#variable_conflict use_column
DECLARE
  taken integer;
  passed_over boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(7240001);
  RETURN QUERY SELECT * FROM hangar_claim_runs_at(engine, lease_seconds, per_team, global_limit, batch, batch);
  GET DIAGNOSTICS taken = ROW_COUNT;
  IF taken >= batch OR scan <= batch THEN RETURN; END IF;
  -- Fewer than wanted: the queue is that short, or the global limit is reached, or runs of teams at their limit
  -- were passed over and runs of other teams may wait behind them.
  SELECT (SELECT count(*) FROM (SELECT 1 FROM runs r WHERE r.state = 'QUEUED' AND r.worker_host IS NULL
            ORDER BY r.created_at, r.id LIMIT batch) head) >= batch
     AND (SELECT count(*) FROM (SELECT 1 FROM runs r WHERE r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
            AND r.worker_host IS NULL LIMIT global_limit) busy) < global_limit
  INTO passed_over;
  IF NOT passed_over THEN RETURN; END IF;
  RETURN QUERY SELECT * FROM hangar_claim_runs_at(engine, lease_seconds, per_team, global_limit, batch - taken, scan);
END $$;

-- A run's usage over its executions (migration 0030): `earlier` (the earlier executions' total, usage_before) plus
-- `latest` (what the current execution reported), key by key; numbers add up (as numeric, so 0.1 + 0.2 stays 0.3) and
-- anything else is the current execution's. NULL when the execution reported nothing, so that callers keep what
-- the run already has (coalesce).
CREATE OR REPLACE FUNCTION hangar_usage_total(earlier jsonb, latest jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN latest IS NULL THEN NULL
    WHEN earlier IS NULL OR jsonb_typeof(earlier) <> 'object' OR jsonb_typeof(latest) <> 'object' THEN latest
    ELSE (SELECT coalesce(jsonb_object_agg(k,
        CASE WHEN jsonb_typeof(earlier -> k) = 'number' AND jsonb_typeof(latest -> k) = 'number'
          THEN to_jsonb((earlier ->> k)::numeric + (latest ->> k)::numeric)
          ELSE coalesce(latest -> k, earlier -> k) END), '{}'::jsonb)
      FROM (SELECT jsonb_object_keys(earlier) UNION SELECT jsonb_object_keys(latest)) keys(k))
  END
$$;

-- Ends executions of one engine in one round trip (it was four: begin, lock, update, commit), with the last
-- transcript lines of those executions. The rows are locked first, in id order: adding a follow-up locks the same
-- row, and in a VOLATILE function each statement takes a new snapshot, so the update after the lock sees every
-- follow-up committed before it. A run with follow-ups waiting after a success or a question is not ended here
-- (nor one that is no longer this engine's): the caller continues or drops those (src/runs/lifecycle/finish.ts).
-- NO KEY UPDATE leaves the foreign-key checks of concurrent event and transcript inserts unblocked.
CREATE OR REPLACE FUNCTION hangar_finish_executions(engine text, ids text[], execution_ids integer[], states text[],
  status_messages text[], usages text[], debug_sessions text[], events text[],
  line_runs text[], line_executions integer[], line_streams text[], lines text[])
RETURNS TABLE (id text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM runs r WHERE r.id = ANY(ids) ORDER BY r.id FOR NO KEY UPDATE;
  INSERT INTO run_transcript (run_id, execution_id, stream, line)
  SELECT * FROM unnest(line_runs, line_executions, line_streams, lines);
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(ids, execution_ids, states, status_messages, usages, debug_sessions, events)
      AS i(id, execution_id, state, status_message, usage, debug_session, events)
  ), ended AS (
    UPDATE runs r SET state = i.state, status_message = i.status_message::jsonb, ended_at = clock_timestamp(),
      updated_at = clock_timestamp(), lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false,
      request_usage = coalesce(hangar_usage_total(r.usage_before, i.usage::jsonb), r.request_usage),
      debug_session = i.debug_session::jsonb
    FROM input i
    WHERE r.id = i.id AND r.lease_owner = engine AND r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
      AND r.execution_id = i.execution_id
      AND (i.state NOT IN ('SUCCEEDED', 'BLOCKED') OR NOT EXISTS (
        SELECT 1 FROM run_inputs w WHERE w.run_id = r.id AND w.purpose = 'agent' AND w.delivered_at IS NULL))
    RETURNING r.id, i.execution_id, i.events
  ), inserted AS (
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, s.id, s.execution_id::text, x.value->>'type', x.value->'payload'
    FROM ended s CROSS JOIN LATERAL jsonb_array_elements(s.events::jsonb) WITH ORDINALITY AS x(value, n)
    ORDER BY s.id, x.n
  )
  SELECT e.id FROM ended e;
END $$;

-- A create answers `at_capacity` from the same index (insertRuns in src/runs/lifecycle/inserts.ts), so it gets the
-- same setting. STABLE: it counts with the snapshot of the statement that creates the run, as the inline count did.
CREATE OR REPLACE FUNCTION hangar_at_capacity(team text, global_limit integer, per_team integer) RETURNS boolean
LANGUAGE sql STABLE SET enable_bitmapscan = off AS $$
  SELECT (SELECT count(*) FROM (SELECT 1 FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
            AND worker_host IS NULL LIMIT global_limit) busy) >= global_limit
      OR (SELECT count(*) FROM (SELECT 1 FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
            AND worker_host IS NULL AND team_uid = team LIMIT per_team) busy) >= per_team
$$;

-- Engine presence (migration 0018). An engine takes this session lock on a connection it keeps for its life, then
-- says so in its row; PostgreSQL releases the lock as soon as that connection closes (the process died, or the
-- connection was cut). The key is the engine's ID hashed: two engines sharing a hash only make a dead one look alive
-- until its leases pass, never the reverse.
CREATE OR REPLACE FUNCTION hangar_lock_engine(engine text) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_lock(7240002, hashtext(engine));
  INSERT INTO engines (id, locked_at, heartbeat_at) VALUES (engine, clock_timestamp(), clock_timestamp())
  ON CONFLICT (id) DO UPDATE SET locked_at = clock_timestamp(), heartbeat_at = clock_timestamp();
END $$;

-- Whether some session of this database holds the engine's lock (pg_locks shows advisory locks to every role).
CREATE OR REPLACE FUNCTION hangar_engine_locked(engine text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 7240002 AND l.objsubid = 2
      AND l.objid::bigint = (hashtext(engine)::bigint & 4294967295)
      AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()))
$$;

-- The overview's rollup (migrations 0027 and 0039, triggers runs_overview_*): one row into run_overview_changes for
-- each change of an ended run, +1 for the run as it is now ended, -1 for the run as it was ended. Insert only, so
-- concurrent run ends never wait on each other; src/runs/lifecycle/overview-rollup.ts folds them per team.
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

-- A run's queue wait and run time (migration 0039, trigger runs_times; docs/lifecycle.md): the first claim is
-- claimed_at, and when an execution whose agent started leaves the active states (it ended, or went back to the
-- queue), its agent's time is added to agent_seconds. Every path that claims or ends a run changes its state, so
-- this is the one place that keeps them, whichever writer (engine, worker hub, API, takeback) moved it.
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
