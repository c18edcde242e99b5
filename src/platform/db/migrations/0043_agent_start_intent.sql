-- The execution whose agent an engine is about to start (issue 48 item 6.1). Starting a process and recording that it
-- started cannot be one step: an engine that died between the spawn and the record left a run CLAIMED, its takeback
-- queued it again as never started, and another engine ran its agent a second time. The intent is recorded before the
-- spawn; a run taken back with an intent for its current execution and no recorded start may have run, so it ends
-- ERROR (retryable) instead of going back to the queue.
ALTER TABLE runs ADD COLUMN agent_start_intent integer;
