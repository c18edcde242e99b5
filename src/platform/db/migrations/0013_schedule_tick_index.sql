-- A scheduled run carries both its schedule and its tick, so one index serves the runs list's schedule filter and
-- the one-run-per-tick guarantee; the separate runs_schedule index cost every scheduled run one more index entry
-- (bench/scheduler: 10,000 runs created in the same second).
DROP INDEX runs_schedule;
DROP INDEX runs_schedule_tick;
CREATE UNIQUE INDEX runs_schedule_tick ON runs (schedule_id, schedule_tick) WHERE schedule_id IS NOT NULL;
