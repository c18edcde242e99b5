-- Traces (issue 27): the W3C traceparent of the request (or scheduler pass, or webhook evaluation) that created a
-- run, when tracing is on. The execution's spans are children of it, on the server's engine and on a self-hosted
-- worker alike, so a run's trace starts at the request that asked for it. NULL with tracing off.
ALTER TABLE runs ADD COLUMN trace_parent text;
