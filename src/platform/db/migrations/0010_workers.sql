-- Self-hosted workers: presence of their websocket connections, the skills they report, and their queue.

-- One row per open worker connection, kept by the replica holding it (last_seen_at moves with heartbeats). A
-- replica that dies leaves its rows behind: readers ignore rows not seen for a while and replicas delete them.
CREATE TABLE worker_connections (
  id text PRIMARY KEY,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  worker_host text NOT NULL,
  replica text NOT NULL,
  connected_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_seen_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX worker_connections_team ON worker_connections (team_uid, worker_host);

-- Skills a worker found in its directories; replaced as a whole each time the worker reports them.
CREATE TABLE worker_skills (
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  worker_host text NOT NULL,
  skill_path text NOT NULL,
  name text NOT NULL,
  description text NOT NULL,
  base_prompt text NOT NULL,
  reported_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (team_uid, worker_host, skill_path)
);

-- Runs waiting for a worker, claimed per (team, worker) by the replica holding one of its connections.
CREATE INDEX runs_worker_queue ON runs (team_uid, worker_host, created_at, id) WHERE state = 'QUEUED' AND worker_host IS NOT NULL;

-- Worker runs execute on the team's own machines: they no longer count against the limits of Hangar's engines.
CREATE OR REPLACE FUNCTION hangar_claim_runs(engine text, lease_seconds integer, per_team integer, global_limit integer, batch integer, scan integer)
RETURNS TABLE (id text, team_uid text, execution_id integer, prompt text, agent_config jsonb, environment_id text,
  conversation_id text, harness text)
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
    RETURNING r.id, r.team_uid, r.execution_id, r.prompt, r.agent_config, r.environment_id, r.conversation_id, r.harness, r.created_at
  ), events AS (
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, c.id, c.execution_id::text, 'run_dispatched', jsonb_build_object('engine', engine) FROM claimed c
  )
  SELECT c.id, c.team_uid, c.execution_id, c.prompt, c.agent_config, c.environment_id, c.conversation_id, c.harness
  FROM claimed c ORDER BY c.created_at, c.id;
END $$;
