-- The claim counts the active runs of each team through the partial index runs_active. Every run passes through
-- it (CLAIMED, INPROGRESS) and leaves a dead entry behind each time. A plain index scan marks dead entries it meets
-- so that later scans skip them; a bitmap scan, which the planner tends to pick for this count, never does, and
-- visits all of them until VACUUM (measured: 60,000 dead entries and about 3 ms per claim after 20,000 runs, half of
-- the claim's cost). Inside the claim functions only, bitmap scans are off; nothing there needs one.
ALTER FUNCTION hangar_claim_runs_at(text, integer, integer, integer, integer, integer) SET enable_bitmapscan = off;
ALTER FUNCTION hangar_claim_runs(text, integer, integer, integer, integer, integer) SET enable_bitmapscan = off;
