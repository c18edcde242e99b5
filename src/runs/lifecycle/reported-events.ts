import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';

/**
 * A timeline event an agent reports about its own run (POST /agent/events/{runId}: orchestration signals such as
 * "waiting for my children"). It joins the run's timeline like the lifecycle's own events and takes the next
 * sequence of run_events, so GET /agent/events pages over both with one cursor. `reported: true` in its payload
 * tells it from what Hangar itself recorded.
 */
export async function insertReportedEvent(
  db: Kysely<DB>,
  event: { runId: string; executionId: number; eventType: string; refId: string | null },
): Promise<number> {
  const row = await db
    .insertInto('run_events')
    .values({
      event_uuid: crypto.randomUUID(),
      run_id: event.runId,
      execution_id: String(event.executionId),
      event_type: event.eventType,
      payload: JSON.stringify({ reported: true, ...(event.refId ? { ref_id: event.refId } : {}) }),
    })
    .returning('seq')
    .executeTakeFirstOrThrow();
  return Number(row.seq);
}
