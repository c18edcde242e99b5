import { sql, type Kysely } from 'kysely';
import type { DB } from '../../database.js';
import { json } from './json.js';
import { ACTIVE_STATES, checkMove, REQUEUABLE_STATES, stateList } from './states.js';

/** Leases: an executor holds its runs while it renews them; a run whose lease passes is taken back. */

const active = stateList(ACTIVE_STATES);

/** Puts an owned run that never reached its agent back in the queue (its executor is going away). */
export async function requeue(
  db: Kysely<DB>,
  run: { id: string; owner: string; executionId: number },
  reason: string,
): Promise<void> {
  checkMove(REQUEUABLE_STATES, 'QUEUED');
  await sql`
    WITH moved AS (
      UPDATE runs SET state = 'QUEUED', lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false, updated_at = clock_timestamp()
      WHERE id = ${run.id} AND lease_owner = ${run.owner} AND state IN (${stateList(REQUEUABLE_STATES)}) RETURNING id
    )
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, id, ${String(run.executionId)}, 'run_requeued', ${json({ reason })} FROM moved`.execute(
    db,
  );
}

/**
 * Extends an owner's leases; returns the runs it still holds (the others were cancelled or taken back). Rows
 * another statement of this owner has locked (a batch ending them) are skipped, not waited for: locking many rows
 * in no particular order could deadlock with that batch. Their leases are renewed on the next round.
 */
export async function renewLeases(
  db: Kysely<DB>,
  owner: string,
  runIds: string[],
  leaseSeconds: number,
): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await sql<{ id: string }>`
    WITH held AS (
      SELECT id FROM runs WHERE id = ANY(${runIds}::text[]) AND lease_owner = ${owner} AND state IN (${active})
    ), renewed AS (
      UPDATE runs SET lease_expires_at = clock_timestamp() + make_interval(secs => ${leaseSeconds})
      WHERE id IN (SELECT id FROM runs WHERE id IN (SELECT id FROM held) FOR NO KEY UPDATE SKIP LOCKED)
        AND lease_owner = ${owner} AND state IN (${active})
    )
    SELECT id FROM held`.execute(db);
  return new Set(rows.rows.map((row) => row.id));
}

const ENGINE_LOST = {
  message: 'The engine executing this run stopped responding; the run may be retried',
  error_code: 'resource_unavailable',
  retryable: true,
};

/**
 * Takes back runs whose executor stopped renewing its lease: a run whose agent had not started goes back to the
 * queue (PENDING or CLAIMED -> QUEUED), one whose agent was running ends ERROR, retryable (INPROGRESS -> ERROR).
 * Safe with every replica doing it at once.
 */
export async function expireLeases(db: Kysely<DB>): Promise<number> {
  checkMove(REQUEUABLE_STATES, 'QUEUED');
  checkMove('INPROGRESS', 'ERROR');
  const result = await sql<{ id: string }>`
    WITH expired AS (
      SELECT id FROM runs
      WHERE state IN (${active}) AND lease_expires_at < clock_timestamp()
      FOR UPDATE SKIP LOCKED
    ), reaped AS (
      UPDATE runs r SET
        state = CASE WHEN r.state = 'INPROGRESS' THEN 'ERROR' ELSE 'QUEUED' END,
        status_message = CASE WHEN r.state = 'INPROGRESS' THEN ${json(ENGINE_LOST)} ELSE r.status_message END,
        ended_at = CASE WHEN r.state = 'INPROGRESS' THEN clock_timestamp() ELSE r.ended_at END,
        lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false, updated_at = clock_timestamp()
      FROM expired WHERE r.id = expired.id
      RETURNING r.id, r.state, r.execution_id
    ), events AS (
      INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
      SELECT gen_random_uuid()::text, id, execution_id::text,
        CASE WHEN state = 'ERROR' THEN 'oz_run_errored' ELSE 'run_requeued' END,
        ${json({ reason: 'lease expired: the engine executing the run stopped responding' })}
      FROM reaped
    )
    SELECT id FROM reaped`.execute(db);
  return result.rows.length;
}

/**
 * After a cancel has stopped the harness: the run no longer has a sandbox. Only while the cancelled execution is
 * still the run's latest and its executor's (a follow-up may have started the next one elsewhere meanwhile).
 */
export async function clearSandboxIfCancelled(
  db: Kysely<DB>,
  owner: string,
  runId: string,
  executionId: number,
): Promise<void> {
  await db
    .updateTable('runs')
    .set({ sandbox_running: false })
    .where('id', '=', runId)
    .where('lease_owner', '=', owner)
    .where('execution_id', '=', executionId)
    .where('state', '=', 'CANCELLED')
    .execute();
}
