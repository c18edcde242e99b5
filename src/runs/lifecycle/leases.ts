import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { json } from './json.js';
import { stateList } from './state-sql.js';
import { ACTIVE_STATES, transition } from './states.js';

/** Leases: an executor holds its runs while it renews them; a run whose lease passes is taken back. */

const active = stateList(ACTIVE_STATES);

/** Puts an owned run that never reached its agent back in the queue (its executor is going away); false if it had moved on. */
export async function requeue(
  db: Kysely<DB>,
  run: { id: string; owner: string; executionId: number },
  reason: string,
): Promise<boolean> {
  const move = transition('requeue');
  const result = await sql`
    WITH moved AS (
      UPDATE runs SET state = ${stateList([move.to])}, lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false,
        agent_start_intent = NULL, updated_at = clock_timestamp()
      WHERE id = ${run.id} AND lease_owner = ${run.owner} AND state IN (${stateList(move.from)}) RETURNING id
    )
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, id, ${String(run.executionId)}, ${sql.lit(move.event)}, ${json({ reason })} FROM moved`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0) > 0;
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

/** A run whose engine went away as it started the agent: the agent may have run, so it is not run again in silence. */
const LOST_AS_AGENT_STARTED = {
  message:
    'The engine executing this run stopped responding as the agent was starting; the agent may have run, so the run was not queued again. It may be retried',
  error_code: 'resource_unavailable',
  retryable: true,
};

export interface TakebackOptions {
  /**
   * How long an engine's heartbeat may be stale, with its lock free, before it counts as gone: a guard for an
   * engine whose lock connection alone was cut (it takes the lock again at once and heartbeats through its pool).
   */
  graceSeconds: number;
  /** The only engine that can be alive (PGlite: one process per data directory); every other one is gone. */
  soleEngine?: string | undefined;
}

export interface Takeback {
  /** Runs taken back by this pass. */
  taken: number;
  /** Of those, the ones back in the queue (their agent had not started). */
  requeued: string[];
  /** Of those, the ones that ended ERROR (their agent was running, or may have been: see below). */
  errored: string[];
  /** Milliseconds until the earliest lease of a run still active passes (negative: passed, row busy); null: none. */
  nextExpiryInMs: number | null;
}

/**
 * Takes back runs whose executor is gone: an engine whose lock is free and heartbeat stale (its process died) or
 * that cannot be alive (`soleEngine`), and any executor that stopped renewing its lease. A run whose agent had not
 * started goes back to the queue (PENDING or CLAIMED -> QUEUED), one whose agent was running ends ERROR, retryable
 * (INPROGRESS -> ERROR): the moves named `requeue` and `lose`. Gone engines whose runs are all taken back are forgotten. Says when the earliest remaining
 * lease passes, so that the caller looks again exactly then. Safe with every replica doing it at once.
 *
 * A CLAIMED run whose engine had recorded the intent to start its current execution's agent (start-intents.ts) may
 * have a harness that ran: it ends ERROR, retryable, like an INPROGRESS one, and is never requeued in silence.
 *
 * An engine is judged by its lock only if it took the lock since the database server started: a restart releases
 * every engine's lock at once, and until each takes it again only its leases speak for it.
 */
export async function takeBack(db: Kysely<DB>, options: TakebackOptions): Promise<Takeback> {
  const [requeued, lost] = [transition('requeue'), transition('lose')];
  const sole = options.soleEngine ?? null;
  const result = await sql<{ taken: number; errored: string[]; requeued: string[]; next_expiry_in_ms: number | null }>`
    WITH gone AS (
      SELECT e.id FROM engines e
      WHERE e.id IS DISTINCT FROM ${sole}::text AND (${sole}::text IS NOT NULL OR (
        e.locked_at >= pg_postmaster_start_time()
        AND e.heartbeat_at < clock_timestamp() - make_interval(secs => ${options.graceSeconds}::float8)
        AND NOT hangar_engine_locked(e.id)))
    ), expired AS (
      SELECT id, lease_owner IN (SELECT id FROM gone) AS engine_gone,
        state = 'INPROGRESS' OR agent_start_intent IS NOT DISTINCT FROM execution_id AS may_have_run,
        state = 'CLAIMED' AND agent_start_intent IS NOT DISTINCT FROM execution_id AS starting
      FROM runs
      WHERE state IN (${active}) AND (lease_expires_at < clock_timestamp() OR lease_owner IN (SELECT id FROM gone))
      FOR UPDATE SKIP LOCKED
    ), reaped AS (
      UPDATE runs r SET
        state = CASE WHEN expired.may_have_run THEN ${stateList([lost.to])} ELSE ${stateList([requeued.to])} END,
        status_message = CASE WHEN expired.starting THEN ${json(LOST_AS_AGENT_STARTED)}
          WHEN expired.may_have_run THEN ${json(ENGINE_LOST)} ELSE r.status_message END,
        ended_at = CASE WHEN expired.may_have_run THEN clock_timestamp() ELSE r.ended_at END,
        agent_start_intent = CASE WHEN expired.may_have_run THEN r.agent_start_intent END,
        lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false, updated_at = clock_timestamp()
      FROM expired WHERE r.id = expired.id
      RETURNING r.id, r.state, r.execution_id, expired.engine_gone
    ), events AS (
      INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
      SELECT gen_random_uuid()::text, id, execution_id::text,
        CASE WHEN state = ${stateList([lost.to])} THEN ${sql.lit(lost.event)} ELSE ${sql.lit(requeued.event)} END,
        CASE WHEN engine_gone THEN ${json({ reason: 'the engine executing the run is gone' })}
          ELSE ${json({ reason: 'lease expired: the engine executing the run stopped responding' })} END
      FROM reaped
    ), forgotten AS (
      DELETE FROM engines e WHERE e.id IN (SELECT id FROM gone) AND NOT EXISTS (
        SELECT 1 FROM runs r WHERE r.lease_owner = e.id AND r.state IN (${active})
          AND r.id NOT IN (SELECT id FROM reaped))
    )
    SELECT (SELECT count(*) FROM reaped)::int AS taken,
      coalesce((SELECT array_agg(id) FROM reaped WHERE state = ${stateList([lost.to])}), '{}')::text[] AS errored,
      coalesce((SELECT array_agg(id) FROM reaped WHERE state = ${stateList([requeued.to])}), '{}')::text[] AS requeued,
      (SELECT extract(epoch FROM min(r.lease_expires_at) - clock_timestamp()) * 1000 FROM runs r
        WHERE r.state IN (${active}) AND r.id NOT IN (SELECT id FROM reaped))::float8 AS next_expiry_in_ms`.execute(db);
  const row = result.rows[0]!;
  return { taken: row.taken, errored: row.errored, requeued: row.requeued, nextExpiryInMs: row.next_expiry_in_ms };
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
