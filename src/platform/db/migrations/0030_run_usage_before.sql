-- A continued run's usage is the sum over its executions (issue 29): request_usage was replaced by each
-- execution's figure, so a run continued by follow-ups counted only its last execution toward its spend cap and its
-- team's month. usage_before holds the total of the run's earlier executions, set when the run is queued for its
-- next one; each execution's writes then store usage_before plus its own usage (hangar_usage_total, functions.sql).
ALTER TABLE runs ADD COLUMN usage_before jsonb;
