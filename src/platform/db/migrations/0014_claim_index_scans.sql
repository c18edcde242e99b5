-- The claim counts the active runs of each team through the partial index runs_active. Every run passes through
-- it (CLAIMED, INPROGRESS) and leaves a dead entry behind each time. A plain index scan marks dead entries it meets
-- so that later scans skip them; a bitmap scan, which the planner tends to pick for this count, never does, and
-- visits all of them until VACUUM (measured: 60,000 dead entries and about 3 ms per claim after 20,000 runs, half of
-- the claim's cost). Inside the claim functions only, bitmap scans are off; nothing there needs one.
ALTER FUNCTION hangar_claim_runs_at(text, integer, integer, integer, integer, integer) SET enable_bitmapscan = off;
ALTER FUNCTION hangar_claim_runs(text, integer, integer, integer, integer, integer) SET enable_bitmapscan = off;

-- A create answers `at_capacity` from the same index (insertRuns in src/runs/store.ts), so it gets the same
-- setting. STABLE: it counts with the snapshot of the statement that creates the run, as the inline count did.
CREATE FUNCTION hangar_at_capacity(team text, global_limit integer, per_team integer) RETURNS boolean
LANGUAGE sql STABLE SET enable_bitmapscan = off AS $$
  SELECT (SELECT count(*) FROM (SELECT 1 FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
            AND worker_host IS NULL LIMIT global_limit) busy) >= global_limit
      OR (SELECT count(*) FROM (SELECT 1 FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
            AND worker_host IS NULL AND team_uid = team LIMIT per_team) busy) >= per_team
$$;
