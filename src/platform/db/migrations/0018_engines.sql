-- Engines as a whole (issue 23): a replica whose process dies loses its runs at once, not when their leases pass.
-- Each engine has a row here and, on PostgreSQL, holds a session advisory lock (hangar_lock_engine in
-- src/runs/lifecycle/functions.sql) on a connection of its own for as long as it lives. PostgreSQL releases the
-- lock the moment that connection closes, so another replica that finds the lock free and the heartbeat stale
-- takes the engine's runs back (src/runs/lifecycle/leases.ts). `locked_at` tells a lock lost with its process
-- from one every engine lost together in a database restart (before the restart: not evidence of anything).
CREATE TABLE engines (
  id text PRIMARY KEY,
  locked_at timestamptz,
  heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
