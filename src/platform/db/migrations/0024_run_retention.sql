-- Run retention (issue 29, HANGAR_RUN_RETENTION_DAYS): ended runs are found by when they ended, oldest first,
-- a bounded batch at a time, without scanning the runs still going.
CREATE INDEX runs_ended_at ON runs (ended_at) WHERE ended_at IS NOT NULL;
